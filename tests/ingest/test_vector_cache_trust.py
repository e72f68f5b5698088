"""The vector cache is trusted only when it is the file this library wrote: one copied from
another library, one older than a database restored from a backup, and one whose length field
is damaged are all rebuilt from SQLite, and every passage is found again by its own vector."""

from __future__ import annotations

import shutil
import struct

import numpy as np
import pytest

from ingest.pipeline import Ingestor
from ingest.store.library import Library
from ingest.store.vectors import INDEX_NAME, VectorIndex

pytestmark = pytest.mark.models

NOTES = [
    "Kettles whistle when water boils on the stove.",
    "Cats sleep beside warm fireplaces in winter.",
    "Tides rise and fall with the pull of the moon.",
    "Bees carry pollen from flower to flower in spring.",
]
OTHER = [
    "Glaciers carve valleys over thousands of years.",
    "Violins are tuned in fifths, from G to E.",
    "Bread rises because yeast makes carbon dioxide.",
    "Comets grow tails when they come near the sun.",
]


def _library(folder, embedder, texts, tmp_path, name):
    source = tmp_path / f"{name}-docs"
    source.mkdir()
    for i, text in enumerate(texts):
        (source / f"{name}-{i}.txt").write_text(text, encoding="utf-8")
    library = Library(folder)
    Ingestor(library, embedder).add([source])
    return library


def _each_found_by_its_own_vector(library, embedder) -> bool:
    vectors = VectorIndex(library, embedder)
    ids = library.passage_ids(embedder.name)
    for batch_ids, blobs in library.embeddings(ids):
        for passage_id, blob in zip(batch_ids, blobs, strict=True):
            best = vectors.search(np.frombuffer(blob, dtype=np.float32), 1)
            if not best or best[0][0] != passage_id:
                return False
    return vectors.index().ntotal == len(ids)


def test_a_cache_copied_from_another_library_is_rebuilt(tmp_path, embedder):
    ours = _library(tmp_path / "ours", embedder, NOTES, tmp_path, "ours")
    theirs = _library(tmp_path / "theirs", embedder, OTHER, tmp_path, "theirs")
    assert ours.passage_ids(embedder.name) == theirs.passage_ids(embedder.name)  # same ids, other vectors
    theirs.close()
    shutil.copy(tmp_path / "theirs" / INDEX_NAME, tmp_path / "ours" / INDEX_NAME)
    assert _each_found_by_its_own_vector(ours, embedder)
    ours.close()


def test_a_database_restored_from_a_backup_does_not_keep_a_newer_cache(tmp_path, embedder):
    library = _library(tmp_path / "lib", embedder, NOTES[:2], tmp_path, "a")
    library.close()
    shutil.copy(tmp_path / "lib" / "library.sqlite", tmp_path / "backup.sqlite")
    library = Library(tmp_path / "lib")
    ingest = Ingestor(library, embedder)
    extra = tmp_path / "b.txt"
    extra.write_text(NOTES[2], encoding="utf-8")
    ingest.add([extra])
    first = next(d for d in library.documents() if d.path.endswith("a-0.txt"))
    library.remove(first.id)
    ingest.refresh_vectors()  # the same passage count as the backup, other passages
    library.close()
    shutil.copy(tmp_path / "backup.sqlite", tmp_path / "lib" / "library.sqlite")
    restored = Library(tmp_path / "lib")
    assert _each_found_by_its_own_vector(restored, embedder)
    restored.close()


def test_a_damaged_length_field_means_a_rebuild_not_a_memory_error(tmp_path, embedder):
    library = _library(tmp_path / "lib", embedder, NOTES, tmp_path, "n")
    path = tmp_path / "lib" / INDEX_NAME
    data = bytearray(path.read_bytes())
    count, dim = len(library.passage_ids(embedder.name)), embedder.dim
    codes = struct.pack("<Q", count * dim)  # the flat index's float count, just before its vectors
    at = data.index(codes, data.index(b"IxFI"))
    data[at : at + 8] = struct.pack("<Q", 2**36)  # 256 GB of floats: std::bad_alloc, a MemoryError
    path.write_bytes(bytes(data))
    assert _each_found_by_its_own_vector(library, embedder)
    library.close()


def test_the_cache_is_as_readable_as_the_database(tmp_path, embedder):
    """A team sharing a library: who may read library.sqlite may read vectors.faiss (not mkstemp's 0600)."""
    library = _library(tmp_path / "lib", embedder, NOTES, tmp_path, "team")
    try:
        mode = (tmp_path / "lib" / "library.sqlite").stat().st_mode & 0o777
        assert (tmp_path / "lib" / INDEX_NAME).stat().st_mode & 0o777 == mode
    finally:
        library.close()


def _statements(library) -> list[str]:
    seen: list[str] = []
    library.conn.set_trace_callback(seen.append)
    return seen


def test_reopening_an_unchanged_library_trusts_its_cache_without_counting_passages(tmp_path, embedder):
    _library(tmp_path / "lib", embedder, NOTES, tmp_path, "a").close()
    library = Library(tmp_path / "lib")
    seen = _statements(library)
    vectors = VectorIndex(library, embedder)
    assert vectors.index().ntotal == len(library.passage_ids(embedder.name))
    counted = [s for s in seen if "count(*)" in s and "JOIN documents" in s]
    assert counted == [], "the change number should have vouched for the file"
    library.close()


def test_every_write_to_passages_moves_the_change_number_even_from_raw_sql(tmp_path, embedder):
    library = _library(tmp_path / "lib", embedder, NOTES[:2], tmp_path, "a")
    before = library.passage_changes()
    doc_id, passage_id = library.conn.execute("SELECT doc_id, id FROM passages LIMIT 1").fetchone()
    library.conn.execute("DELETE FROM passages WHERE id = ?", (passage_id,))  # another program, say
    after_delete = library.passage_changes()
    library.conn.execute("UPDATE documents SET status = 'failed' WHERE id = ?", (doc_id,))
    assert before < after_delete < library.passage_changes()
    # The index follows: that document's passages are no longer searchable.
    vectors = VectorIndex(library, embedder)
    assert vectors.index().ntotal == len(library.passage_ids(embedder.name))
    library.close()


def test_a_cache_written_before_the_change_number_existed_is_still_trusted_when_it_matches(tmp_path, embedder):
    import json

    from ingest.store.vectors import SIGNATURE_KEY

    library = _library(tmp_path / "lib", embedder, NOTES, tmp_path, "a")
    signature = json.loads(library.meta(SIGNATURE_KEY))
    del signature["changes"]  # as a library from before schema 4 recorded it
    library.set_meta(SIGNATURE_KEY, json.dumps(signature))
    written = (tmp_path / "lib" / INDEX_NAME).stat().st_mtime_ns
    library.close()
    library = Library(tmp_path / "lib")
    vectors = VectorIndex(library, embedder)
    assert vectors.index().ntotal == len(library.passage_ids(embedder.name))
    assert (tmp_path / "lib" / INDEX_NAME).stat().st_mtime_ns == written  # trusted, not rebuilt
    library.close()
