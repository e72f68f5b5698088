"""Progress with totals: pages n of N while a PDF is read, OCR page n of N, passages embedded
n of N; in the library pane as a bar with "2/4", and in the CLI's progress line."""

from __future__ import annotations

import io
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

pytest.importorskip("pytestqt")

from app.cli.progress import ProgressBar  # noqa: E402
from app.cli.progress_lines import ProgressLines  # noqa: E402
from ingest.pipeline import Ingestor, Progress  # noqa: E402
from ingest.reader_process import Pages, Reading, read_stream  # noqa: E402
from ingest.store.library import Library  # noqa: E402
from tests.app.test_progress_lines import Terminal  # noqa: E402
from tests.conftest import CORPUS, ROOT  # noqa: E402

FOUR_PAGES = CORPUS / "pdf-samples" / "004-pdflatex-4-pages" / "pdflatex-4-pages.pdf"
FOUR_SCANNED = ROOT / "tests" / "data" / "scans" / "en_linn_rotated_0_90_180_270.pdf"


@pytest.mark.subprocess  # the counts come from the reader process, as in the app
def test_a_pdf_is_read_page_n_of_n_and_embedded_passage_n_of_n(tmp_path, standin_embedder):
    events: list[Progress] = []
    Ingestor(Library(tmp_path / "library"), standin_embedder, on_progress=events.append).add([FOUR_PAGES])
    reading = [(e.pages, e.pages_total) for e in events if e.stage == "reading"]
    assert reading[0] == (0, 4)  # said as soon as the PDF is open, before any page is read
    assert reading[-1] == (4, 4)
    embedding = [(e.passages, e.passages_total) for e in events if e.stage == "embedding"]
    assert embedding and embedding[-1][0] == embedding[-1][1] > 0
    done = next(e for e in events if e.stage == "done")
    assert done.passages == embedding[-1][1] and done.pages == 4


def test_each_page_going_to_ocr_is_said_with_the_total(monkeypatch):
    monkeypatch.setattr("ingest.ocr._detect", lambda image: ([], 0.0))  # the engine's seconds, not its words
    messages: list = []
    read_stream(0, str(FOUR_SCANNED), None, messages.append, ocr=True)
    said = [(m.pages_total, m.ocr_page) for m in messages if isinstance(m, Reading)]
    assert said == [(4, 0), (4, 1), (4, 2), (4, 3), (4, 4)]
    # Pages before an OCR page are sent before it starts: the count is never behind the page said.
    order = [("ocr", m.ocr_page) if isinstance(m, Reading) else ("pages", len(m.pages)) for m in messages[:-1]]
    assert order[0] == ("ocr", 0) and all(kind in ("ocr", "pages") for kind, _ in order)
    assert not any(isinstance(m, Pages) and not m.pages for m in messages)


def test_the_cli_line_and_bar_give_the_totals():
    stream = io.StringIO()
    lines = ProgressLines(stream, every_s=0.0)
    lines(Progress("reading", 0, 1, "/docs/book.pdf", pages=2, passages=0, pages_total=4))
    lines(Progress("reading", 0, 1, "/docs/scan.pdf", pages=2, pages_total=10, ocr_page=3))
    lines(Progress("embedding", 0, 1, "/docs/book.pdf", pages=4, passages=96, passages_total=120))
    assert stream.getvalue().splitlines() == [
        "0/1 files · 0 pages · 0 passages · reading /docs/book.pdf: page 2/4",
        "0/1 files · 0 pages · 0 passages · OCR /docs/scan.pdf: page 3/10",
        "0/1 files · 0 pages · 0 passages · embedding /docs/book.pdf: 96/120 passages",
    ]
    terminal = Terminal()
    ProgressBar(terminal, width=8)(Progress("reading", 0, 1, "/docs/book.pdf", pages=2, pages_total=4))
    assert terminal.getvalue().endswith("████···· 0/1 files · 0 pages · 0 passages reading book.pdf: page 2/4")


class _NoDesk:
    """Enough of the façade for the controller's timers: no library is read here."""

    def index_rebuild(self):
        return None


def test_the_pane_shows_a_bar_with_pages_n_of_n(qtbot):
    from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

    from app.gui.documents_model import PROGRESS, STATUS
    from app.gui.library_controller import LibraryController
    from app.gui.library_pane import LibraryPane
    from tests.app.test_library_pane import _doc

    window = QWidget()
    qtbot.addWidget(window)
    pane = LibraryPane(window)
    controller = LibraryController(_NoDesk(), None, pane, QLabel(), QStatusBar(), window)
    pane.show_documents([_doc(4, status="queued")])
    cell = pane.model.index(0, STATUS)
    controller._progress(Progress("reading", 0, 1, "/papers/paper-4.pdf", pages=2, pages_total=4))
    assert cell.data() == "reading 2/4 p." and cell.data(PROGRESS) == 0.5
    controller._progress(Progress("reading", 0, 1, "/papers/paper-4.pdf", pages=2, pages_total=4, ocr_page=3))
    assert cell.data() == "OCR p. 3/4" and cell.data(PROGRESS) == 0.5
    controller._progress(Progress("reading", 0, 1, "/papers/paper-4.pdf", pages=0, ocr_page=1))
    assert cell.data() == "OCR p. 1" and cell.data(PROGRESS) is None  # an image: no total, no bar
    controller._progress(Progress("embedding", 0, 1, "/papers/paper-4.pdf", pages=4, passages=7, passages_total=14))
    assert cell.data() == "embedding 7/14" and cell.data(PROGRESS) == 0.5
    pane.show_documents([_doc(4, status="queued")])  # a refresh meanwhile keeps the bar
    cell = pane.model.index(0, STATUS)
    assert cell.data() == "embedding 7/14" and cell.data(PROGRESS) == 0.5
    assert pane.table.itemDelegateForColumn(STATUS) is not None  # bars are drawn while files are added
    pane.clear_progress()
    pane.show_documents([_doc(4, status="indexed")])  # done: the bar goes
    assert pane.model.index(0, STATUS).data(PROGRESS) is None
    assert pane.table.itemDelegateForColumn(STATUS) is None  # and so does the delegate that paints them
