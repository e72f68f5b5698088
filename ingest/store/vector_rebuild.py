"""Training and filling an IVF index from SQLite on a thread of its own.

Training takes seconds at 50,000 passages and about a minute at a million, more than a search
or an ingest may wait. Meanwhile the library's previous index (exact, or an IVF index grown
past its size) keeps answering, or, where there is none (a damaged file), keyword search does.
The VectorIndex that started it takes the result and adds what arrived while it was built.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ingest.store import ann
from ingest.store.library import Library

log = logging.getLogger(__name__)

BATCH = 20_000  # vectors read from SQLite and added at a time; progress moves after each


@dataclass
class RebuildProgress:
    """Where a background build stands: `done` of `total` vectors added (0 while training)."""

    stage: str  # "training" or "adding"
    done: int
    total: int
    started: float

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0


class BackgroundRebuild:
    """One build of an approximate index for `ids`; `on_built(index)` is called on its thread."""

    def __init__(self, library: Library, ids: list[int], dim: int, on_built: Callable[[object], None]) -> None:
        self.library = library
        self.ids = ids
        self.dim = dim
        self.on_built = on_built
        self.progress = RebuildProgress("training", 0, len(ids), time.monotonic())
        self.cancelled = threading.Event()
        self.failed: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="docdesk-vector-rebuild", daemon=True)

    def start(self) -> BackgroundRebuild:
        self._thread.start()
        return self

    def running(self) -> bool:
        return self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> bool:
        """True once it has finished (built, failed or cancelled)."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def cancel(self) -> None:
        self.cancelled.set()

    def _run(self) -> None:
        try:
            index = self._build()
            if index is not None and not self.cancelled.is_set():
                self.on_built(index)
        except Exception as exc:  # noqa: BLE001 - reported; the previous index or keyword search goes on
            self.failed = exc
            log.warning("building the approximate vector index failed: %s", exc)

    def _build(self):
        import numpy as np

        started = time.perf_counter()
        rng = np.random.default_rng(len(self.ids))
        picks = np.sort(rng.choice(len(self.ids), ann.sample_size(len(self.ids)), replace=False))
        sample = self._vectors([self.ids[i] for i in picks])
        index = ann.new_approximate(sample, len(self.ids))
        trained_s = time.perf_counter() - started
        self.progress.stage = "adding"
        for start in range(0, len(self.ids), BATCH):
            if self.cancelled.is_set():
                return None
            batch = self.ids[start : start + BATCH]
            for batch_ids, blobs in self.library.embeddings(batch):
                vectors = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), self.dim)
                index.add_with_ids(vectors, np.asarray(batch_ids, dtype=np.int64))
            self.progress.done = min(len(self.ids), start + BATCH)
        log.info(
            "approximate vector index built: %d passages, %d lists, trained in %.1f s, %.1f s in all",
            index.ntotal,
            index.nlist,
            trained_s,
            time.perf_counter() - started,
        )
        return index

    def _vectors(self, ids: list[int]):
        import numpy as np

        parts = [b"".join(blobs) for _, blobs in self.library.embeddings(ids)]
        return np.frombuffer(b"".join(parts), dtype=np.float32).reshape(-1, self.dim)
