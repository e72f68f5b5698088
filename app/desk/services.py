"""The façade the CLI and the GUI share: one library, one embedder, the ingest and search calls."""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from app.desk.crash import CrashGuard
from app.desk.refs import shown_ref
from app.desk.settings import Settings
from engine.backends.base import Backend, GenerationStats
from engine.retrieval.retrieve import HybridRetriever, SearchResult
from ingest.embedding import Embedder, make_embedder
from ingest.errors import LibraryError
from ingest.pipeline import AddReport, Ingestor, Progress
from ingest.records import Page, PageOcr
from ingest.store.embedder_owner import left_behind, take_back
from ingest.store.library import DocumentRow, Library, ref_path
from ingest.store.open_errors import LibraryDamaged, LibraryFull, LibraryReadOnly, damage, storage_error, storage_errors
from ingest.store.vectors import VectorIndex

if TYPE_CHECKING:
    from app.desk.answering import AnswerEvent
    from engine.answer import Turn

log = logging.getLogger(__name__)


class DocDesk:
    """The façade over one library. `backend` and `embedder`, when given, stand in for the ones the
    settings name (the tests give a fake model and a stand-in embedder so); a given backend is
    closed with the façade as its own would be, and after close_backend() the settings' one is made."""

    def __init__(
        self,
        settings: Settings,
        crash_guard: CrashGuard | None = None,
        *,
        backend: Backend | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.settings = settings
        # The process's crash guard (started by the CLI or the window); an unstarted one records nothing.
        self.crash_guard = crash_guard or CrashGuard()
        self._backend = backend
        self._embedder = embedder
        self._embedder_lock = threading.Lock()
        self._one_model_at: tuple[int, int] | None = None  # library.version() when last checked
        self._one_model_lock = threading.Lock()
        self._reembed_stopped_by: str | None = None  # a full disk stopped re-embedding: not tried again here

    def _one_embedding_model(self, on_progress=None, cancel: threading.Event | None = None) -> int:
        """Re-embed what another model embedded, so vectors of two models are never searched
        together; the documents are scanned again only after the library changed. One thread at a
        time: a question asked while the window re-embeds waits for it. Returns how many."""
        with self._one_model_lock:
            if self._one_model_at == self.library.version() or self._reembed_stopped_by is not None:
                return 0
            if self.library.read_only:  # re-embedding writes: a read-only library is searched as it is
                if self.library.meta("embedding_model") not in (None, self.embedder.name):
                    log.warning("read-only library embedded with another model: only keyword search finds its passages")
                self._one_model_at = self.library.version()
                return 0
            behind = left_behind(self.library, self.embedder.name)
            if behind:  # another DocDesk converted the library: searched as it is, never converted back
                log.warning(behind)
                self._one_model_at = self.library.version()
                return 0
            try:
                count = self.ingestor(on_progress, cancel).reembed_stale()
            except (sqlite3.DatabaseError, OSError, LibraryFull, LibraryReadOnly) as exc:
                self._reembed_stopped(exc)
                return 0
            if not (cancel and cancel.is_set()):
                self._one_model_at = self.library.version()
            return count

    def _reembed_stopped(self, exc: BaseException) -> None:
        """Re-embedding failed on a full disk or a read-only library: what is embedded is searched
        (keywords find the rest), the rest waits until DocDesk opens the library again."""
        known = exc if isinstance(exc, LibraryError) else storage_error(exc, self.settings.library, self.library.conn)
        if not isinstance(known, LibraryFull | LibraryReadOnly):
            raise exc
        name = self.embedder.name
        left = sum(
            1 for d in self.library.documents(with_counts=False) if d.status == "indexed" and d.embed_model != name
        )
        log.warning(
            "re-embedding stopped (%s); %d documents are still embedded with the earlier model: search finds "
            "them by keywords only until there is room and DocDesk opens the library again",
            known,
            left,
        )
        self._reembed_stopped_by = str(known)

    def reembed(self, on_progress=None, cancel: threading.Event | None = None, deliberate: bool = False) -> int:
        """Re-embed now, with progress, what another model embedded (a library made before the
        default embedder changed, or before the setting did): the window does it when it opens.
        `deliberate` (`docdesk reembed`): also back to a model the library was converted away from."""
        if deliberate and not self.library.read_only:
            take_back(self.library, self.embedder.name)
            self._one_model_at = None
        return self._one_embedding_model(on_progress, cancel)

    def embedding_model_chosen(self, settings) -> None:
        """The user chose `settings`' embedding model in Settings: on purpose, so the library may be
        converted back to it if it was converted away from it (ingest/store/embedder_owner.py)."""
        if settings.embedding_model == self.settings.embedding_model or self.library.read_only:
            return
        chosen = make_embedder(
            settings.embedding_model,
            settings.embedding_batch_size,
            settings.embedding_multilingual,
            settings.embedding_precision,
        )  # cheap: its name, no model loaded
        take_back(self.library, chosen.name)

    @cached_property
    def library(self) -> Library:
        return Library(self.settings.library)

    @property
    def embedder(self) -> Embedder:
        with self._embedder_lock:  # one embedder for the window's threads: each would load its model
            if self._embedder is None:
                # Cheap: the model itself loads on the first encode.
                self._embedder = make_embedder(
                    self.settings.embedding_model,
                    self.settings.embedding_batch_size,
                    self.settings.embedding_multilingual,
                    self.settings.embedding_precision,
                )
            return self._embedder

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
        return Ingestor(self.library, self.embedder, on_progress, cancel, vectors=self.vectors, ocr=self.settings.ocr)

    def add(self, paths: Iterable[Path], password: str | None = None, on_progress=None, cancel=None) -> AddReport:
        return self.ingestor(on_progress, cancel).add(paths, password)

    def sync(self, on_progress=None, cancel=None, confirm_removals: bool = False) -> AddReport:
        return self.ingestor(on_progress, cancel).sync(confirm_removals)

    def documents(self) -> list[DocumentRow]:
        with storage_errors(self.settings.library, self.library.conn):
            docs = self.library.documents()
        if not docs:
            self._check_not_damaged()
        return docs

    def _check_not_damaged(self) -> None:
        """An empty answer from a library: a page overwritten with what reads as an empty page
        raises nothing (the table only looks empty), but SQLite's integrity check sees it."""
        detail = damage(self.library.folder, self.library.conn, thorough=True)
        if detail:
            raise LibraryDamaged(self.library.folder, detail)

    def remove(self, ref: str) -> tuple[DocumentRow, DocumentRow | None]:
        """Remove a document by id, or one of its paths by path. Returns the document as it was
        and, when the same bytes are still in the library at another path, as it is now."""
        doc = self.resolve(ref)
        given = ref_path(ref) if self.library.document(ref) is None else None
        path = self.library.file_path(given) if given is not None else None
        if path is not None:
            self.library.remove_file(path)  # a twin at another path keeps the document
        else:
            self.library.remove(doc.id)
        self.ingestor().refresh_vectors()
        return doc, self.library.document(doc.id)

    def search(self, query: str, k: int = 10, doc_ids: list[str] | None = None, on_progress=None) -> SearchResult:
        with storage_errors(self.settings.library, self.library.conn):
            self._one_embedding_model(on_progress)
            result = self.retriever.search(query, k, doc_ids)
        if not result.hits:
            self._check_not_damaged()
        return result

    def answerer(self):
        from engine.answer import Answerer

        self._one_embedding_model()
        return Answerer(self.retriever, self.backend(), self.settings.answers)

    def answer(
        self,
        question: str,
        doc_ids: list[str] | None = None,
        *,
        chat_id: str | None = None,
        save_chat: bool = True,
        history: list[Turn] | None = None,
        cancel: threading.Event | None = None,
        title: str | None = None,
        sampling=None,
    ) -> Iterator[AnswerEvent]:
        """Answer `question` from the library (only `doc_ids`, when given): an iterator of
        app.desk.answering.TextDelta records as the model writes, then one Answered record. Every
        front door answers through here. The exchange is kept in the chat `chat_id` (a new
        chat when None), whose history makes a follow-up stand alone; with save_chat=False it
        is kept nowhere and `history` (engine.answer.Turn, oldest first) is the conversation.
        Setting `cancel` stops the model at its next token; `title` names the question's chat
        in a crash report (default: the chat's title); `sampling` (engine.answer.Sampling) is a
        caller's own max_tokens, temperature, top_p, stop and seed. A thinking model's
        reasoning comes as ReasoningDelta records and in Answered.reasoning, never in the text."""
        from app.desk.answering import answer

        return answer(self, question, doc_ids, chat_id, save_chat, history, cancel, title, sampling)

    @cached_property
    def chats(self):
        from ingest.store.chats import ChatStore

        return ChatStore(self.library)

    def chat_session(self, chat_id: str | None = None):
        from app.desk.unsaved_chats import ChatsSavedWherePossible
        from engine.chat import ChatSession

        # A library that cannot be written (read-only, the disk full) still answers; the chat is not saved.
        return ChatSession(self.answerer(), ChatsSavedWherePossible(self.library), chat_id)

    def summarizer(self):
        from engine.summarize import Summarizer

        return Summarizer(self.library, self.backend())

    def resolve(self, ref: str) -> DocumentRow:
        """A document by id, id prefix or path."""
        doc = self.library.resolve(ref)
        if doc is None:
            raise LibraryError(f"no document {shown_ref(ref)} in the library (see `docdesk list`)")
        return doc

    # -- documents, for the window -------------------------------------------------------
    def document(self, doc_id: str) -> DocumentRow | None:
        return self.library.document(doc_id)

    def pages(self, doc_id: str) -> list[Page]:
        return self.library.pages(doc_id)

    def ocr_page(self, doc_id: str, number: int) -> PageOcr | None:
        return self.library.ocr_page(doc_id, number)

    def watch_paths(self, most: int) -> list[str]:
        """What a watcher of the remembered folders should watch: each folder, its subfolders and
        its files (up to `most` of each), so a new, deleted or rewritten file starts a sync."""
        paths: list[str] = []
        for folder_id, folder in self.library.folders():
            if not Path(folder).is_dir():
                continue
            paths.append(folder)
            paths += [str(d) for d in Path(folder).rglob("*") if d.is_dir()][:most]
            paths += [f.path for f in self.library.files_under(folder_id)][:most]
        return [p for p in dict.fromkeys(paths) if Path(p).exists()]

    # -- chats ------------------------------------------------------------------------------
    def list_chats(self):
        return self.chats.list()

    def chat_messages(self, chat_id: str):
        return self.chats.messages(chat_id)

    def rename_chat(self, chat_id: str, title: str) -> None:
        self.chats.rename(chat_id, title)

    def delete_chat(self, chat_id: str) -> None:
        self.chats.delete(chat_id)

    # -- the model ----------------------------------------------------------------------------
    def _create_backend(self, llm):
        from engine.backends import create_backend

        # A server's log goes beside the library it serves, where a user looks first.
        return create_backend(llm, log_dir=self.settings.library / "logs")

    def backend(self):
        """The configured LLM backend, created on first use and closed with the façade."""
        if self._backend is None:
            self._backend = self._create_backend(self.settings.llm)
        return self._backend

    def parallel_answers(self) -> int:
        """How many answers the loaded model writes at once (1 until it is loaded): with more
        than one, a question need not wait behind a summary."""
        backend = self._backend
        return backend.max_concurrency if backend is not None else 1

    def doing(self, activity: str, **details):
        """A block in which the model does `activity` (app/desk/crash.py's names): if DocDesk dies in
        it, the next start says so, with the model and the question."""
        llm = self.settings.llm
        return self.crash_guard.doing(
            activity, backend=llm.backend, model=str(llm.model or "the bundled model"), **details
        )

    def warm_up(self) -> str:
        """Load the model and the embedder now; returns the doctor's GPU warning ("" if none)."""
        backend = self.backend()
        with self.doing("loading"):
            backend.warm_up()
        self.retriever.warm_up()
        if not backend.capabilities.installed_llama_cpp:
            return ""
        from engine.models.doctor import gpu_build_warning

        return gpu_build_warning()

    def reload_backend(self) -> None:
        """Close the model and load the one the settings name now."""
        self.close_backend()
        with self.doing("loading"):
            self.backend().warm_up()

    def try_model(self, llm) -> tuple[str, GenerationStats, str]:
        """One short reply from the model `llm` describes (not the configured one): its text, the
        stats and the model's name. The Settings dialog's "Test"."""
        from engine.backends import ChatRequest

        backend = self._create_backend(llm)
        try:
            request = ChatRequest([{"role": "user", "content": "Say hello in one short sentence."}], max_tokens=32)
            text = "".join(backend.stream_chat(request))
            return text.strip(), request.stats, str(backend.model)
        finally:
            backend.close()

    def doctor_text(self) -> str:
        from app.desk.doctor_text import render
        from engine.models.doctor import report

        llm = self.settings.llm
        model = llm.model
        found = report(
            Path(model) if model else None, None, llm.context, threads=llm.threads, threads_batch=llm.threads_batch
        )
        return render(found)

    def close_backend(self) -> None:
        """Close the model; the next call creates it from the (changed) settings."""
        if self._backend is not None:
            self._backend.close()
            self._backend = None

    def index_rebuild(self):
        """How far a background build of the dense index has got (ingest.store.vector_rebuild.
        RebuildProgress), or None when none runs; never loads the index to find out."""
        return self.vectors.rebuild_progress() if "vectors" in self.__dict__ else None

    def wait_for_index_rebuild(self, timeout: float) -> bool:
        """True once no build of the dense index is running."""
        return self.vectors.wait_for_rebuild(timeout) if "vectors" in self.__dict__ else True

    def close(self) -> None:
        self.close_backend()
        if "vectors" in self.__dict__:
            self.vectors.close()  # writes what a large library's index file still lacks
        if "library" in self.__dict__:
            self.library.close()
