"""The citation viewer: the cited document at the cited page, the cited passage highlighted.

A cited PDF passage shows as its page (or pages, where it crosses a page break) with every line
of it marked (app/gui/passage_marks.py); "Whole document" switches to QtPdf's QPdfView at the
cited page, a phrase of the passage found by QPdfSearchModel. A page read by OCR (a scan, a photo)
shows its image with the cited lines drawn over it; both are fitted to the viewer's width. Other
formats show their text, scrolled to the passage, marked in yellow. "Open in system viewer"
hands the file over.
"""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QModelIndex, QPointF, QSize, QUrl
from PySide6.QtGui import QColor, QDesktopServices, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QStackedWidget,
    QTextBrowser,
    QTextEdit,
    QVBoxLayout,
)

from app.gui.screen_fit import fit_dialog
from ingest.cjk import CJK_RANGES
from ingest.records import PageOcr

_CJK = re.compile(f"[{CJK_RANGES}]")


def search_phrase(passage: str, page_text: str = "", words: int = 5) -> str:
    """A few consecutive words of the passage that are on the cited page (a passage may start
    on the page before), to find and highlight in the PDF's own text layer."""
    page = " ".join(page_text.split())
    if _CJK.search(passage):
        # No spaces between words, and the PDF's lines break anywhere: a short run of characters.
        run = "".join(passage.split())
        for start in range(0, max(1, len(run) - 6)):
            chunk = run[start : start + 6]
            if _CJK.match(chunk) and (not page or chunk in "".join(page.split())):
                return chunk
    tokens = re.findall(r"\S+", passage)
    for start in range(0, max(1, len(tokens) - words + 1)):
        chunk = " ".join(tokens[start : start + words])
        if not page or chunk in page:
            return chunk
    return " ".join(tokens[:words])


def _utf16(text: str, index: int) -> int:
    """A Python index into `text` as Qt counts it (UTF-16 units: an emoji is two)."""
    return len(text[:index].encode("utf-16-le")) // 2


