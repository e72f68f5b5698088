"""The citation viewer: the cited document at the cited page, the cited passage highlighted.

PDFs render in QtPdf's QPdfView with the passage found by QPdfSearchModel; a page read by OCR
(a scan, a photo) shows its image with the cited lines drawn over it; other formats show their
text, scrolled to the passage and selected. "Open in system viewer" hands the file over.
"""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QModelIndex, QPointF, QSize, QUrl
from PySide6.QtGui import QDesktopServices, QTextCursor, QTextDocument
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPushButton, QStackedWidget, QTextBrowser, QVBoxLayout

from ingest.cjk import CJK_RANGES
from ingest.records import PageOcr

from .screen_fit import fit_dialog

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
        row = QHBoxLayout()
        row.addWidget(self.title, 1)
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
    ) -> None:
        self.path, self.page = path, page
        page_label = self.tr("page %1").replace("%1", str(page))
        self.title.setText(f"<b>{title}</b> — {page_label}")
        on_image = ocr is not None and Path(path).is_file()
        if on_image and self._show_page_image(path, fmt, page, ocr, passage, page_text):
            pass  # a scan or photo: its image, the cited lines marked
        elif fmt == "pdf" and Path(path).is_file():
            self._show_pdf(path, page, search_phrase(passage, page_text))
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

    def _show_page_image(self, path: str, fmt: str, page: int, ocr: PageOcr, passage: str, page_text: str) -> bool:
        """The page image with the cited lines marked; False if the file cannot be rendered now."""
        from .page_image import PageImageView, page_image

        try:
            image = page_image(path, fmt, page, ocr)
        except Exception:  # changed or unreadable since it was added: fall back to the text
            return False
        if self.image_view is None:
            self.image_view = PageImageView()
            self.stack.addWidget(self.image_view)
        self.image_view.show_page(image, page_text, ocr, passage)
        self.stack.setCurrentWidget(self.image_view)
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
        self.stack.setCurrentWidget(self.text)
        self.text.setPlainText("\n\n".join(pages_text))
        self.highlighted = search_phrase(passage)
        self.text.moveCursor(QTextCursor.Start)
        if not self.text.find(self.highlighted):
            self.text.find(self.highlighted.split(" ")[0], QTextDocument.FindFlag(0))
        self.text.ensureCursorVisible()

    def _open_external(self) -> None:
        if self.path:
            QDesktopServices.openUrl(QUrl.fromLocalFile(self.path))
