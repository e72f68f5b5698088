"""Which files an `add` or `sync` considers, and why a path given by the user is not one.

Every problem becomes a reason beside the path instead of an exception, so one odd entry (a
name that is not UTF-8, a folder it may not open, a named pipe, a link loop) costs only itself.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from ingest.readers.sniff import is_supported_name

HOLD_SHARE = 0.5  # more than this share of a folder's files gone in one sync: ask first
HOLD_MIN_FILES = 3  # ...once at least this many are gone


def printable(path: Path | str) -> str:
    """The path as text that can be printed, stored and sent as JSON: bytes that are not UTF-8
    (kept by Python as lone surrogates) are shown as \\xNN."""
    return os.fsencode(str(path)).decode("utf-8", "backslashreplace")


def _utf8_name(path: Path) -> bool:
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def expand_paths(paths: Iterable[Path]) -> tuple[list[tuple[Path, Path | None]], list[dict]]:
    """Files to consider, each with the folder it came from; plus paths that cannot be, with why."""
    found: list[tuple[Path, Path | None]] = []
    failed: list[dict] = []
    for raw in paths:
        path = Path(raw).expanduser().absolute()
        problem = not_a_file_reason(path)
        if problem == "folder":
            _walk(path, found, failed)
        elif problem is not None:
            failed.append({"path": printable(path), "reason": problem})
        elif not _utf8_name(path):
            failed.append({"path": printable(path), "reason": _NOT_UTF8})
        else:
            found.append((path, None))
    return found, failed


_NOT_UTF8 = "its name is not valid UTF-8, which the library cannot store: rename the file"


def _walk(root: Path, found: list, failed: list) -> None:
    def unreadable(error: OSError) -> None:
        failed.append({"path": printable(error.filename), "reason": f"cannot open the folder: {error.strerror}"})

    for folder, dirs, names in os.walk(root, onerror=unreadable):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            candidate = Path(folder) / name
            if not is_supported_name(candidate):
                continue
            if not _utf8_name(candidate):
                failed.append({"path": printable(candidate), "reason": _NOT_UTF8})
            elif candidate.is_file():
                found.append((candidate, root))


def not_a_file_reason(path: Path) -> str | None:
    """None for a regular file, "folder" for a folder, otherwise why it cannot be added."""
    try:
        info = path.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a loop of symbolic links: it leads back to itself"
        if exc.errno in (errno.ENOENT, errno.ENOTDIR) and path.is_symlink():
            return f"a link to something that does not exist: {printable(os.readlink(path))}"
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return "no such file or folder"
        return f"cannot look at it: {exc.strerror}"
    if stat.S_ISDIR(info.st_mode):
        return "folder"
    if stat.S_ISREG(info.st_mode):
        return None
    kind = (
        "a named pipe (FIFO)"
        if stat.S_ISFIFO(info.st_mode)
        else "a socket"
        if stat.S_ISSOCK(info.st_mode)
        else "a device"
    )
    return f"not a regular file but {kind}: only documents can be added"


def present(path: str) -> bool | None:
    """Whether a file the library knows is still there; None when that cannot be told (a folder
    on the way became unreadable), in which case its document is kept."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return False
    except NotADirectoryError:
        return False
    except OSError:
        return None
    return True


def mass_removal(root: Path, gone: int, files: int) -> bool:
    """All of a folder's files gone and nothing left in it (what an unmounted drive looks like),
    or most of them gone at once."""
    if gone >= HOLD_MIN_FILES and gone > HOLD_SHARE * files:
        return True
    return gone == files and not _holds_a_file(root)


def _holds_a_file(root: Path) -> bool:
    for _, _, names in os.walk(root):  # errors (an unreadable subfolder) are skipped, not raised
        if names:
            return True
    return False
