"""What an attack checks in a library after the CLI is done with it: read straight from
library.sqlite and vectors.faiss, never through DocDesk's own code paths."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from pathlib import Path

from tests.ingest.test_crash import _alive, _children, _indexed
from tests.reliability.harness import Running, expect

__all__ = ["_indexed"]


def query(library: Path, sql: str, *args) -> list[tuple]:
    with sqlite3.connect(f"file:{library / 'library.sqlite'}?mode=ro", uri=True, timeout=10) as conn:
        return conn.execute(sql, args).fetchall()


def statuses(library: Path) -> dict[str, int]:
    return dict(query(library, "SELECT status, count(*) FROM documents GROUP BY status"))


def consistent(library: Path) -> str:
    """SQLite's checks hold, an indexed document has pages and passages, a queued or failed one
    none, and every passage has its keyword row. Returns a summary of the statuses."""
    expect(query(library, "PRAGMA integrity_check")[0][0] == "ok", "integrity_check failed")
    expect(query(library, "PRAGMA foreign_key_check") == [], "foreign keys broken")
    half = query(
        library,
        "SELECT d.path FROM documents d WHERE d.status != 'indexed' AND EXISTS (SELECT 1 FROM passages p "
        "WHERE p.doc_id = d.id)",
    )
    expect(not half, f"an unfinished document left passages: {half[:1]}")
    empty = query(
        library,
        "SELECT d.path FROM documents d WHERE d.status = 'indexed' AND NOT EXISTS (SELECT 1 FROM passages p "
        "WHERE p.doc_id = d.id)",
    )
    expect(not empty, f"an indexed document has no passages: {empty[:1]}")
    fts, passages = query(library, "SELECT (SELECT count(*) FROM passages_fts), (SELECT count(*) FROM passages)")[0]
    expect(fts == passages, f"{passages} passages but {fts} keyword rows")
    return ", ".join(f"{n} {status}" for status, n in sorted(statuses(library).items()))


def cache_matches(library: Path) -> int:
    """vectors.faiss holds exactly the indexed passages, each with the vector SQLite stores for it.
    Returns how many."""
    import faiss
    import numpy as np

    path = library / "vectors.faiss"
    expect(path.exists(), "no vectors.faiss after the command")
    index = faiss.read_index(str(path))
    ids = sorted(int(i) for i in faiss.vector_to_array(index.id_map)) if index.ntotal else []
    rows = query(
        library,
        "SELECT p.id, p.embedding FROM passages p JOIN documents d ON d.id = p.doc_id "
        "WHERE d.status = 'indexed' ORDER BY p.id",
    )
    expect(ids == [r[0] for r in rows], f"the cache holds {len(ids)} ids, SQLite {len(rows)} passages")
    for passage_id, blob in rows:
        stored = np.frombuffer(blob, dtype=np.float32)
        expect(np.array_equal(index.reconstruct(passage_id), stored), f"passage {passage_id} has another vector")
    return len(rows)


def page_texts(library: Path) -> dict[str, str]:
    """Each indexed document's text by file name."""
    rows = query(
        library,
        "SELECT d.path, group_concat(p.text, char(10)) FROM documents d JOIN pages p ON p.doc_id = d.id "
        "WHERE d.status = 'indexed' GROUP BY d.id",
    )
    return {Path(path).name: text for path, text in rows}


def wait_for(condition, timeout: float, what: str, running: Running | None = None) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        expect(running is None or running.alive(), f"add ended before {what}")
        expect(time.monotonic() < deadline, f"no {what} within {timeout:.0f} s")
        time.sleep(0.05)


def kill_9(running: Running) -> None:
    """SIGKILL the CLI itself (not the meter), then check its reader process died with it."""
    pid = running.cli_pid()
    children = _children(pid)
    os.kill(pid, signal.SIGKILL)
    running.finish()
    deadline = time.monotonic() + 5
    while any(_alive(c) for c in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    expect(not [c for c in children if _alive(c)], "a reader process outlived the killed add")


def numbered_notes(folder: Path, count: int, topic: str = "harbour", sentences: int = 1) -> Path:
    """`count` distinct notes of `sentences` sentences (about 15 make one passage)."""
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        body = " ".join(f"Note {n} on the {topic}: quay {i} pays fee {n * 13 + i} each tide." for i in range(sentences))
        (folder / f"{topic}-{n:02d}.md").write_text(f"# {topic.title()} note {n}\n\n{body}", encoding="utf-8")
    return folder
