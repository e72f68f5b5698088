"""Retrieval-augmented answers: find sources, decide whether they are relevant, ask the model, cite.

`Answerer.prepare` does everything before the model is asked, as stages: a follow-up rewritten to
stand alone, the question read once into a Query (engine/retrieval/query.py), then each stage
`(query, hits) -> hits` in turn (translate, search, judge, rerank, pin: engine/retrieval/stages.py;
the token-budgeted context and the prompt: here), each timed into the PreparedAnswer's `stages`.
`Answerer.stream` streams the answer as TextDelta records and returns the Answer. When nothing
relevant is found the answer is a plain statement and the model is never asked. What the front
doors call is `DocDesk.answer` (app/desk/answering.py).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field

from engine.backends import Backend, ChatRequest, GenerationStats
from engine.citations import attribute, cited_numbers
from engine.errors import Cancelled, NoAnswer
from engine.generation.generate import Reply, pieces, with_thinking_room
from engine.prompts import answer_messages, format_source, nothing_found
from engine.retrieval.context import Source, build_sources, whole_documents
from engine.retrieval.query import Query
from engine.retrieval.relevance import Relevance
from engine.retrieval.retrieve import HybridRetriever, SearchHit
from engine.retrieval.stages import Retrieval, StageClock
from ingest.records import CitedSource

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


RETRIEVAL_STAGES = ("translate", "search", "judge", "rerank", "pin")  # their sum: timings' retrieve_ms


@dataclass
class PreparedAnswer:
    question: str  # as asked
    standalone: str  # as searched (a follow-up rewritten with the history)
    language: str  # the answer's
    sources: list[Source]
    relevance: Relevance  # the relevance rule's verdict and its evidence, as the rule gave them
    messages: list[dict] | None  # None: nothing relevant, the model is not asked
    stages: tuple[tuple[str, float], ...] = ()  # (stage, milliseconds), in the order they ran
    whole_documents: bool = False  # the documents asked about went to the model whole
    # Why the model is asked although the rule found nothing relevant: "page" (the question names a
    # page of the chat's documents: that page is the context), "whole documents" (the documents
    # asked about fit and go in whole); "" when it was not overruled.
    override: str = ""
    query: Query | None = None  # the question as every stage read it
    skipped: list[str] = field(default_factory=list)  # side requests skipped, why (failed, overran)

    @property
    def relevant(self) -> bool:
        return self.messages is not None

    @property
    def timings(self) -> dict[str, float]:
        """Each stage's milliseconds as `<stage>_ms`, with retrieve_ms (the retrieval stages) and
        prepare_ms (all of them)."""
        timings = {f"{name}_ms": ms for name, ms in self.stages}
        timings["retrieve_ms"] = sum(ms for name, ms in self.stages if name in RETRIEVAL_STAGES)
        timings["prepare_ms"] = sum(ms for _, ms in self.stages)
        return timings

    def why(self) -> dict:
        """Why the model was asked or not: the rule's evidence and verdict, and what overruled it."""
        return {**self.relevance.as_dict(), "override": self.override or None, "skipped": self.skipped}


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
        """The question through its stages, each timed; the prompt, or None when nothing is relevant."""
        history = (history or [])[-self.settings.history_turns :]
        settings = self.settings
        retrieval = Retrieval(self.retriever, self.backend, question, doc_ids, history, cancel or threading.Event())
        retrieval.candidates, retrieval.translate_mode, retrieval.rerank_mode = (
            settings.candidates,
            settings.translate_queries,
            settings.rerank,
        )
        clock = StageClock()
        standalone = clock.time("rewrite", retrieval.rewrite) if history else question
        query = clock.time("query", retrieval.query, standalone)
        given = _Given(self, retrieval)
        hits: list[SearchHit] = []
        for name, stage in [*retrieval.stages(query), ("context", given.context), ("prompt", given.prompt)]:
            hits = clock.time(name, stage, query, hits)
        assert retrieval.relevance is not None  # the judge always runs
        found = (given.sources, retrieval.relevance, given.messages, tuple(clock.stages))
        return PreparedAnswer(
            question, standalone, query.language, *found, given.whole, given.override, query, retrieval.skipped
        )

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
        if not cancelled and not reply.answer.strip() and reply.reasoning:
            raise NoAnswer(
                f"the model thought ({len(reply.reasoning):,} characters) but gave no answer: ask again, "
                "or turn thinking off ([llm] thinking = false)"
            )
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


class _Given:
    """What the model is given for one question: the context and prompt stages, and what they made."""

    def __init__(self, answerer: Answerer, retrieval: Retrieval) -> None:
        self.answerer, self.retrieval = answerer, retrieval
        self.history = _history_messages(retrieval.history)
        self.sources: list[Source] = []
        self.messages: list[dict] | None = None
        self.whole = False
        self.override = ""

    def context(self, query: Query, hits: list[SearchHit]) -> list[SearchHit]:
        """The sources within the token budget: the documents asked about whole where they fit,
        else the best hits widened by their neighbours (engine/retrieval/context.py)."""
        answerer, retrieval = self.answerer, self.retrieval
        verdict = retrieval.relevance is not None and retrieval.relevance.relevant
        goes_on = verdict or retrieval.pinned > 0  # a page named is the context, whatever the verdict
        if not (goes_on or retrieval.doc_ids):
            return hits
        backend = answerer.backend
        empty = answer_messages(query.asked, [], self.history, query.language)
        room = (
            backend.context_window
            - sum(backend.count_tokens(m["content"]) + 8 for m in empty)
            - answerer.settings.answer_tokens
            - 64  # chat-template tokens and rounding
        )
        budget = min(answerer.context_tokens, room)
        cost = lambda text: backend.count_tokens(text) + SOURCE_HEADER_TOKENS  # noqa: E731
        library = answerer.library
        # Documents the question is restricted to go in whole when they fit: nothing is missed.
        whole = whole_documents(library, list(retrieval.doc_ids), budget, cost) if retrieval.doc_ids else None
        if whole:
            self.sources, self.whole = whole, True
            self.override = "" if verdict else "whole documents"
        elif goes_on:
            self.sources = build_sources(library, hits[: answerer.settings.candidates], budget, cost, query)
            self.override = "" if verdict else "page"
        return hits

    def prompt(self, query: Query, hits: list[SearchHit]) -> list[SearchHit]:
        """The messages the model is sent: its sources quoted, the chat's last turns, the question."""
        if self.sources:
            quoted = [format_source(s.n, s.title or s.path, s.page_label, s.text) for s in self.sources]
            self.messages = answer_messages(query.asked, quoted, self.history, query.language)
        return hits


def _history_messages(history) -> list[dict]:
    messages = []
    for turn in history:
        messages.append({"role": "user", "content": turn.question})
        messages.append({"role": "assistant", "content": turn.answer[:1500]})
    return messages


def run_to_end(stream: Generator, on_text: Callable[[str], None] | None = None) -> Answer:
    """An answer stream's Answer, each piece of its text (not of its reasoning) through `on_text` first."""
    while True:
        try:
            delta = next(stream)
        except StopIteration as end:
            return end.value
        if on_text and isinstance(delta, TextDelta):
            on_text(delta.text)
