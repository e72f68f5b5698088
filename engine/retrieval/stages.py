"""The stages that find and weigh a question's passages, each `(query, hits) -> hits`: translate,
search, judge, rerank and pin. `Answerer.prepare` (engine/answer.py) runs them in turn with the
answer's own two (context, prompt) and times each; the follow-up's rewriting comes first, since
the Query (engine/retrieval/query.py) is made of the question it gives.

A stage reads the Query and the hits so far and returns the hits for the next one; what it finds
beside them (the translations, the relevance verdict, the page pinned) it keeps on its
`Retrieval`, one per question.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from engine.backends import Backend, ChatRequest
from engine.generation.generate import complete
from engine.prompts import CITATION, rewrite_messages
from engine.retrieval import query_translation, rerank
from engine.retrieval.query import Query, page_reference
from engine.retrieval.relevance import Relevance, dense_bar, judge
from engine.retrieval.retrieve import HybridRetriever, SearchHit, reciprocal_rank_fusion
from engine.retrieval.side_requests import deadline_for, run_side
from ingest.keywords import query_tokens
from ingest.records import CitedSource

Stage = Callable[[Query, list[SearchHit]], list[SearchHit]]
SEARCHED = 10  # hits each phrasing of the question is searched for, at least


@dataclass
class StageClock:
    """The one timer of a question's stages: each stage's wall time, in the order they ran."""

    stages: list[tuple[str, float]] = field(default_factory=list)  # (stage, milliseconds)

    def time(self, name: str, work: Callable, *args):
        """work(*args), its milliseconds kept under `name`."""
        started = time.perf_counter()
        try:
            return work(*args)
        finally:
            self.stages.append((name, (time.perf_counter() - started) * 1000))


class PastTurn(Protocol):
    """An earlier exchange of the chat (engine.answer.Turn)."""

    question: str
    answer: str
    sources: list[CitedSource]


@dataclass
class Retrieval:
    """One question's retrieval: what it is asked with, and what its stages find beside the hits."""

    retriever: HybridRetriever
    backend: Backend
    question: str  # as asked
    doc_ids: list[str] | None = None  # the documents the question is restricted to
    history: Sequence[PastTurn] = ()
    cancel: threading.Event = field(default_factory=threading.Event)
    candidates: int = 12  # hits considered for the context ([answers] candidates)
    translate_mode: str = "auto"  # [answers] translate_queries
    rerank_mode: str = "auto"  # [answers] rerank
    languages: set[str] = field(default_factory=set)  # of the documents searched
    translations: list[str] = field(default_factory=list)  # the question in the library's other languages
    relevance: Relevance | None = None  # the judge's verdict, as it gave it
    pinned: int = 0  # passages of the page the question names, put first
    skipped: list[str] = field(default_factory=list)  # side requests that failed or overran, why

    def side(self, name: str, work: Callable, fallback):
        """A side request to the model (engine/retrieval/side_requests.py): its result, or
        `fallback` with a note in `skipped` where it failed or overran its deadline."""
        seconds = deadline_for(name, self.backend.on_gpu)
        return run_side(name, work, fallback, self.cancel, seconds, self.skipped)

    # -- the question, before its Query ----------------------------------------------------------
    def rewrite(self) -> str:
        """A follow-up ("and on page 5?") as a question that stands alone, for the search."""
        history, question = self.history, self.question

        def ask(cancel: threading.Event) -> str:
            request = ChatRequest(
                rewrite_messages([(t.question, t.answer) for t in history], question),
                max_tokens=64,
                temperature=0.0,
                stop=["\n"],
                thinking=False,  # a search phrase needs no reasoning; a thinking model's would be cut at "\n"
                cancel=cancel,
            )
            return complete(self.backend, request)

        text = self.side("rewrite", ask, "").strip().strip("\"'“”")
        text = text.removeprefix("Stand-alone question:").strip()
        # A small model may answer instead of rewriting, or return nothing useful: then the search
        # falls back on the last question and the follow-up together.
        fallback = self.fallback()
        page = page_reference(question)
        if (
            not text
            or len(text) > 3 * len(fallback) + 40
            or not set(query_tokens(fallback)) & set(query_tokens(text))
            or not text.endswith(("?", "？"))  # an answer, not a question
            or CITATION.search(text)  # it cites a source: an answer
            or (page is not None and str(page) not in text)
        ):
            return fallback
        return text

    def fallback(self) -> str:
        """The follow-up with the question before it: searched beside the rewrite, which may be poor."""
        return f"{self.history[-1].question} {self.question}"

    def query(self, standalone: str) -> Query:
        return self.retriever.query(standalone, self.question)

    def stages(self, query: Query) -> list[tuple[str, Stage]]:
        """The stages this question goes through, in order, by name."""
        stages: list[tuple[str, Stage]] = []
        if query_translation.wanted(self.translate_mode, self.backend):
            self.languages = self.retriever.library.document_languages(self.doc_ids)
            if query_translation.other_languages(self.languages, query.language):
                stages.append(("translate", self.translate))
        stages += [("search", self.search), ("judge", self.judge)]
        if rerank.wanted(self.rerank_mode, self.backend):
            stages.append(("rerank", self.rerank))
        if query.page is not None:
            stages.append(("pin", self.pin))
        return stages

    # -- the stages --------------------------------------------------------------------------------
    def translate(self, query: Query, hits: list[SearchHit]) -> list[SearchHit]:
        """The question in the library's other languages, for the search (the model translates)."""
        translator = self.retriever.translator

        def ask(cancel: threading.Event) -> list[str]:
            return translator.translations(self.backend, query.text, query.language, self.languages, cancel)[0]

        self.translations = self.side("translate", ask, [])
        return hits

    def search(self, query: Query, hits: list[SearchHit]) -> list[SearchHit]:
        """The question searched, and beside it the plain follow-up and each translation, fused by
        reciprocal rank; every hit with its coverage of the Query."""
        k = max(self.candidates, SEARCHED)
        main = self.retriever.search(query, k, self.doc_ids).hits
        others = [self.fallback()] if self.history else []
        rankings = [main] + [self.retriever.search(text, k, self.doc_ids).hits for text in others + self.translations]
        if len(rankings) == 1:
            return main
        by_id = {h.passage.id: h for ranking in reversed(rankings) for h in ranking}
        fused = reciprocal_rank_fusion([[h.passage.id for h in ranking] for ranking in rankings])
        found = [by_id[i] for i in sorted(fused, key=fused.__getitem__, reverse=True)]
        # Hits only another phrasing found hold their coverage of it: weighed again by the Query.
        mine = {h.passage.id for h in main}
        strays = self.retriever.covered(query, [h for h in found if h.passage.id not in mine])
        again = {h.passage.id: h for h in strays}
        return [again.get(h.passage.id, h) for h in found]

    def judge(self, query: Query, hits: list[SearchHit]) -> list[SearchHit]:
        """The relevance rule's verdict (kept as given); the hits that pass it on their own go on,
        and the best two always."""
        bar = dense_bar(self.retriever.embedder.name)  # the bar of the embedder that scored the hits
        self.relevance = relevance = judge(query, hits, bar)
        return [h for i, h in enumerate(hits) if i < 2 or relevance.hit_margins[i] >= 0]

    def rerank(self, query: Query, hits: list[SearchHit]) -> list[SearchHit]:
        """The hits as the model orders them (engine/retrieval/rerank.py)."""
        if not hits:
            return hits

        def ask(cancel: threading.Event) -> list[SearchHit]:
            return rerank.rerank(self.backend, query.text, hits, cancel)[0]

        return self.side("rerank", ask, hits)  # the search's order where the judgement failed

    def pin(self, query: Query, hits: list[SearchHit]) -> list[SearchHit]:
        """The passages of the page the question names, first: the user pointed at a page of a
        document of this chat (or of the documents asked about), so that page is the context."""
        docs = list(self.doc_ids or [])
        for turn in reversed(self.history):  # the documents the conversation has been about, latest first
            for source in sorted(turn.sources, key=lambda s: not s.cited):
                if source.doc_id not in docs:
                    docs.append(source.doc_id)
        rows = self.retriever.library.page_passages(docs[:3], query.page)
        # Passages that start on the page come before those that only run into it.
        rows.sort(key=lambda r: (docs.index(r.doc_id), r.page != query.page))
        pinned = [SearchHit(r, 1.0) for r in rows]
        self.pinned = len(pinned)
        ids = {p.passage.id for p in pinned}
        return pinned + [h for h in hits if h.passage.id not in ids]
