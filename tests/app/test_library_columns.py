"""A library you can read: every column visible at first sight in a 1366 px window, a short type
from the format table, the file name where titles collide."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

pytest.importorskip("pytestqt")

from app.desk.services import DocDesk  # noqa: E402
from app.desk.settings import Settings  # noqa: E402
from app.gui.documents_model import FORMAT, STATUS, TITLE  # noqa: E402
from app.gui.library_pane import LibraryPane  # noqa: E402
from app.gui.main_window import MainWindow  # noqa: E402
from tests.app.test_library_pane import _doc  # noqa: E402


def _guides():
    pdf = _doc(1, title="DocDesk User Guide")
    md = _doc(2, title="DocDesk User Guide")
    md = type(md)(**{**md.__dict__, "path": "/samples/docdesk-guide.md", "format": "markdown"})
    pdf = type(pdf)(**{**pdf.__dict__, "path": "/samples/docdesk-guide.pdf"})
    return [pdf, md, _doc(3, title="Notes")]


def test_every_column_is_visible_in_a_1366_px_window(qtbot, tmp_path, monkeypatch):
    # A first start: window.ini lies beside the config, which the session's other tests share.
    monkeypatch.setenv("DOCDESK_CONFIG", str(tmp_path / "config.toml"))
    window = MainWindow(DocDesk(Settings(library=tmp_path / "library")), warm_up=False)
    qtbot.addWidget(window)
    window.resize(1366, 740)
    window.show()
    qtbot.waitExposed(window)
    pane = window.library_pane
    pane.show_documents(_guides())
    qtbot.wait(50)  # the splitter's sizes are set once the window is shown
    table, header = pane.table, pane.table.horizontalHeader()
    for column in range(pane.model.columnCount()):
        text = pane.model.headerData(column, header.orientation())
        assert header.sectionSize(column) > header.fontMetrics().horizontalAdvance(text), text
        right = header.sectionViewportPosition(column) + header.sectionSize(column)
        assert right <= table.viewport().width(), f"{text} is off to the right"
    assert header.sectionSize(TITLE) >= 120  # the title column reads, not a clipped "Fo…"
    assert pane.width() >= pane.sizeHint().width() - 1 or pane.width() >= 0.4 * window.width()
    window.close()


def test_titles_that_collide_show_their_file_name_and_types_are_short(qtbot):
    pane = LibraryPane()
    qtbot.addWidget(pane)
    pane.show_documents(_guides())
    cells = {pane.model.index(row, TITLE).data(): pane.model.index(row, FORMAT).data() for row in range(3)}
    assert cells == {
        "DocDesk User Guide — docdesk-guide.pdf": "PDF",
        "DocDesk User Guide — docdesk-guide.md": "MD",
        "Notes": "PDF",
    }
    pane.filter.setText("guide.md")  # the file name shown can be filtered on
    assert pane.model.rowCount() == 1


def test_the_status_column_holds_a_progress_text(qtbot):
    pane = LibraryPane()
    qtbot.addWidget(pane)
    width = pane.table.horizontalHeader().sectionSize(STATUS)
    assert width > pane.table.fontMetrics().horizontalAdvance("reading 888/888 p.")
    assert pane.sizeHint().width() > pane.minimumSizeHint().width() > 200
