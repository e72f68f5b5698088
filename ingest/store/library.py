"""One library = one folder: `library.sqlite` (truth) and `vectors.faiss` (a derived cache)."""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ingest.chunking import page_starts
from ingest.keywords import index_tokens
from ingest.records import Chunks, Page
from ingest.store.open_errors import DB_NAME, storage_errors
from ingest.store.reads import PassageReads
from ingest.store.rows import (
    COUNTS,
    DOC_COLUMNS,
    DocumentRow,
    FileRecord,
    IndexedDocument,
    PassageRow,
    document_row,
)
from ingest.store.schema import open_database

__all__ = ["DB_NAME", "DocumentRow", "FileRecord", "IndexedDocument", "Library", "PassageRow"]


# What a user may type for a document (`docdesk remove REF`, `doc_ids`, MCP's `document`) is data:
# an id is 64 hex digits and a prefix 8 or more of them; a path is at most PATH_MAX long.
ID_PREFIX = re.compile(r"[0-9a-fA-F]{8,64}")
MAX_REF_CHARS = 4096


def _is_text(ref: str) -> bool:
    """Whether SQLite can take `ref`: UTF-8 (no lone surrogate from a name that is not) and no NUL."""
    try:
        ref.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in ref


def ref_path(ref: str) -> str | None:
    """`ref` as the absolute path the library would store it under, or None when no stored path
    can be it. `~user` of a user this machine does not have stays as written, as the shell leaves it."""
    if not ref or len(ref) > MAX_REF_CHARS or not _is_text(ref):
        return None
    path = Path(ref)
    try:
        path = path.expanduser()
    except (RuntimeError, KeyError, ValueError):  # "Could not determine home directory."
        pass
    try:
        return str(path.absolute())
    except OSError:  # the working folder is gone
        return None


