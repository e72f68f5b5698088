"""One document chunked and embedded while its pages arrive from the reader; nothing is stored
until finish(), which embeds the rest and reports passages embedded n of N as it goes."""

from __future__ import annotations

import time
from collections.abc import Callable

from ingest.chunking import Chunker
from ingest.embedding import Embedder, encode_distinct
from ingest.records import Passage

EMBED_CHUNK = 32  # passages per encode call while a document streams in
FINISH_CHUNK = 256  # passages per encode call at the end, between two progress reports


class DocumentBuilder:
    """Chunks and embeds one document while its pages arrive; nothing is stored until finish()."""

    def __init__(self, chunker: Chunker, embedder: Embedder, clock) -> None:
        self.stream = chunker.stream()
        self.embedder = embedder
        self._clock = clock
        self._pending: list[Passage] = []
        self._vectors: list = []
        self._known: dict = {}  # text -> vector: a passage repeated in the document is embedded once
        self.passages = 0

    def add(self, pages) -> None:
        started = time.perf_counter()
        released = self.stream.add_pages(pages)
        self._clock("chunk", started)
        self._embed(released)

    def finish(self, progress: Callable[[int, int], None] = lambda done, total: None):
        """The chunks and their vectors; progress(embedded, of) before each encode call of the rest."""
        started = time.perf_counter()
        self._pending += self.stream.finish()
        self._clock("chunk", started)
        total = self.passages + len(self._pending)
        while self._pending:
            progress(self.passages, total)
            self._encode(FINISH_CHUNK)
        progress(self.passages, total)
        import numpy as np

        dim = self._vectors[0].shape[1] if self._vectors else self.embedder.dim
        vectors = np.vstack(self._vectors) if self._vectors else np.zeros((0, dim), dtype=np.float32)
        return self.stream.chunks, vectors

    def _embed(self, passages: list[Passage]) -> None:
        self._pending += passages
        if len(self._pending) >= EMBED_CHUNK:
            self._encode(len(self._pending))

    def _encode(self, most: int) -> None:
        batch, self._pending = self._pending[:most], self._pending[most:]
        started = time.perf_counter()
        self._vectors.append(encode_distinct(self.embedder, [p.text for p in batch], self._known))
        self._clock("embed", started)
        self.passages += len(batch)
