"""Opens a document of the library in the citation viewer, at a page, with a passage marked."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMessageBox, QWidget

from ..services import DocDesk
from .ops import Op
from .tasks import Workers
from .viewer import CitationViewer


class DocumentOpener(QObject):
    def __init__(self, desk: DocDesk, workers: Workers, viewer: CitationViewer, window: QWidget) -> None:
        super().__init__(window)
        self.desk, self.workers, self.viewer, self.window = desk, workers, viewer, window

    def open(self, doc_id: str, page: int, passage: str | None = None) -> None:
        """`passage` None: the page's own text is marked (a summary's page link)."""

        def read(_ctx):
            doc = self.desk.document(doc_id)
            if doc is None:
                return None, [], None
            return doc, self.desk.pages(doc_id), self.desk.ocr_page(doc_id, page)

        Op(self.workers, "store", "open", read).success(lambda found: self._show(*found, page, passage)).run()

    def _show(self, doc, pages, ocr, page: int, passage: str | None) -> None:
        if doc is None:
            QMessageBox.information(self.window, "DocDesk", self.tr("That document is no longer in the library."))
            return
        on_page = next((p.text for p in pages if p.number == page), "")
        texts = [] if doc.format == "pdf" else [p.text for p in pages]
        title = doc.title or Path(doc.path).name
        self.viewer.show_source(
            doc.path, title, page, on_page if passage is None else passage, texts, doc.format, on_page, ocr
        )
