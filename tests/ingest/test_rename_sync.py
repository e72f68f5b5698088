"""Renames are not re-reads: a file renamed or moved within a watched folder keeps its document,
its pages and its vectors; sync links the new path without reading or embedding it again."""

from __future__ import annotations

import pytest

from ingest.pipeline import Ingestor
from ingest.store.library import Library

pytestmark = pytest.mark.models


def test_a_renamed_and_a_moved_file_are_linked_not_read(tmp_path, embedder):
    folder = tmp_path / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "kettle.txt").write_text("The kettle whistles when the water boils on the stove.", encoding="utf-8")
    (folder / "tides.txt").write_text("Tides rise and fall twice a day with the pull of the moon.", encoding="utf-8")
    library = Library(tmp_path / "lib")
    try:
        added = Ingestor(library, embedder).add([folder]).added
        ids = {entry["path"].rsplit("/", 1)[-1]: entry["doc_id"] for entry in added}
        before = {doc.id: doc.passages for doc in library.documents()}
        (folder / "kettle.txt").rename(folder / "kettle-renamed.txt")
        (folder / "tides.txt").rename(folder / "sub" / "tides.txt")
        stages: list[str] = []
        report = Ingestor(library, embedder, on_progress=lambda p: stages.append(p.stage)).sync()
        assert report.added == [] and report.removed == [] and report.failed == []
        reasons = {entry["path"].rsplit("/", 1)[-1]: entry["reason"] for entry in report.skipped}
        assert reasons["kettle-renamed.txt"] == f"moved from {folder / 'kettle.txt'}: not read again"
        assert reasons["tides.txt"] == f"moved from {folder / 'tides.txt'}: not read again"
        assert not {"reading", "embedding", "writing"} & set(stages), stages
        docs = {doc.id: doc for doc in library.documents()}
        assert {doc.id: doc.passages for doc in docs.values()} == before  # the same documents, whole
        assert docs[ids["kettle.txt"]].path == str(folder / "kettle-renamed.txt")
        assert docs[ids["tides.txt"]].path == str(folder / "sub" / "tides.txt")
        assert library.file(str(folder / "kettle.txt")) is None
        (folder / "sub" / "tides.txt").unlink()  # a file deleted for good still goes
        again = Ingestor(library, embedder).sync()
        assert [entry["doc_id"] for entry in again.removed] == [ids["tides.txt"]]
    finally:
        library.close()
