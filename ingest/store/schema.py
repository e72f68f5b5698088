"""The library's SQLite schema (the source of truth) and its migrations."""

from __future__ import annotations

import logging
import re
import sqlite3
from pathlib import Path

from ingest.errors import LibraryError
from ingest.store.open_errors import (
    DB_NAME,
    LibraryDamaged,
    LibraryFull,
    LibraryReadOnly,
    cannot_create,
    code_of,
    disk_full,
    make_folder,
    read_only_connection,
    storage_error,
    writable,
)

log = logging.getLogger(__name__)

# 2: summary cache, chats and messages; 3: ocr_pages; 4: passage_changes (all added by CREATE IF NOT EXISTS)
SCHEMA_VERSION = 4

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY,                 -- sha256 of the file's bytes
    path TEXT NOT NULL,                  -- where it was last seen
    title TEXT NOT NULL DEFAULT '',
    format TEXT NOT NULL DEFAULT '',
    pages INTEGER NOT NULL DEFAULT 0,
    synthetic_pages INTEGER NOT NULL DEFAULT 0,
    size INTEGER NOT NULL,
    mtime REAL NOT NULL,
    language TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL CHECK (status IN ('queued', 'indexed', 'failed')),
    reason TEXT NOT NULL DEFAULT '',
    warnings TEXT NOT NULL DEFAULT '[]', -- JSON list of strings
    embed_model TEXT NOT NULL DEFAULT '',
    added_at REAL NOT NULL,
    indexed_at REAL
);

CREATE TABLE IF NOT EXISTS folders (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    added_at REAL NOT NULL
);

-- Paths on disk that hold a document; the same bytes at two paths are one document.
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    size INTEGER NOT NULL,
    mtime REAL NOT NULL,
    folder_id INTEGER REFERENCES folders(id) ON DELETE SET NULL
);
CREATE INDEX IF NOT EXISTS files_doc ON files(doc_id);

