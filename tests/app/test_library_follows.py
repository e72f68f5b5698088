"""The window follows the library: what another process adds, removes or changes (the CLI, sync,
serve, a second window) shows within seconds, and the user's selection, scroll and filter stay."""

from __future__ import annotations

import os
import subprocess
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

pytest.importorskip("pytestqt")

from app.desk.services import DocDesk  # noqa: E402
from app.desk.settings import Settings  # noqa: E402
from app.gui.main_window import MainWindow  # noqa: E402
from ingest.store.library import Library  # noqa: E402
from tests.conftest import ROOT, SAMPLES  # noqa: E402

SEEN_WITHIN_MS = 10_000


@pytest.fixture
def window(qtbot, tmp_path):
    window = MainWindow(DocDesk(Settings(library=tmp_path / "library")), warm_up=False)
    qtbot.addWidget(window)
    window.show()
    yield window
    window.close()


def _titles(window) -> list[str]:
    model = window.library_pane.model
    return [model.index(row, 0).data() for row in range(model.rowCount())]


def _queue(folder, number: int) -> str:
    """A queued document written by another connection, as a second window's add leaves it."""
    other = Library(folder)
    doc_id = f"{number:064x}"
    other.queue(doc_id, f"/elsewhere/paper-{number}.pdf", 1000 + number, 0.0)
    other.close()
    return doc_id


def test_a_cli_add_shows_in_the_open_window(window, qtbot, tmp_path):
    qtbot.waitUntil(lambda: window.library._shown_version is not None, timeout=SEEN_WITHIN_MS)
    assert window.library_pane.model.rowCount() == 0
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    command = [sys.executable, "-m", "app", "--library", str(tmp_path / "library"), "add"]
    subprocess.run([*command, str(SAMPLES / "docdesk-guide.md")], cwd=ROOT, env=env, check=True, timeout=300)
    # Seen by the window's own polling (this window adds nothing), within the deadline.
    qtbot.waitUntil(lambda: window.library_pane.model.rowCount() == 1, timeout=SEEN_WITHIN_MS)
    assert window.library_pane.row_status(window.library_pane.model.line(0).doc_id) == "indexed"
    assert window.library_label.text().startswith("1 ")  # the counts line too


def test_another_writer_keeps_the_selection_scroll_and_filter(window, qtbot, tmp_path):
    folder = tmp_path / "library"
    for number in range(200):
        _queue(folder, number)
    pane = window.library_pane
    qtbot.waitUntil(lambda: pane.model.rowCount() == 200, timeout=SEEN_WITHIN_MS)
    pane.filter.setText("paper-1")  # a queued document without a title shows its file name
    shown = pane.model.rowCount()
    assert 0 < shown < 200
    pane.select(f"{150:064x}")
    pane.table.scrollTo(pane.model.index(pane.model.row_of(f"{150:064x}"), 0))
    scrolled = pane.table.verticalScrollBar().value()
    assert scrolled > 0
    _queue(folder, 1000)  # a second window adds paper-1000: it passes the filter
    qtbot.waitUntil(lambda: pane.model.rowCount() == shown + 1, timeout=SEEN_WITHIN_MS)
    assert pane.filter.text() == "paper-1"
    assert pane.selected_ids() == [f"{150:064x}"]
    assert pane.table.verticalScrollBar().value() == scrolled
    other = Library(folder)
    other.remove(f"{150:064x}")  # removed elsewhere: its row goes
    other.close()
    qtbot.waitUntil(lambda: pane.model.row_of(f"{150:064x}") is None, timeout=SEEN_WITHIN_MS)
    assert pane.model.rowCount() == shown
