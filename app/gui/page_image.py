"""A page read by OCR, shown as its image with the cited lines drawn over it.

The image is made as OCR saw it (the PDF page rendered, or the image file's frame turned as
its EXIF says, then turned by `rotated` and levelled by `skew`), so the stored line boxes,
fractions of that image, land on the lines they came from.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QImage, QPainter, QPixmap
from PySide6.QtWidgets import QLabel, QScrollArea

from ingest.records import PageOcr

VIEW_PIXELS = 1600  # the long side of the page as shown (zoom is the scroll area's job)


def page_image(path: str, fmt: str, page: int, ocr: PageOcr):
    """The PIL image OCR read for `page` of the file at `path`, at about VIEW_PIXELS."""
    from PIL import Image, ImageOps

    if fmt == "pdf":
        import pypdfium2

        document = pypdfium2.PdfDocument(path)
        try:
            pdf_page = document[page - 1]
            width, height = pdf_page.get_size()
            image = pdf_page.render(scale=VIEW_PIXELS / max(width, height, 1)).to_pil()
        finally:
            document.close()
    else:
        image = Image.open(path)
        image.seek(page - 1)
        image = ImageOps.exif_transpose(image.convert("RGB"))
        image.thumbnail((VIEW_PIXELS, VIEW_PIXELS))
    image = image.convert("RGB")
    if ocr.rotated:
        image = image.rotate(-ocr.rotated, expand=True)
    if ocr.skew:
        image = image.rotate(-ocr.skew, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=(255, 255, 255))
    return image


class PageImageView(QScrollArea):
    """Pages as images, one under the other, fitted to the view's width, the cited lines in yellow."""

    GAP = 12  # pixels between two pages

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.label = QLabel(alignment=Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self.setWidget(self.label)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # always fitted to the width
        self.marked: list[tuple[float, float, float, float]] = []  # of the first page
        self.pages: list[int] = []  # the page numbers shown
        self._full: QPixmap | None = None  # the marked pages at their own resolution
        self._first_mark = 0.0  # where the first marked line is, as a fraction of the full height

    def show_page(self, image, page_text: str, ocr: PageOcr, passage: str) -> None:
        """One page read by OCR, the lines of the passage marked."""
        self.show_pages([(image, line_boxes(ocr, page_text, passage))], [0])

    def show_pages(self, pages: list, numbers: list[int], focus: int | None = None) -> None:
        """`pages`: (PIL image, boxes as fractions of it) each, shown one under the other; the view
        scrolls to the first mark on page `focus` (the cited one), else to the first mark."""
        self.marked = pages[0][1] if pages else []
        self.pages = numbers
        width = max(image.width for image, _ in pages)
        height = sum(image.height for image, _ in pages) + self.GAP * (len(pages) - 1)
        full = QPixmap(width, height)
        full.fill(QColor(128, 128, 128))
        painter = QPainter(full)
        top, first_mark = 0, None
        focus_index = numbers.index(focus) if focus in numbers else None
        for index, (image, boxes) in enumerate(pages):
            if focus_index is not None and index < focus_index:
                boxes_top = None  # marks above the cited page are drawn, not scrolled to
            else:
                boxes_top = True
            qimage = QImage(image.tobytes(), image.width, image.height, image.width * 3, QImage.Format.Format_RGB888)
            left = (width - image.width) // 2
            painter.drawImage(left, top, qimage.copy())  # copy: the bytes above are gone after this call
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(255, 210, 0, 90))  # the same translucent yellow as a text selection
            for x0, y0, x1, y1 in boxes:
                rect = QRectF(left + x0 * image.width, top + y0 * image.height, (x1 - x0) * image.width, (y1 - y0) * image.height)
                painter.drawRect(rect)
                if boxes_top:
                    first_mark = rect.top() if first_mark is None else min(first_mark, rect.top())
            top += image.height + self.GAP
        painter.end()
        self._full = full
        self._first_mark = (first_mark or 0) / max(height, 1)
        self._fit()
        if first_mark is not None:  # once laid out at the view's width: scroll to the first cited line
            QTimer.singleShot(0, self, self._scroll_to_first_mark)  # not after the view is gone

    def _scroll_to_first_mark(self) -> None:
        pixmap = self.label.pixmap()
        if pixmap is not None and not pixmap.isNull():
            self.verticalScrollBar().setValue(int(self._first_mark * pixmap.height()) - 80)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        """The pages at the view's width (a scan is never wider than the viewer, nor blown up past 2x)."""
        if self._full is None:
            return
        width = max(200, self.viewport().width() - 4)
        width = min(width, self._full.width() * 2)
        self.label.setPixmap(self._full.scaledToWidth(width, Qt.TransformationMode.SmoothTransformation))


def line_boxes(ocr: PageOcr, page_text: str, passage: str) -> list[tuple[float, float, float, float]]:
    """Boxes of the lines the passage covers: the passage is found in the page text (it may begin
    on the page before, or end on the next), and every line whose offsets fall in it is marked."""
    start, end = _span(page_text, passage)
    return [(x0, y0, x1, y1) for s, e, x0, y0, x1, y1, _score in ocr.lines if s < end and e > start]


def _span(page_text: str, passage: str) -> tuple[int, int]:
    """Where in the page text the passage lies (its part on this page)."""
    text = passage.strip()
    if not text:
        return 0, 0
    at = page_text.find(text)
    if at >= 0:
        return at, at + len(text)
    # It starts before this page or ends after it: its head or its tail is here.
    for size in (200, 80, 30):
        head, tail = text[:size], text[-size:]
        if len(head) < 10:
            continue
        if (found := page_text.find(tail)) >= 0:
            return 0, found + len(tail)
        if (found := page_text.find(head)) >= 0:
            return found, len(page_text)
    return 0, 0
