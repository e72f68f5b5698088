"""The library store through the real pipeline: add, replace, remove, sync, model switch, cache repair."""

from __future__ import annotations

import shutil

import faiss
import pytest

from ingest.embedders.sentence_transformer import SentenceTransformerEmbedder, bundled_model_path
from ingest.keywords import query_tokens
from ingest.pipeline import Ingestor
from ingest.store.library import Library
from ingest.store.vectors import INDEX_NAME, VectorIndex

pytestmark = pytest.mark.models


def _count(library, sql, *args):
    return library.conn.execute(sql, args).fetchone()[0]


@pytest.fixture
def library(tmp_path):
    lib = Library(tmp_path / "lib")
    yield lib
    lib.close()


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_unchanged_add_is_a_noop_and_changed_file_replaces_old_version(library, embedder, tmp_path):
    note = _write(tmp_path / "docs" / "note.md", "# Note\n\nThe backup runs every night at two o'clock.")
    ingest = Ingestor(library, embedder)
    first = ingest.add([note])
    assert [a["status"] for a in first.added] == ["indexed"]
    old_id = first.added[0]["doc_id"]

    again = ingest.add([note])
    assert again.added == [] and again.skipped[0]["reason"] == "unchanged"

    _write(note, "# Note\n\nThe backup now runs every Sunday at noon.")
    changed = ingest.add([note])
    new_id = changed.added[0]["doc_id"]
    assert new_id != old_id
    assert [d.id for d in library.documents()] == [new_id]
    assert _count(library, "SELECT count(*) FROM passages WHERE doc_id = ?", old_id) == 0
    assert library.keyword_search(query_tokens("Sunday noon"), 5)
    assert library.keyword_search(query_tokens("night"), 5) == []


def test_same_bytes_at_two_paths_are_one_document(library, embedder, tmp_path):
    a = _write(tmp_path / "a.txt", "Identical content in two places.")
    b = _write(tmp_path / "copy" / "b.txt", "Identical content in two places.")
    report = Ingestor(library, embedder).add([a, b])
    assert len(report.added) == 1 and "same content" in report.skipped[0]["reason"]
    assert len(library.documents()) == 1


def test_remove_deletes_a_document_everywhere(library, embedder, tmp_path):
    keep = _write(tmp_path / "keep.txt", "Keep this text about volcanoes and lava.")
    drop = _write(tmp_path / "drop.txt", "Drop this text about glaciers and ice.")
    ingest = Ingestor(library, embedder)
    ingest.add([keep, drop])
    doc = library.resolve(str(drop))
    assert library.remove(doc.id)
    ingest.refresh_vectors()
    for table in ("pages", "blocks", "passages", "files"):
        assert _count(library, f"SELECT count(*) FROM {table} WHERE doc_id = ?", doc.id) == 0
    assert _count(library, "SELECT count(*) FROM passages_fts") == _count(library, "SELECT count(*) FROM passages")
    assert library.keyword_search(query_tokens("glaciers"), 5) == []
    index = faiss.read_index(str(library.folder / INDEX_NAME))
    assert index.ntotal == _count(library, "SELECT count(*) FROM passages")


def test_sync_finds_new_changed_and_deleted_files(library, embedder, tmp_path):
    folder = tmp_path / "watched"
    a = _write(folder / "a.md", "Alpha document about apples.")
    b = _write(folder / "sub" / "b.md", "Beta document about bananas.")
    ingest = Ingestor(library, embedder)
    ingest.add([folder])
    assert library.folders() == [(1, str(folder))]

    b.unlink()
    _write(a, "Alpha document, now about apricots.")
    _write(folder / "c.txt", "Gamma document about cherries.")
    report = ingest.sync()
    assert sorted(x["path"].rsplit("/", 1)[1] for x in report.added) == ["a.md", "c.txt"]
    assert [r["path"] for r in report.removed] == [str(b)]
    titles = sorted(d.title for d in library.documents())
    assert titles == ["Alpha document, now about apricots.", "Gamma document about cherries."]


def test_sync_reads_only_files_whose_size_or_mtime_changed(library, embedder, tmp_path, monkeypatch):
    import os

    from ingest import pipeline

    folder = tmp_path / "watched"
    a = _write(folder / "a.md", "Alpha document about apples.")
    b = _write(folder / "b.md", "Beta document about bananas.")
    ingest = Ingestor(library, embedder)
    ingest.add([folder])
    hashed = []
    real_digest = pipeline.file_digest
    monkeypatch.setattr(pipeline, "file_digest", lambda path: hashed.append(path.name) or real_digest(path))

    assert ingest.sync().added == [] and hashed == []  # unchanged: nothing read

    stat = a.stat()
    os.utime(a, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # touched: same bytes, new mtime
    report = ingest.sync()
    assert hashed == ["a.md"] and report.added == []  # read once; the hash says it is the same document
    hashed.clear()
    assert ingest.sync().added == [] and hashed == []  # and the new mtime was kept

    stat = b.stat()
    b.write_text("Beta document about bananes.", encoding="utf-8")  # same size, new content
    os.utime(b, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2 * 10**9))
    report = ingest.sync()
    assert hashed == ["b.md"] and [x["path"] for x in report.added] == [str(b)]
    assert "Beta document about bananes." in [d.title for d in library.documents()]


