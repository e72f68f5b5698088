"""The library's embedder is the library's own (issue 39, item 5): a DocDesk whose setting names a
model the library was converted away from searches it as it is and never converts it back or adds
to it; a new model is a deliberate change and converts it; a re-embed stopped by a full disk
leaves a library that still searches. Real libraries (SQLite and FAISS on disk) and the tests'
stand-in embedders under two names; the full disk is a real ENOSPC from a tiny tmpfs in
tests/reliability (here: the façade's handling of the error SQLite raises)."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from app.desk.services import DocDesk
from app.desk.settings import Settings
from ingest.errors import EmbedderLeftBehind
from ingest.store.embedder_owner import models_left, own_model
from tests.standin_embedder import HashingEmbedder

NOTES = {
    "tides.md": "# Tides\n\nTides rise and fall twice a day with the pull of the moon.",
    "bees.md": "# Bees\n\nBees carry pollen from flower to flower in the spring.",
    "kettle.md": "# Kettles\n\nThe kettle whistles when the water boils on the stove.",
}


def desk(library: Path, name: str) -> DocDesk:
    return DocDesk(Settings(library=library), embedder=HashingEmbedder(name=name))


def counts(library: Path) -> dict[str, int]:
    with sqlite3.connect(library / "library.sqlite") as conn:
        return dict(conn.execute("SELECT embed_model, count(*) FROM documents GROUP BY embed_model").fetchall())


@pytest.fixture
def docs(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in NOTES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_a_docdesk_with_the_old_setting_never_converts_the_library_back(tmp_path, docs, caplog):
    library = tmp_path / "library"
    old = desk(library, "old-model")
    old.add([docs])
    old.close()
    new = desk(library, "new-model")
    assert new.reembed() == len(NOTES)  # a model the library never had: a deliberate change
    assert own_model(new.library) == "new-model" and models_left(new.library) == ["old-model"]
    new.close()

    behind = desk(library, "old-model")  # a second process still configured with the old model
    with caplog.at_level(logging.WARNING):
        found = behind.search("When do tides rise?")
    assert found.hits and "tides" in found.hits[0].passage.path  # keywords still find it
    assert "does not convert it back" in caplog.text
    assert counts(library) == {"new-model": len(NOTES)}  # nothing converted back
    extra = tmp_path / "more.md"
    extra.write_text("# Cats\n\nCats sleep beside warm fireplaces.", encoding="utf-8")
    with pytest.raises(EmbedderLeftBehind, match="set the embedding model to new-model"):
        behind.add([extra])
    assert counts(library) == {"new-model": len(NOTES)} and own_model(behind.library) == "new-model"
    behind.close()

    again = desk(library, "new-model")  # the library's own model: nothing to do, no ping-pong
    assert again.reembed() == 0 and again.search("pollen").hits
    again.close()


def test_a_reembed_stopped_by_a_full_disk_leaves_a_library_that_searches(tmp_path, docs, caplog, monkeypatch):
    library = tmp_path / "library"
    old = desk(library, "old-model")
    old.add([docs])
    old.close()
    new = desk(library, "new-model")
    from ingest.store.library import Library

    real = Library.replace_content
    done = []

    def full_after_one(self, *args, **kwargs):
        if done:  # what SQLite raises on ENOSPC, codes and all
            full = sqlite3.OperationalError("database or disk is full")
            full.sqlite_errorcode, full.sqlite_errorname = sqlite3.SQLITE_FULL, "SQLITE_FULL"
            raise full
        done.append(args[0])
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Library, "replace_content", full_after_one)
    with caplog.at_level(logging.WARNING):
        first = new.search("When do tides rise?")
        second = new.search("Who carries pollen?")  # not re-embedding again on every search
    assert first.hits and second.hits
    assert "re-embedding stopped" in caplog.text and "2 documents are still embedded" in caplog.text
    assert caplog.text.count("re-embedding stopped") == 1
    assert counts(library) == {"new-model": 1, "old-model": 2}
    monkeypatch.setattr(Library, "replace_content", real)
    new.close()
    resumed = desk(library, "new-model")  # room again: the next opening finishes the conversion
    assert resumed.reembed() == 2 and counts(library) == {"new-model": 3}
    resumed.close()


def test_choosing_a_model_the_library_left_on_purpose_takes_it_back(tmp_path, docs):
    library = tmp_path / "library"
    old = desk(library, "old-model")
    old.add([docs])
    old.close()
    new = desk(library, "new-model")
    new.reembed()
    new.close()
    again = desk(library, "old-model")
    assert again.reembed() == 0 and counts(library) == {"new-model": len(NOTES)}  # not by itself
    assert again.reembed(deliberate=True) == len(NOTES)  # `docdesk reembed`
    assert counts(library) == {"old-model": len(NOTES)} and models_left(again.library) == ["new-model"]
    again.close()