class Library(PassageReads):
    """The SQLite side of a library. Thread-safe for one writer and many readers."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        # Read-only (a read-only mount, no write permission, a disk too full to open it for writing):
        # reads work, every write raises LibraryReadOnly or LibraryFull.
        self.conn, self._cannot_write = open_database(self.folder)
        self.read_only = self._cannot_write is not None
        self._lock = threading.RLock()
        self._commits = 0  # this connection's; PRAGMA data_version counts other connections'
        self._passage_total: int | None = None  # kept until the passages change
        self._passage_total_at: int | None = None  # passage_changes() when it was counted
        self._vocab_ready = False

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        if self._cannot_write is not None:
            raise self._cannot_write(self.folder)
        with self._lock, storage_errors(self.folder, self.conn):  # a full disk, a damaged file: their own errors
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
                self.conn.execute("COMMIT")
            except BaseException:
                if self.conn.in_transaction:  # SQLite rolls back by itself after SQLITE_FULL
                    self.conn.execute("ROLLBACK")
                raise
            self._commits += 1

    def version(self) -> tuple[int, int]:
        """Changes whenever anything commits to this library, here or in another process.

        Caches derived from its tables (the FAISS index, the passage total) compare it instead
        of re-reading the tables on every search.
        """
        with self._lock:
            return self._commits, self.conn.execute("PRAGMA data_version").fetchone()[0]

    # -- meta -------------------------------------------------------------------
    def meta(self, key: str, default: str | None = None) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- documents --------------------------------------------------------------
    def documents(self, with_counts: bool = True) -> list[DocumentRow]:
        # One statement is one snapshot: a document being written is never seen with its status
        # from before the commit and its counts from after it.
        counts = f", {COUNTS}" if with_counts else ""
        rows = self.conn.execute(f"SELECT {DOC_COLUMNS}{counts} FROM documents d ORDER BY d.added_at, d.path")
        return [document_row(r) for r in rows]

    def document(self, doc_id: str) -> DocumentRow | None:
        row = self.conn.execute(f"SELECT {DOC_COLUMNS}, {COUNTS} FROM documents d WHERE d.id = ?", (doc_id,)).fetchone()
        return document_row(row) if row is not None else None

    def resolve(self, ref: str) -> DocumentRow | None:
        """A document by id, id prefix (8 to 64 hex digits) or file path. Any string is data: `%`,
        `_`, `*` and `[` match only themselves, and one that cannot name a document (longer than a
        path, a NUL, not UTF-8, `~user` of nobody) names none instead of raising."""
        if not ref or len(ref) > MAX_REF_CHARS or not _is_text(ref):
            return None
        doc = self.document(ref)
        if doc is None and ID_PREFIX.fullmatch(ref):  # hex only: never a LIKE or GLOB pattern
            prefix = ref.lower()
            rows = self.conn.execute(
                "SELECT id FROM documents WHERE id >= ? AND id < ? LIMIT 2", (prefix, prefix + "g")
            ).fetchall()
            if len(rows) == 1:
                doc = self.document(rows[0][0])
        path = ref_path(ref) if doc is None else None
        if path is not None:
            row = self.conn.execute("SELECT doc_id FROM files WHERE path = ?", (path,)).fetchone()
            doc = self.document(row[0]) if row else None
        return doc

    def file_path(self, ref: str) -> str | None:
        """The stored path `ref` names (as given, or relative to here), if it is one of the library's files."""
        path = str(Path(ref).expanduser().absolute())
        row = self.conn.execute("SELECT path FROM files WHERE path = ?", (path,)).fetchone()
        return row[0] if row else None

    def file(self, path: str) -> FileRecord | None:
        row = self.conn.execute(
            "SELECT path, doc_id, size, mtime, folder_id FROM files WHERE path = ?", (path,)
        ).fetchone()
        return FileRecord(**dict(row)) if row else None

    def files_under(self, folder_id: int) -> list[FileRecord]:
        rows = self.conn.execute(
            "SELECT path, doc_id, size, mtime, folder_id FROM files WHERE folder_id = ?", (folder_id,)
        )
        return [FileRecord(**dict(r)) for r in rows]

    def queue(self, doc_id: str, path: str, size: int, mtime: float) -> None:
        """Record a document as queued, so a crash before it finishes is visible and resumable."""
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO documents (id, path, size, mtime, status, added_at) VALUES (?, ?, ?, ?, 'queued', ?) "
                "ON CONFLICT(id) DO UPDATE SET status = CASE WHEN status = 'indexed' THEN status ELSE 'queued' END",
                (doc_id, path, size, mtime, time.time()),
            )

    def forget_queued(self, doc_id: str) -> None:
        """Drop a queued document that no path holds (its file turned out to hold other bytes)."""
        with self.transaction() as conn:
            conn.execute(
                "DELETE FROM documents WHERE id = ? AND status = 'queued' "
                "AND NOT EXISTS (SELECT 1 FROM files WHERE doc_id = ?)",
                (doc_id, doc_id),
            )

    def link_file(self, record: FileRecord) -> None:
        """Point a path at an already indexed document (the same bytes seen again)."""
        with self.transaction() as conn:
            self._link_file(conn, record)

    def _link_file(self, conn: sqlite3.Connection, record: FileRecord) -> None:
        previous = conn.execute("SELECT doc_id FROM files WHERE path = ?", (record.path,)).fetchone()
        conn.execute(
            "INSERT OR REPLACE INTO files (path, doc_id, size, mtime, folder_id) VALUES (?, ?, ?, ?, ?)",
            (record.path, record.doc_id, record.size, record.mtime, record.folder_id),
        )
        conn.execute("UPDATE documents SET path = ? WHERE id = ?", (record.path, record.doc_id))
        if previous and previous[0] != record.doc_id:
            self._drop_if_orphan(conn, previous[0])  # the file changed: its old version goes

    def _drop_if_orphan(self, conn: sqlite3.Connection, doc_id: str) -> None:
        if conn.execute("SELECT 1 FROM files WHERE doc_id = ? LIMIT 1", (doc_id,)).fetchone() is None:
            conn.execute("DELETE FROM documents WHERE id = ?", (doc_id,))

    def store_indexed(self, item: IndexedDocument) -> None:
        """Write one document, its pages, blocks, passages, vectors and keywords atomically."""
        read = item.read
        starts = page_starts(read.pages)
        with self.transaction() as conn:
            conn.execute("DELETE FROM blocks WHERE doc_id = ?", (item.doc_id,))  # leftovers of an older model
            conn.execute("DELETE FROM pages WHERE doc_id = ?", (item.doc_id,))
            conn.execute("DELETE FROM ocr_pages WHERE doc_id = ?", (item.doc_id,))
            conn.execute(
                "INSERT INTO documents (id, path, size, mtime, status, added_at) VALUES (?, ?, ?, ?, 'queued', ?) "
                "ON CONFLICT(id) DO NOTHING",
                (item.doc_id, item.file.path, item.file.size, item.file.mtime, time.time()),
            )
            conn.execute(
                "UPDATE documents SET title = ?, format = ?, pages = ?, synthetic_pages = ?, language = ?, "
                "status = 'indexed', reason = '', warnings = ?, embed_model = ?, indexed_at = ? WHERE id = ?",
                (
                    read.title,
                    read.format,
                    len(read.pages),
                    int(read.synthetic_pages),
                    item.language,
                    json.dumps(read.warnings + item.extra_warnings, ensure_ascii=False),
                    item.embed_model,
                    time.time(),
                    item.doc_id,
                ),
            )
            self._write_content(conn, item.doc_id, read.pages, starts, item.chunks, item.vectors)
            conn.executemany(  # kept apart from `pages`: re-embedding rewrites pages, not how they were read
                "INSERT INTO ocr_pages (doc_id, number, confidence, rotated, skew, lines) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (item.doc_id, p.number, p.ocr.confidence, p.ocr.rotated, p.ocr.skew, json.dumps(p.ocr.lines))
                    for p in read.pages
                    if p.ocr is not None
                ],
            )
            self._link_file(conn, item.file)

    def replace_content(self, doc_id: str, pages: list[Page], chunks: Chunks, vectors, embed_model: str) -> None:
        """Re-chunked, re-embedded content for an indexed document (after a model switch)."""
        starts = page_starts(pages)
        with self.transaction() as conn:
            conn.execute("DELETE FROM blocks WHERE doc_id = ?", (doc_id,))
            conn.execute("DELETE FROM pages WHERE doc_id = ?", (doc_id,))
            self._write_content(conn, doc_id, pages, starts, chunks, vectors)
            conn.execute("UPDATE documents SET embed_model = ? WHERE id = ?", (embed_model, doc_id))

    def _write_content(self, conn, doc_id: str, pages: list[Page], starts: list[int], chunks: Chunks, vectors) -> None:
        conn.executemany(
            "INSERT INTO pages (doc_id, number, start, text) VALUES (?, ?, ?, ?)",
            [(doc_id, p.number, s, p.text) for p, s in zip(pages, starts, strict=True)],
        )
        block_ids: list[int] = []
        for block in chunks.blocks:
            cursor = conn.execute(
                "INSERT INTO blocks (doc_id, ordinal, start, end, page, page_end, tokens, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (doc_id, block.ordinal, block.start, block.end, block.page, block.page_end, block.tokens, block.text),
            )
            block_ids.append(cursor.lastrowid)
        for passage, vector in zip(chunks.passages, vectors, strict=True):
            cursor = conn.execute(
                "INSERT INTO passages (doc_id, block_id, ordinal, start, end, page, page_end, text, embedding) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    doc_id,
                    block_ids[passage.block],
                    passage.ordinal,
                    passage.start,
                    passage.end,
                    passage.page,
                    passage.page_end,
                    passage.text,
                    vector.tobytes(),
                ),
            )
            conn.execute(
                "INSERT INTO passages_fts (rowid, tokens) VALUES (?, ?)", (cursor.lastrowid, index_tokens(passage.text))
            )

    def store_failed(self, file: FileRecord, reason: str) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO documents (id, path, size, mtime, status, reason, added_at) VALUES (?, ?, ?, ?, 'failed', ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET status = 'failed', reason = excluded.reason, path = excluded.path",
                (file.doc_id, file.path, file.size, file.mtime, reason, time.time()),
            )
            conn.execute("DELETE FROM blocks WHERE doc_id = ?", (file.doc_id,))  # passages go with them
            conn.execute("DELETE FROM pages WHERE doc_id = ?", (file.doc_id,))
            conn.execute("DELETE FROM ocr_pages WHERE doc_id = ?", (file.doc_id,))
            self._link_file(conn, file)

    def remove(self, doc_id: str) -> bool:
        with self.transaction() as conn:
            return conn.execute("DELETE FROM documents WHERE id = ?", (doc_id,)).rowcount > 0

    def remove_file(self, path: str) -> None:
        """Forget a path; its document goes too unless another path holds the same bytes."""
        with self.transaction() as conn:
            row = conn.execute("SELECT doc_id FROM files WHERE path = ?", (path,)).fetchone()
            if row:
                conn.execute("DELETE FROM files WHERE path = ?", (path,))
                self._drop_if_orphan(conn, row[0])
                # The document stays under its twin: it is shown at a path that still holds it.
                conn.execute(
                    "UPDATE documents SET path = (SELECT min(path) FROM files WHERE doc_id = ?) WHERE id = ? AND path = ?",
                    (row[0], row[0], path),
                )

    # -- folders ----------------------------------------------------------------
    def remember_folder(self, path: str) -> int:
        with self.transaction() as conn:
            conn.execute("INSERT OR IGNORE INTO folders (path, added_at) VALUES (?, ?)", (path, time.time()))
            return conn.execute("SELECT id FROM folders WHERE path = ?", (path,)).fetchone()[0]

    def folders(self) -> list[tuple[int, str]]:
        return [(r[0], r[1]) for r in self.conn.execute("SELECT id, path FROM folders ORDER BY path")]
