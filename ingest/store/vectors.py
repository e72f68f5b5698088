"""`vectors.faiss`: a derived, disposable copy of the passage embeddings kept in SQLite.

It is written to a temporary file and renamed into place, and its signature (model,
dimension, passage count, highest passage id, the library's passage change number, and the
SHA-256 of the file as written) is recorded in SQLite after the rename. While the change
number is the one recorded, the passages are as the file holds them: opening a library of a
million passages need not count them (a second) to trust its file. A file whose checksum is
not the one recorded (copied from another library, older or newer than a database restored
from a backup, damaged) is never trusted, not even for an incremental repair: it is rebuilt
from SQLite. So is a file
that fails to load in any way. A crash at any moment costs at most a rebuild.

A large library is not rewritten after every document: the file is written once the index
holds UNSAVED_LIMIT changes it lacks (and when the library is closed). After a crash the last
file is loaded (its checksum still matches what SQLite recorded for it) and only the passages
it lacks are added from SQLite: never a full rebuild of a million vectors. Past
ann.APPROXIMATE_FROM passages the index is an IVF one, trained on a thread of its own
(vector_rebuild.py) while the previous index, or keyword search, answers.

One VectorIndex per library and process (the façade owns it and hands it to the ingestor
and the retriever). The loaded index also notices writes it was not told about, from
another process or another object on the same library: `Library.version()` changes with
every commit, and only then is the signature read again.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import TYPE_CHECKING

from ingest.store import ann
from ingest.store.library import Library
from ingest.store.open_errors import LibraryFull, LibraryReadOnly
from ingest.store.vector_file import read_verified, short_reason, write_index
from ingest.store.vector_rebuild import BackgroundRebuild, RebuildProgress

if TYPE_CHECKING:
    import numpy as np

    from ingest.embedding import Embedder

log = logging.getLogger(__name__)

INDEX_NAME = "vectors.faiss"
SIGNATURE_KEY = "faiss_signature"


SMALL = 20_000  # an index this small is written after every change (a fraction of a second)


def unsaved_limit(count: int) -> int:
    """Changes a larger index may hold that its file lacks: what a crash would cost to add back
    from SQLite (~2% of the library, a second or two), against rewriting it after every document."""
    return 0 if count < SMALL else max(5_000, count // 50)


class VectorIndex:
    def __init__(self, library: Library, embedder: Embedder) -> None:
        self.library = library
        self.embedder = embedder
        self.embed_model = embedder.name
        self.path = library.folder / INDEX_NAME
        self._index = None
        self._synced_at: tuple[int, int] | None = None  # library.version() when last known in line
        self._held: dict | None = None  # the signature of what the loaded index holds
        self._unsaved = 0  # vectors added or removed since the file was written
        self._rebuild: BackgroundRebuild | None = None
        self._lock = threading.RLock()  # the ingest thread refreshes while a search reads

    @property
    def dim(self) -> int:
        # From the library when it was embedded with this model: a removal need not load the model.
        if self.library.meta("embedding_model") == self.embed_model:
            stored = self.library.meta("embedding_dim")
            if stored is not None:
                return int(stored)
        return self.embedder.dim

    def _signature(self, ids: list[int], changes: int) -> dict:
        """What an index of these passage ids holds; `changes` is Library.passage_changes() read
        before the ids were (so a commit in between makes the signature look older, never newer)."""
        return {
            "model": self.embed_model,
            "dim": self.dim,
            "count": len(ids),
            "max_id": ids[-1] if ids else 0,
            "changes": changes,
        }

    def _current_signature(self) -> dict:
        """The signature of the passages SQLite holds now: a scan of every passage (~1 s at a million)."""
        changes = self.library.passage_changes()
        row = self.library.conn.execute(
            "SELECT count(*), coalesce(max(p.id), 0) FROM passages p JOIN documents d ON d.id = p.doc_id "
            "WHERE d.embed_model = ? AND d.status = 'indexed'",
            (self.embed_model,),
        ).fetchone()
        return {"model": self.embed_model, "dim": self.dim, "count": row[0], "max_id": row[1], "changes": changes}

    def _describes_now(self, signature: dict, changes: int) -> bool:
        """Whether `signature` names the passages SQLite holds now. The passage change number it was
        taken at says so at once; a different one (passages written since, or a signature from
        before the number existed) means counting the passages."""
        if signature.get("model") != self.embed_model or signature.get("dim") != self.dim:
            return False
        if signature.get("changes") == changes:
            return True
        return _content(signature) == _content(self._current_signature())

    def _verified(self, stored: dict):
        if stored.get("model") != self.embed_model:
            return None
        index = read_verified(self.path, stored.get("file"), self.dim, stored.get("count"))
        if index is not None:
            ann.prepare_loaded(index)
        return index

    def index(self):
        """The in-memory index, loaded from disk or repaired from SQLite as needed; None while a
        library past ann.APPROXIMATE_FROM passages with no usable file has its index built."""
        with self._lock:
            if self._index is not None:
                if self._synced_at != self.library.version():
                    self.refresh()  # the library changed since: bring the loaded index in line
                return self._index
            version = self.library.version()
            stored = self._stored()
            changes = self.library.passage_changes()
            if self._describes_now(stored, changes):
                index = self._verified(stored)
                if index is not None:
                    self._index, self._synced_at = index, version
                    self._held = {**_content(stored), "changes": changes}
                    self._maybe_retrain()
                    return index
            self.refresh(force=True)
            return self._index

    def refresh(self, force: bool = False) -> bool:
        """Make the index match SQLite, adding and removing only what differs. True if it changed."""
        with self._lock:
            version = self.library.version()  # before reading: a commit after it is seen next time
            stored = self._stored()
            changes = self.library.passage_changes()
            if not force:
                if self._index is None and self.path.exists() and self._describes_now(stored, changes):
                    return False  # nothing changed since the last write: skip loading FAISS at all
                if self._index is not None and self._held is not None and self._describes_now(self._held, changes):
                    # ids only grow (AUTOINCREMENT): the same count and highest id is the same set
                    self._held = {**self._held, "changes": changes}
                    self._synced_at = version
                    return False
            changed = self._bring_in_line(stored)
            self._synced_at = version
            return changed

    def _bring_in_line(self, stored: dict) -> bool:
        import faiss
        import numpy as np

        changes = self.library.passage_changes()  # before the ids: see _signature
        ids = self.library.passage_ids(self.embed_model)
        index = self._index if self._index is not None else self._verified(stored)
        if index is None:
            if ann.wants_approximate(len(ids)):
                self._start_rebuild(ids)  # minutes of work at a million: not while the caller waits
                return False
            index = ann.new_exact(self.dim)
        have = ann.ids_of(index)
        want = np.asarray(ids, dtype=np.int64)
        stale = np.setdiff1d(have, want, assume_unique=True)
        missing = np.setdiff1d(want, have, assume_unique=True)
        if len(stale):
            index.remove_ids(faiss.IDSelectorBatch(stale))
        for batch_ids, blobs in self.library.embeddings(missing.tolist()):
            vectors = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), self.dim)
            index.add_with_ids(vectors, np.asarray(batch_ids, dtype=np.int64))
        signature = self._signature(ids, changes)
        if ann.is_approximate(index) and not ann.wants_approximate(len(ids), index):
            index = self._exact_copy(ids)  # shrunk well below the threshold: exact search is cheap again
        self._index, self._held = index, signature
        self._unsaved += len(stale) + len(missing)
        if not stored.get("file") or not self.path.exists() or self._unsaved > unsaved_limit(len(ids)):
            self._save(index, signature)
        self._maybe_retrain(ids)
        return bool(len(stale) or len(missing))

    def _exact_copy(self, ids: list[int]):
        import numpy as np

        index = ann.new_exact(self.dim)
        for batch_ids, blobs in self.library.embeddings(ids):
            vectors = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), self.dim)
            index.add_with_ids(vectors, np.asarray(batch_ids, dtype=np.int64))
        self._unsaved += 1  # a new kind: written at once
        return index

    # -- the approximate index, built in the background ------------------------------------
    def _maybe_retrain(self, ids: list[int] | None = None) -> None:
        if self._index is not None and ann.outgrown(self._index, self._index.ntotal):
            self._start_rebuild(ids if ids is not None else self.library.passage_ids(self.embed_model))

    def _start_rebuild(self, ids: list[int]) -> None:
        if self.library.read_only and self._index is not None:
            return  # it could not be kept: the exact index serves a library nobody may change
        if self._rebuild is not None and self._rebuild.running():
            return  # it adds what arrives meanwhile when it is done
        log.info("building an approximate vector index for %d passages in the background", len(ids))
        self._rebuild = BackgroundRebuild(self.library, ids, self.dim, self._adopt).start()

    def _adopt(self, built) -> None:
        """Called on the rebuild's thread: swap the new index in, add what arrived since, save."""
        with self._lock:
            self._index = built
            self._unsaved = built.ntotal  # the file holds none of it yet
            self._bring_in_line(self._stored())
            self._synced_at = None

    def rebuild_progress(self) -> RebuildProgress | None:
        """How far a background build has got, or None when none is running."""
        rebuild = self._rebuild
        return rebuild.progress if rebuild is not None and rebuild.running() else None

    def wait_for_rebuild(self, timeout: float | None = None) -> bool:
        rebuild = self._rebuild
        return rebuild is None or rebuild.wait(timeout)

    # -- persistence -----------------------------------------------------------------------
    def _save(self, index, signature: dict) -> None:
        """Write the cache and record its signature. Where the library cannot be written (read-only,
        the disk full) the index stays in memory only: searching never fails for want of a cache."""
        if self.library.read_only:
            log.info("the library at %s cannot be written: its dense index is kept in memory", self.library.folder)
            return
        try:
            signature = {**signature, "file": write_index(index, self.path)}
            self.library.set_meta(SIGNATURE_KEY, json.dumps(signature))
            self._unsaved = 0
        except (
            OSError,
            RuntimeError,
            LibraryFull,
            LibraryReadOnly,
        ) as exc:  # faiss reports a failed write as RuntimeError
            log.warning("vector cache %s not written (%s): the index is kept in memory", self.path, short_reason(exc))

    def flush(self) -> None:
        """Write what the file lacks (on closing the library)."""
        with self._lock:
            if self._index is not None and self._held is not None and self._unsaved:
                self._save(self._index, self._held)

    def close(self) -> None:
        rebuild = self._rebuild
        if rebuild is not None:
            rebuild.cancel()
            rebuild.wait(30)
        self.flush()

    def _stored(self) -> dict:
        try:
            stored = json.loads(self.library.meta(SIGNATURE_KEY, "{}") or "{}")
        except ValueError:
            return {}
        return stored if isinstance(stored, dict) else {}

    def search(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        import numpy as np

        query = np.asarray(vector, dtype=np.float32).reshape(1, -1)
        with self._lock:  # a refresh must not change the index under a search
            index = self.index()
            if index is None or index.ntotal == 0:
                return []  # being built: keyword search answers meanwhile
            wide = max(k, ann.RERANK) if ann.is_approximate(index) else k
            scores, ids = index.search(query, min(wide, index.ntotal))
        found = [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i != -1]
        if wide == k:
            return found
        return self._exactly_scored([i for i, _ in found], query[0], k)

    def _exactly_scored(self, ids: list[int], query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The approximate candidates scored against their float embeddings in SQLite."""
        import numpy as np

        got_ids, blobs = [], []
        for batch_ids, batch_blobs in self.library.embeddings(sorted(ids)):
            got_ids += batch_ids
            blobs += batch_blobs
        if not got_ids:
            return []
        scores = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1) @ query
        best = np.argsort(-scores)[:k]
        return [(got_ids[i], float(scores[i])) for i in best]


def _content(signature: dict) -> dict:
    """What a signature says of the passages (without the file's checksum or the change number)."""
    return {k: v for k, v in signature.items() if k not in ("file", "changes")}
