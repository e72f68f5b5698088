"""Reading inline (no reader process): a cancel raised while pages are handed over stops the add;
it is not mistaken for a reader crash that fails the document."""

from __future__ import annotations

import threading

from ingest.pipeline import Ingestor
from ingest.store.library import Library
from tests.conftest import corpus_path


def test_cancel_while_reading_inline_leaves_the_document_unfailed(tmp_path, standin_embedder):
    library = Library(tmp_path / "library")
    cancel = threading.Event()

    def on_progress(progress) -> None:
        if progress.stage == "reading":
            cancel.set()  # the next page handed over raises the pipeline's stop

    try:
        book = corpus_path("pdf-samples", "009-pdflatex-geotopo", "GeoTopo-komprimiert.pdf")
        ingestor = Ingestor(library, standin_embedder, on_progress, cancel, read_in_subprocess=False)
        report = ingestor.add([book])
        assert report.failed == []
        assert report.added == []
        assert all(doc.status != "failed" for doc in library.documents())
    finally:
        library.close()
