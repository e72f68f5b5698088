"""Opens a document of the library in the citation viewer, at a page, with a passage marked."""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMessageBox, QWidget

from app.desk.services import DocDesk
from app.gui.ops import Op
from app.gui.tasks import Workers
from app.gui.viewer import CitationViewer

log = logging.getLogger(__name__)


class DocumentOpener(QObject):
    def __init__(self, desk: DocDesk, workers: Workers, viewer: CitationViewer, window: QWidget) -> None:
        super().__init__(window)
        self.desk, self.workers, self.viewer, self.window = desk, workers, viewer, window

    def open(self, doc_id: str, page: int, passage: str | None = None) -> None:
        """`passage` None: the page's own text is marked (a summary's page link)."""

        def read(_ctx):
            doc = self.desk.document(doc_id)
            if doc is None:
                return None, [], None, []
            ocr = self.desk.ocr_page(doc_id, page)
            return doc, self.desk.pages(doc_id), ocr, self._marked_pdf_pages(doc, page, passage, ocr)

        Op(self.workers, "store", "open", read).success(lambda found: self._show(*found, page, passage)).run()

    @staticmethod
    def _marked_pdf_pages(doc, page: int, passage: str | None, ocr) -> list:
        """A cited PDF passage's pages with its lines marked (rendered here, on the worker)."""
        if doc.format != "pdf" or ocr is not None or not passage or not Path(doc.path).is_file():
            return []
        from app.gui.passage_marks import pdf_passage_pages

        try:
            return pdf_passage_pages(doc.path, page, passage)
        except Exception:  # changed or unreadable since it was added: the PDF view shows what it can
            log.info("could not mark the passage in %s", doc.path, exc_info=True)
            return []

    def _show(self, doc, pages, ocr, marked, page: int, passage: str | None) -> None:
        if doc is None:
            QMessageBox.information(self.window, "DocDesk", self.tr("That document is no longer in the library."))
            return
        on_page = next((p.text for p in pages if p.number == page), "")
        texts = [] if doc.format == "pdf" else [p.text for p in pages]
        title = doc.title or Path(doc.path).name
        self.viewer.show_source(
            doc.path, title, page, on_page if passage is None else passage, texts, doc.format, on_page, ocr, marked
        )
