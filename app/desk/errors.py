"""The exit codes of every `docdesk` command and the one-line reason printed for a failure.

    0  ok
    1  some inputs failed (the rest was done)
    2  a usage error or a library error (damaged, unknown document, bad settings, a model)
    3  the disk holding the library is full, or the library is read-only

The user never sees a traceback for their own files or disk: `-v` logs it.
"""

from __future__ import annotations

import errno
import logging
import sqlite3
from pathlib import Path

from app.desk.serve_settings import ServeRefused
from app.desk.settings import SettingsError
from engine.errors import EngineError
from ingest.errors import IngestError
from ingest.store.open_errors import code_of, storage_error

log = logging.getLogger(__name__)

OK, SOME_FAILED, LIBRARY_ERROR, NO_WRITE = 0, 1, 2, 3
NO_HOME = "Could not determine home directory."  # pathlib's words


def explain(exc: BaseException, library: Path | None) -> tuple[str, int] | None:
    """(one-line reason, exit code) for an error of the library, the disk, the settings or a
    model; None for anything else (a bug, whose traceback is worth seeing)."""
    if isinstance(exc, IngestError | EngineError | SettingsError | ServeRefused):
        return str(exc), getattr(exc, "exit_code", LIBRARY_ERROR)
    if isinstance(exc, RuntimeError) and str(exc) == NO_HOME:  # Path.expanduser of `~name`, name no user
        return "a path begins with ~name, and this machine has no user of that name: give the full path", LIBRARY_ERROR
    if not isinstance(exc, OSError | sqlite3.Error):
        return None
    log.info("%s: %s", type(exc).__name__, exc, exc_info=exc)  # the traceback: in the log file, and with -v
    if isinstance(exc, OSError):
        return _os_error(exc, library)
    known = storage_error(exc, library) if library is not None else None
    if known is not None:
        return str(known), getattr(known, "exit_code", LIBRARY_ERROR)
    if code_of(exc) in ("SQLITE_BUSY", "SQLITE_LOCKED"):
        return f"the library at {library} is busy (another DocDesk is writing to it): try again", LIBRARY_ERROR
    return f"library error: {exc}", LIBRARY_ERROR


def _os_error(exc: OSError, library: Path | None) -> tuple[str, int]:
    """A file or disk error: the library's own (full, read-only) by its message, any other in plain words."""
    name = exc.filename if isinstance(exc.filename, str) else None
    if library is not None and (name is None or Path(name).absolute().is_relative_to(Path(library).absolute())):
        known = storage_error(exc, library)
        if known is not None:
            return str(known), getattr(known, "exit_code", LIBRARY_ERROR)
    code = NO_WRITE if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS) else LIBRARY_ERROR
    return f"{exc.strerror or exc}{f': {name}' if name else ''}", code
