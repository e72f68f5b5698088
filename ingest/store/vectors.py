"""`vectors.faiss`: a derived, disposable copy of the passage embeddings kept in SQLite.

It is written to a temporary file and renamed into place, and its signature (model,
dimension, passage count, highest passage id, and the SHA-256 of the file as written) is
recorded in SQLite after the rename. A file whose checksum is not the one recorded (copied
from another library, older or newer than a database restored from a backup, damaged) is
never trusted, not even for an incremental repair: it is rebuilt from SQLite. So is a file
that fails to load in any way. A crash at any moment costs at most a rebuild.

One VectorIndex per library and process (the façade owns it and hands it to the ingestor
and the retriever). The loaded index also notices writes it was not told about, from
another process or another object on the same library: `Library.version()` changes with
every commit, and only then is the signature read again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .library import Library
from .open_errors import LibraryFull, LibraryReadOnly

if TYPE_CHECKING:
    import numpy as np

    from ..embedding import Embedder

log = logging.getLogger(__name__)

INDEX_NAME = "vectors.faiss"
SIGNATURE_KEY = "faiss_signature"


class VectorIndex:
    def __init__(self, library: Library, embedder: Embedder) -> None:
        self.library = library
        self.embedder = embedder
        self.embed_model = embedder.name
        self.path = library.folder / INDEX_NAME
        self._index = None
        self._synced_at: tuple[int, int] | None = None  # library.version() when last known in line
        self._held: dict | None = None  # the signature of what the loaded index holds
        self._lock = threading.RLock()  # the ingest thread refreshes while a search reads

    @property
    def dim(self) -> int:
        # From the library when it was embedded with this model: a removal need not load the model.
        if self.library.meta("embedding_model") == self.embed_model:
            stored = self.library.meta("embedding_dim")
            if stored is not None:
                return int(stored)
        return self.embedder.dim

    def _verified(self, stored: dict):
        """The index in the file, if it is the one this library wrote (its checksum), else None."""
        if not stored.get("file") or not self.path.exists():
            return None
        try:
            import faiss
            import numpy as np

            data = self.path.read_bytes()
            if hashlib.sha256(data).hexdigest() != stored["file"]:
                log.warning("vector cache %s is not the one this library wrote: rebuilding", self.path)
                return None
            index = faiss.deserialize_index(np.frombuffer(data, dtype=np.uint8))
        except Exception as exc:  # MemoryError too: a damaged length field makes FAISS allocate petabytes
            log.warning("vector cache unreadable, rebuilding: %s", exc)
            return None
        return index if index.d == self.dim and index.ntotal == stored.get("count") else None

    def _signature(self, ids: list[int]) -> dict:
        return {"model": self.embed_model, "dim": self.dim, "count": len(ids), "max_id": ids[-1] if ids else 0}

    def _current_signature(self) -> dict:
        row = self.library.conn.execute(
            "SELECT count(*), coalesce(max(p.id), 0) FROM passages p JOIN documents d ON d.id = p.doc_id "
            "WHERE d.embed_model = ? AND d.status = 'indexed'",
            (self.embed_model,),
        ).fetchone()
        return {"model": self.embed_model, "dim": self.dim, "count": row[0], "max_id": row[1]}

    def _new_index(self):
        import faiss

        return faiss.IndexIDMap2(faiss.IndexFlatIP(self.dim))

    def index(self):
        """The in-memory index, loaded from disk or repaired from SQLite as needed."""
        with self._lock:
            if self._index is not None:
                if self._synced_at != self.library.version():
                    self.refresh()  # the library changed since: bring the loaded index in line
                return self._index
            version = self.library.version()
            stored = self._stored()
            if _content(stored) == self._current_signature():
                index = self._verified(stored)
                if index is not None:
                    self._index, self._synced_at, self._held = index, version, _content(stored)
                    return index
            self.refresh(force=True)
            return self._index

    def refresh(self, force: bool = False) -> bool:
        """Make the index match SQLite, adding and removing only what differs. True if it changed."""
        with self._lock:
            version = self.library.version()  # before reading: a commit after it is seen next time
            stored = self._stored()
            current = self._current_signature()
            if not force and _content(stored) == current:
                if self._index is None and self.path.exists():
                    return False  # nothing changed since the last write: skip loading FAISS at all
                if self._index is not None and self._held == current:
                    self._synced_at = version  # ids only grow (AUTOINCREMENT): same count and max, same set
                    return False
            changed = self._bring_in_line(stored)
            self._synced_at = version
            return changed

    def _bring_in_line(self, stored: dict) -> bool:
        import faiss
        import numpy as np

        ids = self.library.passage_ids(self.embed_model)
        index = self._index if self._index is not None else self._verified(stored)
        if index is None or stored.get("model") != self.embed_model:
            index = self._new_index()
        have = faiss.vector_to_array(index.id_map) if index.ntotal else np.zeros(0, dtype=np.int64)
        want = np.asarray(ids, dtype=np.int64)
        stale = np.setdiff1d(have, want, assume_unique=True)
        missing = np.setdiff1d(want, have, assume_unique=True)
        if len(stale):
            index.remove_ids(faiss.IDSelectorBatch(stale))
        for batch_ids, blobs in self.library.embeddings(missing.tolist()):
            vectors = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), self.dim)
            index.add_with_ids(vectors, np.asarray(batch_ids, dtype=np.int64))
        signature = self._signature(ids)
        self._index, self._held = index, signature
        changed = bool(len(stale) or len(missing)) or _content(stored) != signature or not self.path.exists()
        if changed or not stored.get("file"):
            self._save(index, signature)
        return changed

    def _save(self, index, signature: dict) -> None:
        """Write the cache and record its signature. Where the library cannot be written (read-only,
        the disk full) the index stays in memory only: searching never fails for want of a cache."""
        if self.library.read_only:
            log.info("the library at %s cannot be written: its dense index is kept in memory", self.library.folder)
            return
        try:
            signature["file"] = self._write(index)
            self.library.set_meta(SIGNATURE_KEY, json.dumps(signature))
        except (
            OSError,
            RuntimeError,
            LibraryFull,
            LibraryReadOnly,
        ) as exc:  # faiss reports a failed write as RuntimeError
            log.warning("vector cache %s not written (%s): the index is kept in memory", self.path, _short(exc))

    def _stored(self) -> dict:
        try:
            stored = json.loads(self.library.meta(SIGNATURE_KEY, "{}") or "{}")
        except ValueError:
            return {}
        return stored if isinstance(stored, dict) else {}

    def _write(self, index) -> str:
        """Write the index in place; returns the file's SHA-256."""
        import faiss

        # A name of its own: another process (or another index on this library) may be writing too.
        handle, name = tempfile.mkstemp(prefix="vectors.", suffix=".faiss.tmp", dir=self.path.parent)
        os.close(handle)
        temporary = Path(name)
        temporary.chmod(_library_file_mode(self.path.parent))  # mkstemp's 0600 would hide it from the team
        try:
            faiss.write_index(index, str(temporary))
            with open(temporary, "rb+") as handle:
                digest = hashlib.file_digest(handle, "sha256").hexdigest()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
        finally:
            temporary.unlink(missing_ok=True)
        _remove_leftovers(self.path.parent)
        return digest

    def search(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        import numpy as np

        with self._lock:  # a refresh must not change the index under a search
            index = self.index()
            if index.ntotal == 0:
                return []
            scores, ids = index.search(np.asarray(vector, dtype=np.float32).reshape(1, -1), min(k, index.ntotal))
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i != -1]


def _short(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else lines[-1] if lines else type(exc).__name__


def _content(signature: dict) -> dict:
    """What a signature says of the passages (without the file's checksum)."""
    return {k: v for k, v in signature.items() if k != "file"}


def _remove_leftovers(folder: Path, older_than_s: float = 3600) -> None:
    """Temporary files of writes that a crash cut short (a live write is never that old)."""
    for leftover in folder.glob("vectors.*.faiss.tmp"):
        try:
            if time.time() - leftover.stat().st_mtime > older_than_s:
                leftover.unlink()
        except OSError:
            pass


def _library_file_mode(folder: Path) -> int:
    """The mode the library's database has (who may read it may read its cache), else 0644 less the umask."""
    try:
        return (folder / "library.sqlite").stat().st_mode & 0o666
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o644 & ~mask