def test_switching_embedding_model_reembeds_instead_of_mixing(library, embedder, tmp_path):
    doc = _write(tmp_path / "doc.txt", "Switching models must never mix two vector spaces.")
    Ingestor(library, embedder).add([doc])
    other_folder = tmp_path / "other-model"
    shutil.copytree(bundled_model_path(), other_folder)
    other = SentenceTransformerEmbedder(str(other_folder))
    events = []
    switched = Ingestor(library, other, on_progress=events.append)
    assert switched.reembed_stale() == 1
    assert {d.embed_model for d in library.documents()} == {other.name}
    assert library.meta("embedding_model") == other.name
    assert any(e.stage == "reembedding" for e in events)
    switched.refresh_vectors()
    assert VectorIndex(library, other).index().ntotal == library.passage_count()


def test_vector_cache_is_rebuilt_when_missing_or_corrupt(library, embedder, tmp_path):
    Ingestor(library, embedder).add([_write(tmp_path / "x.txt", "Vectors are a cache of the database.")])
    path = library.folder / INDEX_NAME
    path.write_bytes(b"garbage")
    assert VectorIndex(library, embedder).index().ntotal == 1
    path.unlink()
    assert VectorIndex(library, embedder).index().ntotal == 1
    assert path.exists()


def test_corpus_batch_indexes_good_files_and_reports_each_broken_one(corpus_library):
    library, report = corpus_library
    failed = {f["path"].rsplit("/", 1)[1]: f["reason"] for f in report.failed}
    for name in (
        "empty.pdf",
        "truncated.pdf",
        "html-named.pdf",
        "random-bytes.docx",
        "zip-without-document.docx",
        "nul-bytes.txt",
    ):
        assert name in failed
    assert len(set(failed[n] for n in ("empty.pdf", "truncated.pdf", "html-named.pdf", "nul-bytes.txt"))) == 4
    added = {a["path"].rsplit("/", 1)[1]: a for a in report.added}
    assert added["GeoTopo-komprimiert.pdf"]["pages"] == 117
    assert {"chinese-gb18030.txt", "french-latin1.txt", "english-utf16.txt", "docdesk-guide-zh.pdf"} <= set(added)
    listed = {d.path.rsplit("/", 1)[1]: d for d in library.documents()}
    assert listed["truncated.pdf"].status == "failed" and "cut off" in listed["truncated.pdf"].reason
    assert listed["GeoTopo-komprimiert.pdf"].status == "indexed"


def test_adding_one_file_of_a_remembered_folder_keeps_it_in_sync(library, embedder, tmp_path):
    folder = tmp_path / "watched"
    note = _write(folder / "note.md", "A note that lives in a watched folder.")
    _write(folder / "other.md", "Another note, which stays.")  # an emptied folder is held (test_sync_guard.py)
    ingest = Ingestor(library, embedder)
    ingest.add([folder])
    ingest.add([note])  # the same file again, on its own
    note.unlink()
    report = ingest.sync()
    assert [r["path"] for r in report.removed] == [str(note)]
    assert [d.path for d in library.documents()] == [str(folder / "other.md")]


def test_a_library_from_schema_3_gains_the_passage_change_number_and_keeps_its_passages(library, embedder, tmp_path):
    _write(tmp_path / "a.txt", "Rivers carry silt down to the delta.")
    Ingestor(library, embedder).add([tmp_path / "a.txt"])
    passages = _count(library, "SELECT count(*) FROM passages")
    for trigger in ("passage_changes_insert", "passage_changes_delete", "passage_changes_document"):
        library.conn.execute(f"DROP TRIGGER {trigger}")
    library.conn.execute("DROP TABLE passage_changes")
    library.conn.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    library.close()
    reopened = Library(tmp_path / "lib")
    try:
        assert _count(reopened, "SELECT count(*) FROM passages") == passages
        before = reopened.passage_changes()
        _write(tmp_path / "b.txt", "Owls hunt at night by sound alone.")
        Ingestor(reopened, embedder).add([tmp_path / "b.txt"])
        assert reopened.passage_changes() > before
        assert VectorIndex(reopened, embedder).index().ntotal == _count(reopened, "SELECT count(*) FROM passages")
    finally:
        reopened.close()
