"""Library, ChatStore, SummaryCache and VectorIndex against the store contract."""

from __future__ import annotations

import pytest

from ingest.errors import LibraryError
from ingest.pipeline import Ingestor
from ingest.store.chats import ChatMessage, ChatStore
from ingest.store.library import Library
from ingest.store.summary_cache import SummaryCache, cache_key
from ingest.store.vectors import VectorIndex
from tests.contracts.store_contract import MISSING, RemovalContract, StoreContract

SUBJECTS = ["volcanoes", "glaciers", "lighthouses", "orchards", "comets", "tides", "bridges", "deserts"]


def note(n: int) -> str:
    subject = SUBJECTS[n % len(SUBJECTS)]
    return f"Field note {n}: the survey of {subject} ended on day {n + 3}, and the {subject} report is filed."


class IngestedDocuments:
    """Items are text files added through the real pipeline (read in this process, real embedder)."""

    @pytest.fixture(autouse=True)
    def _sources(self, tmp_path, embedder):
        self.sources = tmp_path / "sources"
        self.sources.mkdir()
        self.embedder = embedder

    def add_note(self, library: Library, n: int, vectors: VectorIndex | None = None) -> str:
        path = self.sources / f"note-{n}.txt"
        path.write_text(note(n), encoding="utf-8")
        report = Ingestor(library, self.embedder, read_in_subprocess=False, vectors=vectors).add([path])
        assert not report.failed and len(report.added) == 1, report.as_dict()
        return report.added[0]["doc_id"]


@pytest.mark.models  # documents are embedded with the real model
class TestLibraryContract(IngestedDocuments, StoreContract, RemovalContract):
    def open(self, folder):
        return Library(folder)

    def close(self, store) -> None:
        store.close()

    def write(self, store, n):
        return self.add_note(store, n)

    def read(self, store, key):
        doc = store.document(key)
        if doc is None:
            return None
        return doc.status, doc.passages > 0, " ".join(p.text.strip() for p in store.pages(key))

    def expected(self, n, key):
        return "indexed", True, note(n)

    def check_consistent(self, store) -> int:
        whole = 0
        for doc in store.documents():
            if doc.status == "indexed":  # one transaction writes the status with the content
                assert doc.passages > 0 and doc.blocks > 0 and store.pages(doc.id), doc
                whole += 1
            else:
                assert doc.status == "queued" and doc.passages == 0, doc
        return whole

    def remove(self, store, key) -> None:
        store.remove(key)

    def test_lookups_of_what_is_not_there_say_none(self, store):
        assert store.resolve("no-such-document") is None and store.resolve(MISSING[:12]) is None
        assert store.remove(MISSING) is False
        assert store.passages([10**9]) == {} and store.blocks(MISSING) == [] and store.pages(MISSING) == []


class TestChatStoreContract(StoreContract, RemovalContract):
    writes_while_reading = 20  # a write takes milliseconds: enough of them for the reader to overlap

    def open(self, folder):
        return ChatStore(Library(folder))

    def write(self, store, n):
        chat = store.create(f"Chat {n}")
        store.add_message(chat.id, ChatMessage("user", f"Question {n}?"))
        store.add_message(chat.id, ChatMessage("assistant", f"Answer {n}."))
        return chat.id

    def read(self, store, key):
        chat = self.absent(lambda: store.get(key))
        if chat is None:
            return None
        return chat.title, chat.messages, [(m.role, m.content) for m in store.messages(key)]

    def expected(self, n, key):
        return f"Chat {n}", 2, [("user", f"Question {n}?"), ("assistant", f"Answer {n}.")]

    def check_consistent(self, store) -> int:
        whole = 0
        for chat in store.list():
            roles = [m.role for m in store.messages(chat.id)]
            # Each message is stored whole, a question before its answer (so that a crash in the
            # model keeps the question): a chat may end on an unanswered question, never on an
            # answer without its question.
            assert roles == (["user", "assistant"] * len(roles))[: len(roles)], (chat, roles)
            whole += bool(roles)
        return whole

    def remove(self, store, key) -> None:
        store.delete(key)

    def test_a_missing_chat_is_named(self, store):
        with pytest.raises(LibraryError, match=r"no chat '0+' \(see `docdesk chats`\)"):
            store.get(MISSING)
        assert store.messages(MISSING) == []


class TestSummaryCacheContract(StoreContract):
    """No removal: entries are keyed by what produced them, so they stay valid (a document added
    again with the same bytes gets its summary back)."""

    writes_while_reading = 20

    def open(self, folder):
        return SummaryCache(Library(folder))

    def text(self, n: int) -> str:
        return "".join(f"- point {i} of step {n}: {note(n)}\n" for i in range(400))  # ~40 kB: many pages

    def write(self, store, n):
        key = cache_key("contract", str(n))
        store.put(key, f"doc-{n}", "map", self.text(n))
        return key

    def read(self, store, key):
        return store.get(key)

    def expected(self, n, key):
        return self.text(n)

    def check_consistent(self, store) -> int:
        whole = 0
        for n in range(self.writes_while_reading):
            text = store.get(cache_key("contract", str(n)))
            assert text is None or text == self.text(n)  # never a part of one
            whole += text is not None
        return whole

    def test_a_put_again_replaces_and_counts_once(self, store):
        key = self.write(store, 0)
        store.put(key, "doc-0", "map", "newer")
        assert store.get(key) == "newer" and store.count("doc-0") == 1 and store.count(MISSING) == 0


@pytest.mark.models  # documents are embedded with the real model
class TestVectorIndexContract(IngestedDocuments, StoreContract, RemovalContract):
    """The dense index: an item is a document whose passages the index finds by meaning."""

    def open(self, folder):
        library = Library(folder)
        return VectorIndex(library, self.embedder)

    def write(self, store, n):
        return self.add_note(store.library, n, vectors=store)

    def _found(self, store, n: int) -> set[str]:
        query = self.embedder.encode([f"the survey of {SUBJECTS[n % len(SUBJECTS)]} on day {n + 3}"])[0]
        hits = store.search(query, k=3)
        return {p.doc_id for p in store.library.passages([i for i, _ in hits]).values()}

    def read(self, store, key):
        doc = store.library.document(key)
        if doc is None:  # gone from the library: the index must not find it either
            assert all(key not in self._found(store, n) for n in range(len(SUBJECTS)))
            return None
        n = int(doc.path.rsplit("note-", 1)[1].split(".")[0])
        return key if key in self._found(store, n) else None

    def expected(self, n, key):
        return key

    def check_consistent(self, store) -> int:
        query = self.embedder.encode(["a field note about a survey"])[0]
        hits = store.search(query, k=50)
        passages = store.library.passages([i for i, _ in hits])
        assert len(passages) == len(hits), "the index returned a passage the library does not have"
        indexed = {d.id for d in store.library.documents() if d.status == "indexed"}
        found = {p.doc_id for p in passages.values()}
        assert found <= indexed
        return len(found)

    def remove(self, store, key) -> None:
        store.library.remove(key)

    def test_an_empty_index_finds_nothing(self, store):
        assert store.search(self.embedder.encode(["anything at all"])[0], k=5) == []
