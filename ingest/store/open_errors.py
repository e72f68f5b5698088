"""What a failing SQLite or file-system call means for the library: a full disk, a read-only
library or a damaged database, each as a LibraryError whose message says what to do.

A damaged database is told apart from other errors by SQLite's own checks: `PRAGMA
quick_check` after an error, `PRAGMA integrity_check` when a read came back empty (a page
overwritten with what looks like an empty page raises nothing: the table just seems empty).
"""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ingest.errors import LibraryError

log = logging.getLogger(__name__)

DB_NAME = "library.sqlite"
REPAIR_COMMAND = "docdesk repair"

_FULL_CODES = {"SQLITE_FULL"}
_READ_ONLY_CODES = {"SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM"}
_DAMAGE_CODES = {"SQLITE_CORRUPT", "SQLITE_NOTADB"}
_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
_READ_ONLY_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM}


class LibraryFull(LibraryError):
    """The disk (or quota) holding the library has no space left."""

    exit_code = 3

    def __init__(self, folder: Path) -> None:
        super().__init__(
            f"the disk holding the library ({folder}) is full: free space and run again — nothing was lost"
        )
        self.folder = folder


class LibraryReadOnly(LibraryError):
    """The library's folder or database cannot be written."""

    exit_code = 3

    def __init__(self, folder: Path, detail: str = "", message: str = "") -> None:
        super().__init__(
            message
            or f"the library at {folder} is read-only{detail}: search, list, ask and summarize work, "
            "add, remove and sync need write access"
        )
        self.folder = folder


def cannot_create(folder: Path) -> LibraryReadOnly:
    """No library yet, and none can be made here."""
    return LibraryReadOnly(folder, message=f"cannot create a library at {folder}: the folder or its disk is read-only")


class LibraryDamaged(LibraryError):
    """SQLite's own check finds the database damaged."""

    exit_code = 2

    def __init__(self, folder: Path, detail: str) -> None:
        super().__init__(
            f"the library database is damaged ({detail}): restore {Path(folder) / DB_NAME} from a backup, "
            f"or run `{REPAIR_COMMAND}` to set it aside and index again the files and folders it names"
        )
        self.folder = folder
        self.detail = detail


def code_of(exc: BaseException) -> str:
    """SQLite's primary result code: SQLITE_IOERR for SQLITE_IOERR_SHMSIZE and the like."""
    return "_".join((getattr(exc, "sqlite_errorname", "") or "").split("_")[:2])


def storage_error(exc: BaseException, folder: Path, conn: sqlite3.Connection | None = None) -> LibraryError | None:
    """The LibraryError `exc` means for the library at `folder`, or None when it is not one of a
    full disk, a read-only library or a damaged database."""
    if isinstance(exc, LibraryError):
        return exc
    if isinstance(exc, OSError):
        if exc.errno in _FULL_ERRNOS:
            return LibraryFull(folder)
        if exc.errno in _READ_ONLY_ERRNOS:
            return LibraryReadOnly(folder)
        return None
    if not isinstance(exc, sqlite3.DatabaseError):
        return None
    code = code_of(exc)
    if code in _FULL_CODES or (code == "SQLITE_IOERR" and disk_full(folder)):  # a -shm that cannot grow
        return LibraryFull(folder)
    if code in _READ_ONLY_CODES:
        return LibraryReadOnly(folder)
    if code not in _DAMAGE_CODES and type(exc) is not sqlite3.DatabaseError:
        return None  # busy, locked, a constraint, a bad statement: not the disk's doing
    detail = damage(folder, conn) or damage(folder, conn, thorough=True)
    if detail is None and code in _DAMAGE_CODES:
        detail = str(exc)
    return LibraryDamaged(folder, detail) if detail else None


@contextmanager
def storage_errors(folder: Path, conn: sqlite3.Connection | None = None) -> Iterator[None]:
    """Turn what a full disk, a read-only library or a damaged database raises into its LibraryError."""
    try:
        yield
    except (sqlite3.DatabaseError, OSError) as exc:
        known = storage_error(exc, folder, conn)
        if known is None or known is exc:
            raise
        raise known from exc


def damage(folder: Path, conn: sqlite3.Connection | None = None, thorough: bool = False) -> str | None:
    """What SQLite's check says is wrong with the library's database, or None if it passes.

    `thorough` runs integrity_check (it also compares each index with its table: an emptied
    table page is seen only so); otherwise quick_check (every page, no index comparison)."""
    pragma = "integrity_check(3)" if thorough else "quick_check(3)"
    own = conn is None
    try:
        if own:
            conn = read_only_connection(Path(folder) / DB_NAME)
        rows = [r[0] for r in conn.execute(f"PRAGMA {pragma}")]
    except LibraryError as exc:
        log.info("cannot check the library database: %s", exc)
        return None
    except sqlite3.DatabaseError as exc:
        if code_of(exc) in _DAMAGE_CODES or not isinstance(exc, sqlite3.OperationalError):
            return str(exc)
        log.info("cannot check the library database: %s", exc)
        return None
    finally:
        if own and conn is not None:
            conn.close()
    if rows == ["ok"]:
        return None
    lines = [line for row in rows for line in str(row).splitlines() if not line.startswith("***")]
    return "SQLite's integrity check: " + ("; ".join(lines[:2]) or "failed")


def make_folder(folder: Path) -> None:
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if exc.errno in _READ_ONLY_ERRNOS:
            raise cannot_create(folder) from exc
        raise


def disk_full(folder: Path) -> bool:
    try:
        return os.statvfs(folder).f_bavail == 0
    except OSError:
        return False


def writable(folder: Path) -> bool:
    """Whether the library's folder and database files can be written (a read-only mount too)."""
    db = Path(folder) / DB_NAME
    paths = [Path(folder), db, db.with_name(DB_NAME + "-wal"), db.with_name(DB_NAME + "-shm")]
    return all(os.access(p, os.W_OK) for p in paths if p.exists())


def read_only_connection(db: Path) -> sqlite3.Connection:
    """A connection that never writes. SQLite needs the -shm file of a WAL database even to read;
    where it cannot make one (a read-only folder, a full disk) the file is opened as immutable,
    which is right as long as no -wal file holds commits not yet in the database."""
    uri = Path(db).absolute().as_uri() + "?mode=ro"
    try:
        return _open(uri)
    except sqlite3.OperationalError as exc:
        if code_of(exc) not in ("SQLITE_CANTOPEN", "SQLITE_IOERR") or not Path(db).exists():
            raise  # CANTOPEN: no -shm can be made here; IOERR: none fits on the disk
    wal = Path(str(db) + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        folder = Path(db).parent
        raise LibraryReadOnly(
            folder,
            message=f"the library at {folder} is read-only and its {wal.name} holds commits not yet in the "
            "database: open it once with write access, or copy the folder somewhere writable",
        )
    return _open(uri + "&immutable=1")


def _open(uri: str) -> sqlite3.Connection:
    conn = sqlite3.connect(  # no statement cache: shared by threads (ingest/store/schema.py, connect)
        uri, uri=True, timeout=30.0, isolation_level=None, check_same_thread=False, cached_statements=0
    )
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opening is lazy: make it happen
    except BaseException:
        conn.close()
        raise
    conn.row_factory = sqlite3.Row
    return conn
