"""The library pane's table at the size of a real library: filter, sort, progress and selection."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402

from app.gui.library_pane import DOC_ID, LibraryPane  # noqa: E402
from ingest.store.rows import DocumentRow  # noqa: E402


def _doc(n: int, status: str = "indexed", title: str | None = None) -> DocumentRow:
    return DocumentRow(
        id=f"{n:064x}",
        path=f"/papers/paper-{n}.pdf",
        title=title if title is not None else f"Paper {n}",
        format="pdf",
        pages=n % 250,
        synthetic_pages=False,
        size=1000 + n,
        mtime=0.0,
        language="en",
        status=status,
        reason="",
        warnings=[],
        embed_model="all-MiniLM-L6-v2",
        added_at=1.7e9 + n,
        indexed_at=None,
    )


@pytest.fixture
def pane(qtbot):
    view = LibraryPane()
    qtbot.addWidget(view)
    return view


def _titles(view) -> list[str]:
    return [view.model.index(row, 0).data() for row in range(view.model.rowCount())]


def test_ten_thousand_documents_filter_as_you_type_and_keep_the_selection(pane):
    pane.show_documents([_doc(n) for n in range(10_000)] + [_doc(10_000, title="驱动版本说明")])
    assert pane.model.rowCount() == 10_001
    pane.select(f"{9_990:064x}")
    pane.filter.setText("paper 999")
    assert sorted(_titles(pane)) == sorted(["Paper 999"] + [f"Paper {n}" for n in range(9_990, 10_000)])
    assert pane.selected_ids() == [f"{9_990:064x}"]  # still selected after the filter narrowed the rows
    pane.filter.setText("驱动")
    assert _titles(pane) == ["驱动版本说明"]
    pane.filter.setText("PAPER 12")  # case does not matter
    assert "Paper 12" in _titles(pane) and "Paper 120" in _titles(pane)
    pane.filter.setText("")
    assert pane.model.rowCount() == 10_001


def test_pages_sort_as_numbers_and_progress_reaches_the_row_of_its_path(pane):
    pane.show_documents([_doc(n, status="queued") for n in (3, 20, 100)])
    pane.table.sortByColumn(2, Qt.DescendingOrder)
    assert [pane.model.index(r, 2).data() for r in range(3)] == ["100", "20", "3"]
    pane.show_progress("/papers/paper-20.pdf", "reading page 2")
    assert pane.row_status(f"{20:064x}") == "reading page 2"
    row = pane.model.row_of(f"{20:064x}")
    assert pane.model.index(row, 3).data() == "reading page 2"
    assert pane.model.index(row, 0).data(DOC_ID) == f"{20:064x}"
    # A refresh while it is still being read keeps the live status, not "queued".
    pane.show_documents([_doc(n, status="queued") for n in (3, 20, 100)])
    assert pane.row_status(f"{20:064x}") == "reading page 2"
    assert pane.row_status(f"{3:064x}") == "queued"


def test_titles_sort_as_people_number_them(pane):
    titles = ["Paper 10", "paper 9", "Paper 100", "Paper 9a", "附录 2", "附录 10", "Notes"]
    pane.show_documents([_doc(n, title=title) for n, title in enumerate(titles)])
    pane.table.sortByColumn(0, Qt.AscendingOrder)
    assert _titles(pane) == ["Notes", "paper 9", "Paper 9a", "Paper 10", "Paper 100", "附录 2", "附录 10"]
    pane.table.sortByColumn(0, Qt.DescendingOrder)
    assert _titles(pane) == ["附录 10", "附录 2", "Paper 100", "Paper 10", "Paper 9a", "paper 9", "Notes"]
    pane.show_documents([_doc(1, title="9" * 5000), _doc(2, title="Paper 1")])  # past int()'s digit limit
    assert _titles(pane) == ["Paper 1", "9" * 5000]
