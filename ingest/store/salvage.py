"""`docdesk repair`: set a damaged library database aside and carry over what can still be read.

What is derived from the files (pages, passages, vectors) is not copied: the files are indexed
again from where the library saw them. What only the library holds is copied as far as SQLite
can still read it: the remembered folders and files, the chats and the cached summary steps.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from ingest.store.library import Library
from ingest.store.open_errors import DB_NAME, read_only_connection

log = logging.getLogger(__name__)

KEPT_TABLES = ("chats", "messages", "summary_cache")  # what only the library holds


@dataclass
class Salvage:
    set_aside: Path | None = None  # where the damaged database went
    folders: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # files not under a remembered folder
    rows: dict[str, tuple[list[str], list[tuple]]] = field(default_factory=dict)  # table: (columns, rows)
    unreadable: list[str] = field(default_factory=list)  # tables that could not be read to the end

    def kept(self, table: str) -> int:
        return len(self.rows.get(table, ([], []))[1])


def _read(conn: sqlite3.Connection, sql: str, salvage: Salvage, table: str) -> list[tuple]:
    """The rows a query gives before the damage stops it."""
    rows: list[tuple] = []
    try:
        for row in conn.execute(sql):
            rows.append(tuple(row))
    except sqlite3.DatabaseError as exc:
        log.warning("library repair: %s read as far as row %d: %s", table, len(rows), exc)
        salvage.unreadable.append(table)
    return rows


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def read_damaged(folder: Path) -> Salvage:
    """What can be read of the library database at `folder`."""
    salvage = Salvage()
    try:
        conn = read_only_connection(Path(folder) / DB_NAME)
    except Exception as exc:  # page 1 gone: nothing of it can be read
        log.warning("library repair: the database cannot be opened at all: %s", exc)
        salvage.unreadable.append("everything")
        return salvage
    try:
        salvage.folders = [r[0] for r in _read(conn, "SELECT path FROM folders", salvage, "folders")]
        loose = "SELECT path FROM files WHERE folder_id IS NULL UNION SELECT path FROM documents"
        salvage.files = sorted({r[0] for r in _read(conn, loose, salvage, "files")})
        for table in KEPT_TABLES:
            try:
                names = _columns(conn, table)
            except sqlite3.DatabaseError:
                names = []
            if names:
                salvage.rows[table] = (names, _read(conn, f"SELECT {', '.join(names)} FROM {table}", salvage, table))
    finally:
        conn.close()
    return salvage


def set_aside(folder: Path) -> Path:
    """Move the damaged database (with its -wal and -shm, which belong to it) out of the way."""
    target = Path(folder) / f"library.damaged-{time.strftime('%Y%m%d-%H%M%S')}.sqlite"
    for suffix in ("", "-wal", "-shm"):
        source = Path(folder) / (DB_NAME + suffix)
        if source.exists():
            os.replace(source, target.with_name(target.name + suffix))
    (Path(folder) / "vectors.faiss").unlink(missing_ok=True)  # derived from the old database
    return target


def restore_rows(library: Library, salvage: Salvage) -> None:
    """Copy the kept rows into the new library (a message whose chat was lost is dropped)."""
    with library.transaction() as conn:
        for table in KEPT_TABLES:
            names, rows = salvage.rows.get(table, ([], []))
            keep = [i for i, name in enumerate(names) if name in set(_columns(conn, table))]
            if rows and keep:
                columns = ", ".join(names[i] for i in keep)
                marks = ", ".join("?" * len(keep))
                values = [tuple(row[i] for i in keep) for row in rows]
                conn.executemany(f"INSERT OR IGNORE INTO {table} ({columns}) VALUES ({marks})", values)
        conn.execute("DELETE FROM messages WHERE chat_id NOT IN (SELECT id FROM chats)")
