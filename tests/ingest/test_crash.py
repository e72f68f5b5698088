"""`kill -9` in the middle of `docdesk add`: the library opens, keeps what finished, and resumes."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from ingest.store.library import Library

pytestmark = pytest.mark.models


def _indexed(db) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return conn.execute("SELECT count(*) FROM documents WHERE status = 'indexed'").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def _add(library_dir, paths):
    env = dict(os.environ, DOCDESK_HOME=str(library_dir))
    return subprocess.Popen(
        [sys.executable, "-m", "app", "add", *map(str, paths), "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _kill_when(process, db, indexed_at_least: int, timeout: float = 240) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        if _indexed(db) >= indexed_at_least:
            break
        time.sleep(0.05)
    assert process.poll() is None, "add finished before it could be killed: " + process.stderr.read().decode()
    children = _children(process.pid)
    process.send_signal(signal.SIGKILL)
    process.wait()
    deadline = time.monotonic() + 5
    while any(_alive(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in children if _alive(pid)], "a reader process outlived its killed parent"
    return _indexed(db)


def _children(pid: int) -> list[int]:
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as handle:
            found += [int(c) for c in handle.read().split()]
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def _check_consistent(folder):
    library = Library(folder)
    try:
        conn = library.conn
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        docs = library.documents()
        for doc in docs:
            if doc.status == "indexed":
                assert doc.passages > 0 and doc.pages > 0, doc.path
            else:
                assert doc.passages == 0, "a document that did not finish must not leave half its passages"
        fts = conn.execute("SELECT count(*) FROM passages_fts").fetchone()[0]
        assert fts == library.passage_count()
        return docs
    finally:
        library.close()


def test_kill_9_during_add_loses_nothing_that_finished_and_resumes_without_duplicates(tmp_path, corpus):
    folder = tmp_path / "library"
    db = folder / "library.sqlite"
    paths = [corpus / "pdf-samples", corpus / "encodings"]

    finished_first = _kill_when(_add(folder, paths), db, 3)
    docs = _check_consistent(folder)
    assert sum(d.status == "indexed" for d in docs) == finished_first >= 3
    assert any(d.status == "queued" for d in docs), "unfinished documents are listed as queued"

    finished_second = _kill_when(_add(folder, paths), db, finished_first + 3)
    assert finished_second >= finished_first + 3
    _check_consistent(folder)

    final = _add(folder, paths)
    out, err = final.communicate(timeout=600)
    assert final.returncode == 1, err.decode()  # the corpus holds files that must fail (encrypted, scans)
    docs = _check_consistent(folder)
    files = [p for p in (corpus / "pdf-samples").rglob("*.pdf")] + list((corpus / "encodings").iterdir())
    assert len(docs) == len({_digest(p) for p in files}), "every file exactly once"
    assert not any(d.status == "queued" for d in docs)

    # The FAISS cache matches SQLite after the resumed run.
    import faiss

    library = Library(folder)
    try:
        assert faiss.read_index(str(folder / "vectors.faiss")).ntotal == library.passage_count()
    finally:
        library.close()


def _digest(path):
    from ingest.pipeline import file_digest

    return file_digest(path)


def test_documents_a_kill_left_queued_whose_files_are_gone_are_removed_by_sync(tmp_path, corpus):
    source = tmp_path / "docs"
    subprocess.run(["cp", "-r", str(corpus / "pdf-samples"), str(source)], check=True)
    folder = tmp_path / "library"
    _kill_when(_add(folder, [source]), folder / "library.sqlite", 1)
    queued = [d for d in _check_consistent(folder) if d.status == "queued"]
    assert queued, "the kill left documents queued"
    for doc in queued:
        os.unlink(doc.path)  # ...and their files were deleted before the next run
    env = dict(os.environ, DOCDESK_HOME=str(folder))
    sync = subprocess.run([sys.executable, "-m", "app", "sync", "--json"], env=env, capture_output=True, timeout=600)
    removed = {r["path"] for r in json.loads(sync.stdout)["removed"]}
    assert {d.path for d in queued} <= removed
    assert not any(d.status == "queued" for d in _check_consistent(folder)), "none stays queued forever"