class CitationViewer(QDialog):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Source"))
        fit_dialog(self, QSize(820, 900))  # less on a small screen
        self.title = QLabel()
        self.stack = QStackedWidget()
        self.text = QTextBrowser()
        self.stack.addWidget(self.text)
        self.pdf_view = None  # QtPdf is loaded on the first PDF
        self.image_view = None  # made for the first OCR'd page
        self.open_external = QPushButton(self.tr("Open in system viewer"))
        self.open_external.clicked.connect(self._open_external)
        self.whole = QPushButton(self.tr("Whole document"))  # the cited pages <-> the whole PDF
        self.whole.setCheckable(True)
        self.whole.toggled.connect(self._show_whole)
        self.whole.hide()
        row = QHBoxLayout()
        row.addWidget(self.title, 1)
        row.addWidget(self.whole)
        row.addWidget(self.open_external)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.stack, 1)
        self.path = ""
        self.page = 1
        self.highlighted = ""
        self._result_chosen = False

    def show_source(
        self,
        path: str,
        title: str,
        page: int,
        passage: str,
        pages_text: list[str],
        fmt: str,
        page_text: str = "",
        ocr: PageOcr | None = None,
        marked: list | None = None,
    ) -> None:
        """`marked`: the passage's PDF pages with its lines marked (app/gui/passage_marks.py)."""
        self.path, self.page = path, page
        page_label = self.tr("page %1").replace("%1", str(page))
        self.title.setText(f"<b>{title}</b> — {page_label}")
        on_image = ocr is not None and Path(path).is_file()
        self.whole.blockSignals(True)
        self.whole.setChecked(False)
        self.whole.blockSignals(False)
        self.whole.setVisible(bool(marked))
        if on_image and self._show_page_image(path, fmt, page, ocr, passage, page_text):
            pass  # a scan or photo: its image, the cited lines marked
        elif fmt == "pdf" and Path(path).is_file():
            self._show_pdf(path, page, search_phrase(passage, page_text))
            if marked:  # the cited pages first, every line of the passage marked
                self._show_marked(marked)
        else:
            self._show_text(pages_text, passage)
        self.show()
        self.raise_()

    def _show_pdf(self, path: str, page: int, phrase: str) -> None:
        from PySide6.QtPdf import QPdfDocument, QPdfSearchModel
        from PySide6.QtPdfWidgets import QPdfView

        if self.pdf_view is None:
            self.pdf_document = QPdfDocument(self)
            self.pdf_view = QPdfView()
            self.pdf_view.setDocument(self.pdf_document)
            self.pdf_view.setPageMode(QPdfView.PageMode.MultiPage)
            self.pdf_view.setZoomMode(QPdfView.ZoomMode.FitToWidth)
            self.search = QPdfSearchModel(self)
            self.search.setDocument(self.pdf_document)
            self.search.rowsInserted.connect(self._select_result)  # it searches page by page, in the background
            self.pdf_view.setSearchModel(self.search)
            self.stack.addWidget(self.pdf_view)
        self.pdf_document.load(path)
        self.stack.setCurrentWidget(self.pdf_view)
        self.pdf_view.pageNavigator().jump(page - 1, QPointF(), 0)
        self.highlighted = phrase
        self._result_chosen = False
        self.search.setSearchString(self.highlighted)
        self._select_result()

    def _image_view(self):
        from app.gui.page_image import PageImageView

        if self.image_view is None:
            self.image_view = PageImageView()
            self.stack.addWidget(self.image_view)
        return self.image_view

    def _show_marked(self, marked: list) -> None:
        view = self._image_view()
        self.stack.setCurrentWidget(view)
        view.show_pages([(p.image, p.boxes) for p in marked], [p.number for p in marked], focus=self.page)
        numbers = [p.number for p in marked]
        if len(numbers) > 1:
            pages = self.tr("pages %1–%2").replace("%1", str(numbers[0])).replace("%2", str(numbers[-1]))
            self.title.setText(self.title.text().rsplit(" — ", 1)[0] + f" — {pages}")

    def _show_whole(self, whole: bool) -> None:
        if self.pdf_view is None or self.image_view is None:
            return
        self.stack.setCurrentWidget(self.pdf_view if whole else self.image_view)
        if whole:
            self.pdf_view.pageNavigator().jump(self.page - 1, QPointF(), 0)

    def _show_page_image(self, path: str, fmt: str, page: int, ocr: PageOcr, passage: str, page_text: str) -> bool:
        """The page image with the cited lines marked; False if the file cannot be rendered now."""
        from app.gui.page_image import page_image

        try:
            image = page_image(path, fmt, page, ocr)
        except Exception:  # changed or unreadable since it was added: fall back to the text
            return False
        view = self._image_view()
        self.stack.setCurrentWidget(view)
        view.show_page(image, page_text, ocr, passage)
        self.highlighted = passage
        return True

    def matches(self) -> int:
        return self.search.rowCount(QModelIndex()) if self.pdf_view is not None else 0

    def _select_result(self, *_args) -> None:
        """Of the matches found so far, select the first on the cited page: it is highlighted."""
        if self._result_chosen:
            return
        for i in range(self.matches()):
            if self.search.resultAtIndex(i).page() == self.page - 1:
                self.pdf_view.setCurrentSearchResultIndex(i)
                self.pdf_view.pageNavigator().jump(self.search.resultAtIndex(i).page(), QPointF(), 0)
                self._result_chosen = True
                return

    def current_page(self) -> int:
        """1-based page shown (PDF), or the cited page for text."""
        if self.pdf_view is not None and self.stack.currentWidget() is self.pdf_view:
            return self.pdf_view.pageNavigator().currentPage() + 1
        return self.page

    def _show_text(self, pages_text: list[str], passage: str) -> None:
        """The document's text, the passage marked in yellow (an extra selection: it shows whether
        or not the view has the focus) and scrolled to."""
        from app.gui.passage_marks import find_passage

        self.stack.setCurrentWidget(self.text)
        text = "\n\n".join(pages_text)
        self.text.setPlainText(text)
        found = find_passage(text, passage)
        self.highlighted = text[found.start : found.end] if found else ""
        self.text.setExtraSelections([])
        if found is None:
            self.text.moveCursor(QTextCursor.Start)
            return
        mark = QTextEdit.ExtraSelection()
        mark.cursor = QTextCursor(self.text.document())
        mark.cursor.setPosition(_utf16(text, found.start))
        mark.cursor.setPosition(_utf16(text, found.end), QTextCursor.KeepAnchor)
        mark.format = QTextCharFormat()
        mark.format.setBackground(QColor(255, 210, 0, 110))
        self.text.setExtraSelections([mark])
        cursor = QTextCursor(self.text.document())
        cursor.setPosition(_utf16(text, found.end))  # the end first, then the start: the passage's top shows
        self.text.setTextCursor(cursor)
        self.text.ensureCursorVisible()
        cursor.setPosition(_utf16(text, found.start))
        self.text.setTextCursor(cursor)
        self.text.ensureCursorVisible()

    def marked_text(self) -> str:
        """The text the yellow mark covers in the text view ("" when none)."""
        marks = self.text.extraSelections()
        return marks[0].cursor.selectedText().replace("\u2029", "\n") if marks else ""

    def _open_external(self) -> None:
        if self.path:
            QDesktopServices.openUrl(QUrl.fromLocalFile(self.path))
