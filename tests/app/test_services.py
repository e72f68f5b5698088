"""The façade in one long-lived process, as the window uses it: what is added is found by meaning
at once, what is removed is gone at once, and a write from another process is seen too. Finding
by meaning needs the real model (`models`); the façade on a stand-in embedder and the fake
backend is tests/app/test_desk_injection.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.desk.services import DocDesk
from app.desk.settings import Settings
from ingest.pipeline import Ingestor
from ingest.store.library import Library
from tests.conftest import marks

KETTLE = "The kettle whistles when the water reaches its boiling point on the stove."
CATS = "Cats sleep peacefully beside warm fireplaces during the long winter evenings."
QUERY = "feline napping near a hearth"  # shares no word with CATS: only the dense channel finds it


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _dense_titles(desk: DocDesk, query: str) -> list[str]:
    """File names of the hits the embedding channel found (the keyword channel cannot find CATS)."""
    return [Path(hit.passage.path).stem for hit in desk.search(query, k=5).hits if hit.dense_rank is not None]


@pytest.fixture
@marks("subprocess")  # desk.add reads in the reader process
def desk(tmp_path, embedder):
    desk = DocDesk(Settings(library=tmp_path / "library"), embedder=embedder)  # the session's loaded model
    yield desk
    desk.close()


def test_added_document_is_found_by_meaning_in_the_same_process(desk, tmp_path):
    desk.add([_write(tmp_path / "kettle.txt", KETTLE)])
    assert _dense_titles(desk, QUERY) == ["kettle"]  # the index is loaded now
    desk.add([_write(tmp_path / "cats.txt", CATS)])
    assert _dense_titles(desk, QUERY)[0] == "cats"
    assert Path(desk.search(QUERY, k=5).hits[0].passage.path).stem == "cats"


def test_removed_document_is_gone_from_dense_search_at_once(desk, tmp_path):
    desk.add([_write(tmp_path / "kettle.txt", KETTLE), _write(tmp_path / "cats.txt", CATS)])
    assert _dense_titles(desk, QUERY)[0] == "cats"
    desk.remove(str(tmp_path / "cats.txt"))  # its only path: the document goes
    assert _dense_titles(desk, QUERY) == ["kettle"]


def test_a_document_added_by_another_process_is_found(desk, tmp_path, embedder):
    desk.add([_write(tmp_path / "kettle.txt", KETTLE)])
    assert _dense_titles(desk, QUERY) == ["kettle"]
    # A second connection to the same file, as `docdesk add` beside the open window would be.
    other = Library(desk.settings.library)
    try:
        Ingestor(other, embedder).add([_write(tmp_path / "cats.txt", CATS)])
    finally:
        other.close()
    assert _dense_titles(desk, QUERY)[0] == "cats"


def test_removing_one_path_of_twin_files_keeps_the_other(desk, tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, b = _write(tmp_path / "a" / "cats.txt", CATS), _write(tmp_path / "b" / "cats.txt", CATS)
    desk.add([a, b])  # the same bytes twice: one document with two paths
    assert len(desk.documents()) == 1
    doc, kept = desk.remove(str(a))
    assert kept is not None and kept.id == doc.id and kept.path == str(b)
    assert _dense_titles(desk, QUERY) == ["cats"]  # still found, at the path that still holds it
    assert desk.library.file_path(str(a)) is None and desk.library.file_path(str(b)) == str(b)
    _, gone = desk.remove(str(b))
    assert gone is None and desk.documents() == []
