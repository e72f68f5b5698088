"""Cached outputs of the summary steps: a cancelled or crashed summary resumes from here."""

from __future__ import annotations

import hashlib
import logging
import time

from ingest.store.library import Library
from ingest.store.open_errors import LibraryFull, LibraryReadOnly

log = logging.getLogger(__name__)


def cache_key(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        encoded = part.encode("utf-8")
        digest.update(len(encoded).to_bytes(8, "little"))  # length-prefixed: ("ab","c") != ("a","bc")
        digest.update(encoded)
    return digest.hexdigest()


class SummaryCache:
    def __init__(self, library: Library) -> None:
        self.library = library
        self.unwritable: str | None = None  # why steps are not being kept

    def get(self, key: str) -> str | None:
        row = self.library.conn.execute("SELECT text FROM summary_cache WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put(self, key: str, doc_id: str, kind: str, text: str) -> None:
        """Keep one step's output. On a read-only or full library the summary goes on without
        the cache (it cannot resume then, but it is not lost either): a warning says so once."""
        if self.unwritable is None and self.library.read_only:
            self.unwritable = "the library is read-only"
            log.warning("summary steps are not cached (a stopped summary starts over): the library is read-only")
        if self.unwritable is not None:
            return
        try:
            # One short transaction each, so every finished step survives a crash of the next.
            with self.library.transaction() as conn:
                conn.execute(
                    "INSERT OR REPLACE INTO summary_cache (key, doc_id, kind, text, created_at) VALUES (?, ?, ?, ?, ?)",
                    (key, doc_id, kind, text, time.time()),
                )
        except (LibraryReadOnly, LibraryFull) as exc:
            self.unwritable = str(exc)
            log.warning("summary steps are not cached (a stopped summary starts over): %s", exc)

    def count(self, doc_id: str) -> int:
        return self.library.conn.execute("SELECT count(*) FROM summary_cache WHERE doc_id = ?", (doc_id,)).fetchone()[0]