CREATE TABLE IF NOT EXISTS pages (
    doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    number INTEGER NOT NULL,
    start INTEGER NOT NULL,              -- offset in the joined document text
    text TEXT NOT NULL,
    PRIMARY KEY (doc_id, number)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS blocks (
    id INTEGER PRIMARY KEY,
    doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    page INTEGER NOT NULL,
    page_end INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    text TEXT NOT NULL,
    UNIQUE (doc_id, ordinal)
);

-- AUTOINCREMENT: ids are never reused, so the FAISS cache can tell an old id from a new one.
CREATE TABLE IF NOT EXISTS passages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    block_id INTEGER NOT NULL REFERENCES blocks(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    page INTEGER NOT NULL,
    page_end INTEGER NOT NULL,
    text TEXT NOT NULL,
    embedding BLOB NOT NULL              -- float32, L2-normalized
);
CREATE INDEX IF NOT EXISTS passages_doc ON passages(doc_id);
CREATE INDEX IF NOT EXISTS passages_block ON passages(block_id);

-- Pages whose text was recognised by OCR: its confidence and, as JSON, each line's offsets in
-- the page text and its box on the page image ([start, end, x0, y0, x1, y1, score], boxes as
-- fractions of the image), for citations drawn on the page.
CREATE TABLE IF NOT EXISTS ocr_pages (
    doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    number INTEGER NOT NULL,
    confidence REAL NOT NULL,
    rotated INTEGER NOT NULL DEFAULT 0,  -- the image was turned this many degrees clockwise to read it,
    skew REAL NOT NULL DEFAULT 0,        -- then this many to level it: the boxes are of that image
    lines TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (doc_id, number)
) WITHOUT ROWID;

-- rowid = passages.id; `tokens` is written by ingest.keywords.index_tokens.
CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts USING fts5(tokens, tokenize = 'unicode61 remove_diacritics 2');

-- Cascaded deletes fire triggers too, so removing a document clears its keyword rows.
CREATE TRIGGER IF NOT EXISTS passages_fts_delete AFTER DELETE ON passages BEGIN
    DELETE FROM passages_fts WHERE rowid = old.id;
END;

-- A number that moves whenever the set of searchable passages may have changed: a passage added
-- or removed, a document's status or embedding model changed. The dense index records the number
-- it was built at, so opening a library of a million passages need not count them to trust it.
-- Triggers keep it, so every writer (another process too) moves it.
-- It starts at the microseconds since 1970, so a counter made anew (a migration) never repeats a
-- number that a signature recorded before it.
CREATE TABLE IF NOT EXISTS passage_changes (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
INSERT OR IGNORE INTO passage_changes VALUES (1, CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER));
CREATE TRIGGER IF NOT EXISTS passage_changes_insert AFTER INSERT ON passages BEGIN
    UPDATE passage_changes SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS passage_changes_delete AFTER DELETE ON passages BEGIN
    UPDATE passage_changes SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS passage_changes_document AFTER UPDATE OF status, embed_model ON documents BEGIN
    UPDATE passage_changes SET n = n + 1;
END;

-- Model outputs of the summary map and reduce steps, keyed by a hash of everything that
-- shaped them (prompt version, model, style, language, input text). Keyed by content, not
-- by document, so a re-indexed or re-added file finds its summaries again.
CREATE TABLE IF NOT EXISTS summary_cache (
    key TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL,
    kind TEXT NOT NULL,                  -- map | reduce | overview
    text TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS summary_cache_doc ON summary_cache(doc_id);

CREATE TABLE IF NOT EXISTS chats (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);

CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY,
    chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content TEXT NOT NULL,
    question TEXT NOT NULL DEFAULT '',   -- user turns: the stand-alone question that was searched
    sources TEXT NOT NULL DEFAULT '[]',  -- assistant turns: JSON list of the sources it was given
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_chat ON messages(chat_id, id);
"""


# The library's one connection is shared by the window's, serve's and MCP's threads. From Python
# 3.12 on, two threads running the same SQL on one connection share its cached prepared statement,
# and reads fail with "bad parameter or other API misuse" or rows of None (seen on the GPU machine
# at 8 concurrent answers; tests/ingest/test_concurrent_reads.py). Without the statement cache each
# execute prepares its own (microseconds against a question's milliseconds).
NO_SHARED_STATEMENTS = 0


def connect(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(
        path, timeout=30.0, isolation_level=None, check_same_thread=False, cached_statements=NO_SHARED_STATEMENTS
    )
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: a power cut loses at most the last commits
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def open_database(folder: Path) -> tuple[sqlite3.Connection, type[LibraryError] | None]:
    """The library's connection, and the error every write will raise (None when it can write).

    A folder or database that cannot be written (a read-only mount, permissions) is opened
    read-only, so that list, search and ask still work; so is a library on a disk so full that
    SQLite cannot open it for writing. A full disk, a read-only library and a damaged database
    become their LibraryError (open_errors)."""
    db = folder / DB_NAME
    conn = None
    blocked: type[LibraryError] = LibraryReadOnly
    try:
        make_folder(folder)
        if writable(folder):
            try:
                conn = connect(str(db))
                migrate(conn, folder)
                return conn, None
            except sqlite3.OperationalError as exc:
                blocked = _cannot_write(exc, folder, db)
                log.info("the library at %s cannot be written (%s): opening it read-only", folder, exc)
                if conn is not None:
                    conn.close()
                    conn = None
        if not db.exists():
            raise cannot_create(folder)
        conn = read_only_connection(db)
        check_version(conn, folder)
        return conn, blocked
    except (sqlite3.DatabaseError, OSError) as exc:
        if conn is not None:
            conn.close()
        known = storage_error(exc, folder)
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise known or LibraryError(f"cannot open the library at {folder}: {reason}") from exc
    except LibraryError:
        if conn is not None:
            conn.close()
        raise


def _cannot_write(exc: sqlite3.OperationalError, folder: Path, db: Path) -> type[LibraryError]:
    """Why SQLite could not open an existing library for writing; re-raises any other failure."""
    code = code_of(exc)
    if db.exists() and code in ("SQLITE_READONLY", "SQLITE_CANTOPEN"):
        return LibraryReadOnly
    if db.exists() and (code == "SQLITE_FULL" or (code == "SQLITE_IOERR" and disk_full(folder))):
        return LibraryFull  # not even the -shm file fits
    raise exc


def stored_version(conn: sqlite3.Connection, folder: Path) -> int:
    row = conn.execute("SELECT name FROM sqlite_master WHERE name = 'meta'").fetchone()
    found = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() if row else None
    if found is None:
        return 0
    try:
        version = int(found[0])
    except (TypeError, ValueError):
        raise LibraryDamaged(folder, f"its schema version is {found[0]!r}, not a number") from None
    if version > SCHEMA_VERSION:
        raise LibraryError(
            f"this library was written by a newer DocDesk (schema {version}, this one knows {SCHEMA_VERSION}): "
            "update DocDesk"
        )
    return version


def _up_to_date(conn: sqlite3.Connection, folder: Path) -> bool:
    """The schema is the current one and nothing of it is missing: opening need not write."""
    if stored_version(conn, folder) != SCHEMA_VERSION:
        return False
    present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    return set(_SCHEMA_OBJECTS) <= present


def check_version(conn: sqlite3.Connection, folder: Path) -> None:
    """For a read-only connection: the library must not need a migration (that writes)."""
    if not _up_to_date(conn, folder):
        raise LibraryReadOnly(folder, f" and needs an upgrade to schema {SCHEMA_VERSION} (which writes)")


def migrate(conn: sqlite3.Connection, folder: Path | None = None) -> None:
    if _up_to_date(conn, folder or Path(".")):
        return  # nothing to write: a library on a full disk still opens
    conn.executescript(
        "BEGIN;" + SCHEMA + f"INSERT OR REPLACE INTO meta VALUES ('schema_version', '{SCHEMA_VERSION}');COMMIT;"
    )


_SCHEMA_OBJECTS = re.findall(r"CREATE (?:VIRTUAL )?(?:TABLE|INDEX|TRIGGER) IF NOT EXISTS (\w+)", SCHEMA)
