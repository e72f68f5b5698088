"""A background build of the dense index is shown, and a one-shot command waits for it instead of
cancelling it at exit (the threshold lowered as in tests/ingest/test_approximate_index.py). The
façade is given a stand-in embedder of the library's own model name and width, so nothing is
re-embedded and no model loads."""

from __future__ import annotations

import os

import numpy as np

from app.cli.index_wait import finish_index_rebuild
from app.desk.services import DocDesk
from app.desk.settings import Settings
from ingest.store import ann
from ingest.store.vectors import INDEX_NAME
from tests.ingest.test_approximate_index import DIM, MODEL, _add_documents, small_thresholds  # noqa: F401
from tests.standin_embedder import HashingEmbedder

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before the window test's QApplication


def desk_of_the_librarys_model(folder) -> DocDesk:
    return DocDesk(Settings(library=folder), embedder=HashingEmbedder(name=MODEL, dim=DIM))


def test_a_command_finishes_the_index_build_it_started_and_says_so(tmp_path, small_thresholds, capsys):  # noqa: F811
    desk = desk_of_the_librarys_model(tmp_path / "library")
    try:
        _add_documents(desk.library, 0, 25, np.random.default_rng(3))
        assert desk.index_rebuild() is None  # the index is not loaded yet
        assert desk.vectors.index() is None  # no file: built in the background
        progress = desk.index_rebuild()
        assert progress is not None and progress.total == 2_500
        finish_index_rebuild(desk)
        assert "building the search index for 2,500 passages" in capsys.readouterr().err
        assert desk.index_rebuild() is None
        assert ann.is_approximate(desk.vectors.index()) and desk.vectors.index().ntotal == 2_500
        assert (tmp_path / "library" / INDEX_NAME).exists()
    finally:
        desk.close()


def test_without_an_index_build_nothing_waits_and_nothing_is_loaded(tmp_path, capsys):
    desk = DocDesk(Settings(library=tmp_path / "library"))
    try:
        finish_index_rebuild(desk)
        assert "vectors" not in desk.__dict__  # asking did not load the index (nor the model)
        assert capsys.readouterr().err == ""
    finally:
        desk.close()


def test_the_window_shows_the_index_build_beside_the_counts_until_it_is_done(tmp_path, small_thresholds, qtbot):  # noqa: F811
    from app.gui.main_window import MainWindow

    desk = desk_of_the_librarys_model(tmp_path / "library")
    _add_documents(desk.library, 0, 25, np.random.default_rng(4))
    window = MainWindow(desk, warm_up=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: "25 documents" in window.library_label.text(), timeout=60_000)
    # Holding the index's lock keeps the finished build from being taken in (a few thousand
    # vectors train in well under the second between two looks of the window).
    with desk.vectors._lock:
        assert desk.vectors.index() is None  # the build starts
        qtbot.waitUntil(lambda: "building the search index" in window.library_label.text(), timeout=10_000)
        assert window.library_label.text().startswith("25 documents · 2500 passages · building the search index")
    assert desk.wait_for_index_rebuild(60)
    # The window looks every 1.5 s, on its store worker: on a loaded machine that can take a while.
    qtbot.waitUntil(lambda: window.library_label.text() == "25 documents · 2500 passages", timeout=60_000)
    window.close()
