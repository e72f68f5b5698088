"""Past a threshold the dense index is IVF, trained in the background, persisted, and repaired
after a crash from the file it last wrote plus SQLite, never rebuilt whole. The threshold is
lowered here so that a few thousand passages cross it (the real ones are in ingest/store/ann.py)."""

from __future__ import annotations

import numpy as np
import pytest

from ingest.records import Block, Chunks, Page, Passage, ReadResult
from ingest.store import ann, vectors
from ingest.store.library import FileRecord, IndexedDocument, Library
from ingest.store.vectors import VectorIndex

DIM = 32
MODEL = "test-model"


class _Named:
    """What VectorIndex asks of an embedder: its name and dimension (vectors come from SQLite)."""

    name = MODEL
    dim = DIM


@pytest.fixture
def small_thresholds(monkeypatch):
    monkeypatch.setattr(ann, "APPROXIMATE_FROM", 2_000)
    monkeypatch.setattr(ann, "EXACT_BELOW", 1_000)
    monkeypatch.setattr(vectors, "SMALL", 1_000)
    monkeypatch.setattr(vectors, "unsaved_limit", lambda count: 0 if count < 1_000 else 500)


def _add_documents(library: Library, first: int, count: int, rng) -> np.ndarray:
    """`count` documents of 100 passages; their vectors lie around 40 topics, as real embeddings
    cluster (uniformly random vectors have no neighbours for any index to find)."""
    topics = np.random.default_rng(0).standard_normal((40, DIM)).astype(np.float32)
    added = []
    for doc in range(first, first + count):
        picks = rng.integers(0, len(topics), 100)
        matrix = topics[picks] + 0.3 * rng.standard_normal((100, DIM)).astype(np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        text = "passage"
        passages = [Passage(0, i, 0, len(text), 1, 1, text) for i in range(100)]
        digest = f"{doc:064x}"
        library.store_indexed(
            IndexedDocument(
                digest,
                FileRecord(f"/docs/{doc}.txt", digest, 1, 0.0),
                ReadResult("text", [Page(1, text)], f"Doc {doc}"),
                Chunks([Block(0, 0, len(text), 1, 1, 1, text)], passages),
                matrix,
                "en",
                MODEL,
            )
        )
        added.append(matrix)
    library.set_meta("embedding_model", MODEL)
    library.set_meta("embedding_dim", str(DIM))
    return np.concatenate(added)


def _exact_top(library: Library, query: np.ndarray, k: int) -> list[int]:
    ids = library.passage_ids(MODEL)
    blobs = [b for _, batch in library.embeddings(ids) for b in batch]
    scores = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(ids), DIM) @ query
    return [ids[i] for i in np.argsort(-scores)[:k]]


def test_a_library_past_the_threshold_gets_an_ivf_index_that_finds_what_exact_search_finds(tmp_path, small_thresholds):
    rng = np.random.default_rng(1)
    library = Library(tmp_path / "lib")
    _add_documents(library, 0, 15, rng)
    index = VectorIndex(library, _Named())
    index.refresh()
    assert not ann.is_approximate(index.index())  # 1,500 passages: exact
    _add_documents(library, 15, 15, rng)
    index.refresh()  # 3,000: training starts in the background; exact search answers meanwhile
    assert index.wait_for_rebuild(60)
    assert ann.is_approximate(index.index()) and index.index().ntotal == 3_000
    topics = np.random.default_rng(0).standard_normal((40, DIM)).astype(np.float32)
    for query in topics[:5] + 0.3 * rng.standard_normal((5, DIM)).astype(np.float32):
        query /= np.linalg.norm(query)
        found = [i for i, _ in index.search(query, 10)]
        assert len(set(found) & set(_exact_top(library, query, 10))) >= 9
    index.close()
    reopened = VectorIndex(library, _Named())
    assert ann.is_approximate(reopened.index())  # read back from the file, not trained again
    assert reopened.rebuild_progress() is None
    library.close()


def test_after_a_crash_only_what_the_file_lacks_is_added(tmp_path, small_thresholds):
    rng = np.random.default_rng(2)
    library = Library(tmp_path / "lib")
    _add_documents(library, 0, 30, rng)
    index = VectorIndex(library, _Named())
    index.refresh()
    assert index.wait_for_rebuild(60)
    written = index.path.stat().st_mtime_ns
    _add_documents(library, 30, 2, rng)  # 200 new passages: fewer than the file may lack
    index.refresh()
    assert index.path.stat().st_mtime_ns == written  # not rewritten for 200 passages
    # A crash here (no close): the next process loads the old file and adds the 200 from SQLite.
    after = VectorIndex(library, _Named())
    loaded = after.index()
    assert loaded is not None and ann.is_approximate(loaded) and loaded.ntotal == 3_200
    assert after.rebuild_progress() is None
    newest = library.passage_ids(MODEL)[-1]
    blobs = [b for _, batch in library.embeddings([newest]) for b in batch]
    assert after.search(np.frombuffer(blobs[0], dtype=np.float32), 1)[0][0] == newest
    library.close()


def test_with_no_usable_file_a_large_library_is_rebuilt_in_the_background(tmp_path, small_thresholds):
    rng = np.random.default_rng(3)
    library = Library(tmp_path / "lib")
    _add_documents(library, 0, 25, rng)
    index = VectorIndex(library, _Named())
    index.refresh()
    assert index.wait_for_rebuild(60)
    index.close()
    index.path.write_bytes(b"damaged")
    fresh = VectorIndex(library, _Named())
    query = rng.standard_normal(DIM).astype(np.float32)
    assert fresh.search(query, 10) == [] or fresh.wait_for_rebuild(0)  # answers at once, without it
    assert fresh.wait_for_rebuild(60)
    assert fresh.index().ntotal == 2_500 and ann.is_approximate(fresh.index())
    library.close()
