"""`docdesk repair`: a damaged library database is set aside (never deleted), what only it held
is carried over (folders, files, chats, cached summary steps), and the files are indexed again."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ingest.errors import LibraryError
from ingest.pipeline import AddReport
from ingest.store.open_errors import (
    DB_NAME,
    LibraryDamaged,
    LibraryReadOnly,
    damage,
    read_only_connection,
    writable,
)
from ingest.store.salvage import Salvage, read_damaged, restore_rows, set_aside
from ingest.store.schema import stored_version


@dataclass
class RepairReport:
    damage: str
    salvage: Salvage
    added: AddReport

    def as_dict(self) -> dict:
        salvage = self.salvage
        return {
            "damage": self.damage,
            "set_aside": str(salvage.set_aside),
            "folders": salvage.folders,
            "files": salvage.files,
            "kept": {table: salvage.kept(table) for table in salvage.rows},
            "unreadable": salvage.unreadable,
            **self.added.as_dict(),
        }


def diagnose(folder: Path) -> str | None:
    """What is wrong with the library database at `folder`, or None when SQLite finds it sound."""
    detail = damage(folder, thorough=True)
    if detail is not None:
        return detail
    try:
        conn = read_only_connection(folder / DB_NAME)
    except LibraryError:
        return None
    try:
        stored_version(conn, folder)
    except LibraryDamaged as exc:
        return exc.detail
    finally:
        conn.close()
    return None


def repair(desk, on_progress=None) -> RepairReport | None:
    """Repair the façade's library (not opened yet); None when there is nothing to repair."""
    folder = Path(desk.settings.library)
    if not (folder / DB_NAME).exists():
        raise LibraryError(f"no library at {folder}")
    if not writable(folder):
        raise LibraryReadOnly(folder)
    detail = diagnose(folder)
    if detail is None:
        return None
    salvage = read_damaged(folder)
    salvage.set_aside = set_aside(folder)
    restore_rows(desk.library, salvage)  # the façade opens a new, empty library here
    for remembered in salvage.folders:  # an unmounted one too: sync finds it when it is back
        desk.library.remember_folder(remembered)
    folders = [Path(p) for p in salvage.folders]
    loose = [Path(p) for p in salvage.files if not any(Path(p).is_relative_to(f) for f in folders)]
    paths = folders + loose
    return RepairReport(detail, salvage, desk.add(paths, on_progress=on_progress) if paths else AddReport())
