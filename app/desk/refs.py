"""What a user names a document or a file by, as data: shown in one short line whatever its length,
and a path given to `add` made absolute without `~user` of nobody raising."""

from __future__ import annotations

from pathlib import Path

from ingest.store.library import ref_path

MAX_DOC_IDS = 1000  # documents one question may be restricted to (`doc_ids`, `--doc`)


def shown_ref(ref: str, most: int = 80) -> str:
    """`ref` quoted for a message: a 100,000-character id is shown by its start and its length."""
    if len(ref) <= most:
        return repr(ref)
    return f"{ref[: most - 20]!r}… ({len(ref):,} characters)"


def shown_path(path: str, most: int = 240) -> str:
    """A path for a line of output: one of 100,000 characters is shown by its ends and its length."""
    if len(path) <= most:
        return path
    return f"{path[: most // 2]}…{path[-most // 4 :]} ({len(path):,} characters)"


def user_path(raw: str) -> Path:
    """A path from the command line, absolute: `~` is the home folder, `~user` that user's, and a
    `~name` of no user stays as written (the shell leaves it so too; `add` then says it is missing)."""
    absolute = ref_path(raw)
    if absolute is not None:
        return Path(absolute)
    try:  # too long to be a path, or not text: absolute all the same, so nothing expands it again
        return Path.cwd() / raw
    except OSError:
        return Path(raw)


def is_file(path: Path) -> bool:
    """Path.is_file, False too for a name the system cannot look up (longer than NAME_MAX)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False
