"""Retrieval-augmented answers: find sources, decide whether they are relevant, ask the model, cite.

`Answerer.prepare` does everything before the model is asked (rewriting a follow-up, search,
the relevance check, the token-budgeted context); `Answerer.stream` streams the answer as
TextDelta records and returns the Answer. When nothing relevant is found the answer is a plain
statement and the model is never asked. What the front doors call is `DocDesk.answer` (app/desk/answering.py).
"""

from __future__ import annotations

import dataclasses
import re
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field

from engine.backends import Backend, ChatRequest, GenerationStats
from engine.citations import attribute, cited_numbers
from engine.errors import Cancelled
from engine.generation.generate import Reply, complete, pieces, with_thinking_room
from engine.prompts import answer_messages, format_source, nothing_found, rewrite_messages
from engine.retrieval.context import Source, build_sources, whole_documents
from engine.retrieval.relevance import Relevance, judge
from engine.retrieval.retrieve import HybridRetriever, SearchHit, dense_weight, reciprocal_rank_fusion
from ingest.keywords import query_tokens
from ingest.language import question_language
from ingest.records import CitedSource

_PAGE_REFERENCE = re.compile(r"\b(?:pages?|p\.|pp\.)\s*(\d{1,5})|第\s*(\d{1,5})\s*页", re.IGNORECASE)
SOURCE_HEADER_TOKENS = 24  # the <source n=.. title=.. page=..> line and its closing tag


@dataclass
class AnswerSettings:
    """The [answers] section of config.toml."""

    # Most document text given to the model; None: 3,000 tokens on a GPU or server, 1,200 on a CPU,
    # where a prompt is read at only a few hundred tokens a second.
    context_tokens: int | None = None
    answer_tokens: int = 512
    history_turns: int = 2  # earlier exchanges the model sees
    candidates: int = 12  # hits considered for the context
    temperature: float = 0.1
    # The question also asked in the library's other languages (engine/retrieval/query_translation.py):
    # "auto" where the model can translate (a server, a GGUF of ~1.5B parameters or more), "on", "off".
    translate_queries: str = "auto"
    # The model judges the top passages and reorders them (engine/retrieval/rerank.py): "auto" where it runs
    # on a GPU behind a server with log-probabilities, "on", "off".
    rerank: str = "auto"


@dataclass(frozen=True)
class TextDelta:
    """A piece of an answer's text, as the model writes it. `restart` (with no text): what was
    streamed so far, answer and reasoning, was taken for the wrong one (engine/generation/thinking.py): a
    display drops both; the records that follow say it again rightly."""

    text: str
    restart: bool = False


@dataclass(frozen=True)
class ReasoningDelta:
    """A piece of a thinking model's reasoning, as it writes it: never part of the answer."""

    text: str


@dataclass(frozen=True)
class Sampling:
    """A caller's own sampling for one answer (an editor's request to `docdesk serve`): each
    None keeps DocDesk's setting; max_tokens may lower the answer's budget, never raise it."""

    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None

    def applied(self, request: ChatRequest) -> ChatRequest:
        changes: dict = {}
        if self.max_tokens is not None:
            changes["max_tokens"] = max(1, min(self.max_tokens, request.max_tokens))
        if self.temperature is not None:
            changes["temperature"] = self.temperature
        if self.top_p is not None:
            changes["top_p"] = self.top_p
        if self.stop:
            changes["stop"] = [*request.stop, *self.stop]
        if self.seed is not None:
            changes["seed"] = self.seed
        return dataclasses.replace(request, **changes)


@dataclass
class Turn:
    """One earlier exchange of a chat."""

    question: str
    answer: str
    sources: list[CitedSource] = field(default_factory=list)


@dataclass
class PreparedAnswer:
    question: str  # as asked
    standalone: str  # as searched (a follow-up rewritten with the history)
    language: str
    sources: list[Source]
    relevance: Relevance
    messages: list[dict] | None  # None: nothing relevant, the model is not asked
    timings: dict[str, float] = field(default_factory=dict)
    whole_documents: bool = False  # the documents asked about went to the model whole

    @property
    def relevant(self) -> bool:
        return self.messages is not None


@dataclass
class Answer:
    text: str
    prepared: PreparedAnswer
    stats: GenerationStats
    cancelled: bool = False
    reasoning: str = ""  # a thinking model's reasoning, kept apart from the text
    thinking_ms: float = 0.0  # from the first token to the end of the reasoning

    @property
    def cited(self) -> list[int]:
        return cited_numbers(self.text, len(self.prepared.sources))

    @property
    def timings(self) -> dict[str, float]:
        timings = dict(self.prepared.timings)
        timings["ttft_ms"] = timings["prepare_ms"] + self.stats.ttft_ms if self.stats.completion_tokens else 0.0
        timings["total_ms"] = timings["prepare_ms"] + self.stats.total_ms
        return {k: round(v, 1) for k, v in timings.items()}

    def cited_sources(self) -> list[CitedSource]:
        """Every source the model was given, each marked whether the answer cites it."""
        cited = set(self.cited)
        return [s.cited_as(s.n in cited) for s in self.prepared.sources]


