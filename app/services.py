"""The façade the CLI and the GUI share: one library, one embedder, the ingest and search calls."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from functools import cached_property
from pathlib import Path

from engine.retrieve import HybridRetriever, SearchResult
from ingest.embedding import SentenceTransformerEmbedder
from ingest.errors import LibraryError
from ingest.pipeline import AddReport, Ingestor, Progress
from ingest.store.library import DocumentRow, Library
from ingest.store.vectors import VectorIndex

from .settings import Settings


class DocDesk:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._backend = None
        self._one_model_at: tuple[int, int] | None = None  # library.version() when last checked

    def _one_embedding_model(self, on_progress=None) -> None:
        """Re-embed what another model embedded, so vectors of two models are never searched
        together; the documents are scanned again only after the library changed."""
        if self._one_model_at == self.library.version():
            return
        self.ingestor(on_progress).reembed_stale()
        self._one_model_at = self.library.version()

    @cached_property
    def library(self) -> Library:
        return Library(self.settings.library)

    @cached_property
    def embedder(self) -> SentenceTransformerEmbedder:
        # Cheap: the model itself loads on the first encode.
        return SentenceTransformerEmbedder(
            self.settings.embedding_model, self.settings.embedding_batch_size, self.settings.embedding_multilingual
        )

    @cached_property
    def vectors(self) -> VectorIndex:
        """The library's one dense index in this process: every ingestor and the retriever use it."""
        return VectorIndex(self.library, self.embedder)

    @cached_property
    def retriever(self) -> HybridRetriever:
        return HybridRetriever(self.library, self.embedder, self.vectors)

    def ingestor(
        self, on_progress: Callable[[Progress], None] | None = None, cancel: threading.Event | None = None
    ) -> Ingestor:
        return Ingestor(self.library, self.embedder, on_progress, cancel, vectors=self.vectors)

    def add(self, paths: Iterable[Path], password: str | None = None, on_progress=None, cancel=None) -> AddReport:
        return self.ingestor(on_progress, cancel).add(paths, password)

    def sync(self, on_progress=None, cancel=None) -> AddReport:
        return self.ingestor(on_progress, cancel).sync()

    def documents(self) -> list[DocumentRow]:
        return self.library.documents()

    def remove(self, ref: str) -> DocumentRow:
        doc = self.resolve(ref)
        self.library.remove(doc.id)
        self.ingestor().refresh_vectors()
        return doc

    def search(self, query: str, k: int = 10, doc_ids: list[str] | None = None, on_progress=None) -> SearchResult:
        self._one_embedding_model(on_progress)
        return self.retriever.search(query, k, doc_ids)

    def answerer(self):
        from engine.answer import Answerer

        self._one_embedding_model()
        return Answerer(self.retriever, self.backend(), self.settings.answers)

    @cached_property
    def chats(self):
        from ingest.store.chats import ChatStore

        return ChatStore(self.library)

    def chat_session(self, chat_id: str | None = None):
        from engine.chat import ChatSession

        return ChatSession(self.answerer(), self.chats, chat_id)

    def summarizer(self):
        from engine.summarize import Summarizer

        return Summarizer(self.library, self.backend())

    def resolve(self, ref: str) -> DocumentRow:
        """A document by id, id prefix or path."""
        doc = self.library.resolve(ref)
        if doc is None:
            raise LibraryError(f"no document {ref!r} in the library (see `docdesk list`)")
        return doc

    def backend(self):
        """The configured LLM backend, created on first use and closed with the façade."""
        if self._backend is None:
            from engine.backends import create_backend

            # A vLLM server's log goes beside the library it serves, where a user looks first.
            self._backend = create_backend(self.settings.llm, log_dir=self.settings.library / "logs")
        return self._backend

    def close_backend(self) -> None:
        """Close the model; the next call creates it from the (changed) settings."""
        if self._backend is not None:
            self._backend.close()
            self._backend = None

    def close(self) -> None:
        self.close_backend()
        if "library" in self.__dict__:
            self.library.close()