def page_reference(question: str) -> int | None:
    match = _PAGE_REFERENCE.search(question)
    return int(match.group(1) or match.group(2)) if match else None


class Answerer:
    def __init__(self, retriever: HybridRetriever, backend: Backend, settings: AnswerSettings | None = None) -> None:
        self.retriever = retriever
        self.library = retriever.library
        self.backend = backend
        self.settings = settings or AnswerSettings()

    @property
    def context_tokens(self) -> int:
        if self.settings.context_tokens:
            return self.settings.context_tokens
        return 3000 if self.backend.on_gpu else 1200

    # -- before the model ---------------------------------------------------------
    def prepare(
        self,
        question: str,
        doc_ids: list[str] | None = None,
        history: list[Turn] | None = None,
        cancel: threading.Event | None = None,
    ) -> PreparedAnswer:
        started = time.perf_counter()
        history = (history or [])[-self.settings.history_turns :]
        timings: dict[str, float] = {}
        standalone = question
        if history:
            t = time.perf_counter()
            standalone = self.rewrite(question, history, cancel)
            timings["rewrite_ms"] = (time.perf_counter() - t) * 1000
        language = question_language(question)

        t = time.perf_counter()
        hits = self._search(question, standalone, history, doc_ids, timings, cancel)
        weight = dense_weight(standalone, getattr(self.retriever.embedder, "multilingual", False))
        relevance = judge(self.library, standalone, hits, weight)
        # Sources: the hits that pass the relevance rule on their own; the best two always go.
        hits = [h for i, h in enumerate(hits) if i < 2 or relevance.hit_margins[i] >= 0]
        hits = self._reranked(standalone, hits, timings, cancel)
        pinned = self._page_hits(question, history, doc_ids)
        if pinned:  # the user pointed at a page of a document of this chat: that page is the context
            hits = pinned + [h for h in hits if h.passage.id not in {p.passage.id for p in pinned}]
            relevance.relevant = True
        timings["retrieve_ms"] = (time.perf_counter() - t) * 1000

        t = time.perf_counter()
        sources: list[Source] = []
        messages = None
        whole = None
        history_messages = self._history_messages(history)
        if relevance.relevant or doc_ids:
            empty = answer_messages(question, [], history_messages, language)
            room = (
                self.backend.context_window
                - sum(self.backend.count_tokens(m["content"]) + 8 for m in empty)
                - self.settings.answer_tokens
                - 64  # chat-template tokens and rounding
            )
            budget = min(self.context_tokens, room)
            cost = lambda text: self.backend.count_tokens(text) + SOURCE_HEADER_TOKENS  # noqa: E731
            # Documents the question is restricted to go in whole when they fit: nothing is missed.
            whole = whole_documents(self.library, list(doc_ids or []), budget, cost) if doc_ids else None
            if whole:
                sources, relevance.relevant = whole, True
            elif relevance.relevant:
                sources = build_sources(self.library, hits[: self.settings.candidates], budget, cost, standalone)
            if sources:
                quoted = [format_source(s.n, s.title or s.path, s.page_label, s.text) for s in sources]
                messages = answer_messages(question, quoted, history_messages, language)
        timings["context_ms"] = (time.perf_counter() - t) * 1000
        timings["prepare_ms"] = (time.perf_counter() - started) * 1000
        return PreparedAnswer(question, standalone, language, sources, relevance, messages, timings, bool(whole))

    def rewrite(self, question: str, history: list[Turn], cancel: threading.Event | None = None) -> str:
        """A follow-up ("and on page 5?") as a question that stands alone, for the search."""
        request = ChatRequest(
            rewrite_messages([(t.question, t.answer) for t in history], question),
            max_tokens=64,
            temperature=0.0,
            stop=["\n"],
            thinking=False,  # a search phrase needs no reasoning; a thinking model's would be cut at "\n"
            cancel=cancel or threading.Event(),
        )
        text = complete(self.backend, request).strip().strip("\"'“”")
        text = text.removeprefix("Stand-alone question:").strip()
        # A small model may answer instead of rewriting, or return nothing useful: then the search
        # falls back on the last question and the follow-up together.
        fallback = f"{history[-1].question} {question}"
        known = set(query_tokens(fallback))
        page = page_reference(question)
        if (
            not text
            or len(text) > 3 * len(fallback) + 40
            or not known & set(query_tokens(text))
            or not text.endswith(("?", "？"))  # an answer, not a question
            or cited_numbers(text, 99)
            or (page is not None and str(page) not in text)
        ):
            return fallback
        return text

    def _search(
        self,
        question: str,
        standalone: str,
        history: list[Turn],
        doc_ids: list[str] | None,
        timings: dict[str, float] | None = None,
        cancel: threading.Event | None = None,
    ) -> list[SearchHit]:
        k = max(self.settings.candidates, 10)
        rankings = [self.retriever.search(standalone, k, doc_ids).hits]
        if history:
            # The rewrite may be poor with a small model: fuse it with the plain follow-up plus the last question.
            rankings.append(self.retriever.search(f"{history[-1].question} {question}", k, doc_ids).hits)
        for translated in self._translations(standalone, doc_ids, timings, cancel):
            rankings.append(self.retriever.search(translated, k, doc_ids).hits)
        if len(rankings) == 1:
            return rankings[0]
        by_id = {h.passage.id: h for ranking in reversed(rankings) for h in ranking}
        fused = reciprocal_rank_fusion([[h.passage.id for h in ranking] for ranking in rankings])
        return [by_id[i] for i in sorted(fused, key=fused.__getitem__, reverse=True)]

    def _reranked(self, standalone, hits, timings, cancel) -> list[SearchHit]:
        """The hits as the model orders them, where it reranks (engine/retrieval/rerank.py)."""
        from engine.retrieval import rerank

        if not hits or not rerank.wanted(self.settings.rerank, self.backend):
            return hits
        reordered, ms = rerank.rerank(self.backend, standalone, hits, cancel)
        timings["rerank_ms"] = ms
        return reordered

    def _translations(self, standalone, doc_ids, timings, cancel) -> list[str]:
        """The question in the library's other languages, where the model can translate it."""
        from engine.retrieval import query_translation

        if not query_translation.wanted(self.settings.translate_queries, self.backend):
            return []
        languages = self.library.document_languages(doc_ids)
        found, ms = query_translation.translations(
            self.backend, standalone, question_language(standalone), languages, cancel
        )
        if timings is not None and query_translation.other_languages(languages, question_language(standalone)):
            timings["translate_ms"] = ms
        return found

    def _page_hits(self, question: str, history: list[Turn], doc_ids: list[str] | None) -> list[SearchHit]:
        page = page_reference(question)
        if page is None:
            return []
        docs = list(doc_ids or [])
        for turn in reversed(history):  # the documents the conversation has been about, latest first
            for source in sorted(turn.sources, key=lambda s: not s.cited):
                if source.doc_id not in docs:
                    docs.append(source.doc_id)
        rows = self.library.page_passages(docs[:3], page)
        # Passages that start on the page come before those that only run into it.
        rows.sort(key=lambda r: (docs.index(r.doc_id), r.page != page))
        return [SearchHit(r, 1.0) for r in rows]

    def _history_messages(self, history: list[Turn]) -> list[dict]:
        messages = []
        for turn in history:
            messages.append({"role": "user", "content": turn.question})
            messages.append({"role": "assistant", "content": turn.answer[:1500]})
        return messages

    # -- the model -----------------------------------------------------------------
    def stream(
        self, prepared: PreparedAnswer, cancel: threading.Event | None = None, sampling: Sampling | None = None
    ) -> Generator[TextDelta | ReasoningDelta, None, Answer]:
        """The answer as it is written (a thinking model's reasoning as ReasoningDelta records),
        then (as the generator's return value) the Answer; the plain "nothing found" text when
        nothing is relevant. Setting `cancel` stops the model: what it said before is kept.
        `sampling`: a caller's own limits (serve's request), within the settings' bounds."""
        stats = GenerationStats()
        if prepared.messages is None:
            text = nothing_found(prepared.language)
            yield TextDelta(text)
            return Answer(text, prepared, stats)
        request = ChatRequest(
            prepared.messages,
            max_tokens=self.settings.answer_tokens,
            temperature=self.settings.temperature,
            cancel=cancel or threading.Event(),
            stats=stats,
        )
        if sampling is not None:
            request = sampling.applied(request)
        request = with_thinking_room(self.backend, request)
        reply, cancelled = Reply(), False
        text, reasoning, thought_at = "", "", None
        started = time.perf_counter()
        try:
            for piece in pieces(self.backend, request, reply):
                if piece.reasoning:
                    reasoning += piece.text
                    yield ReasoningDelta(piece.text)
                    continue
                if piece.restart:
                    yield TextDelta("", restart=True)
                    reasoning = text = ""
                    continue
                if piece.text and thought_at is None and reasoning:
                    thought_at = time.perf_counter()
                text += piece.text
                yield TextDelta(piece.text)
        except Cancelled:  # what was said before Stop is kept
            cancelled = True
            reply.answer, reply.reasoning = text, reasoning.strip()
        answer_text = attribute(reply.answer.strip(), prepared.sources)
        answer = Answer(answer_text, prepared, stats, cancelled, reply.reasoning)
        if reply.reasoning:
            answer.thinking_ms = ((thought_at or time.perf_counter()) - started) * 1000
        return answer

    def generate(
        self,
        prepared: PreparedAnswer,
        on_text: Callable[[str], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> Answer:
        """`stream` run to its end, each piece of text through `on_text`."""
        return run_to_end(self.stream(prepared, cancel), on_text)


def run_to_end(stream: Generator, on_text: Callable[[str], None] | None = None) -> Answer:
    """An answer stream's Answer, each piece of its text (not of its reasoning) through `on_text` first."""
    while True:
        try:
            delta = next(stream)
        except StopIteration as end:
            return end.value
        if on_text and isinstance(delta, TextDelta):
            on_text(delta.text)
