"""Summaries of long documents, map-reduce over their ~8k-token blocks.

Map: each block (split into pieces when the model's context is smaller) becomes a few bullet
points, up to `max_concurrency` requests at once. Reduce: runs of consecutive notes are merged,
level by level, until few enough remain and they fit one prompt; then an overview is written.
The page span of every note is tracked by code, not by the model, so the page references in
the final summary are always right. Every model output is cached in the library as soon as it
arrives: a cancelled or crashed run resumes where it stopped, and a repeated run costs nothing.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from engine.backends import Backend, ChatRequest
from engine.errors import Cancelled, EngineError
from engine.generation.generate import complete
from engine.prompts import MAP_USER, OVERVIEW_USER, PROMPT_VERSION, REDUCE_USER, SUMMARY_STYLES, summary_messages
from ingest.records import page_label
from ingest.store.library import Library
from ingest.store.summary_cache import SummaryCache, cache_key

OUTPUT_TOKENS = {"map": 320, "reduce": 400, "overview": 320}
PROMPT_OVERHEAD = 160  # system prompt, instructions and chat template around the text
CPU_PIECE_TOKENS = 2000  # on a CPU, attention makes long prompts slow per token: cut smaller


@dataclass
class Note:
    """A model's notes on a stretch of the document, with the pages it covers."""

    text: str
    page: int
    page_end: int


@dataclass
class SummaryProgress:
    stage: str  # map | reduce | overview
    done: int
    total: int
    cached: int
    elapsed_s: float
    eta_s: float | None


@dataclass
class SummarySection:
    """One key-point section: the model's notes on a stretch of pages (tracked by code)."""

    page: int
    page_end: int
    notes: str  # Markdown bullet points
    synthetic_pages: bool = False

    def page_label(self, language: str = "en") -> str:
        return page_label(self.page, self.page_end, self.synthetic_pages, language)

    def to_json(self, language: str = "en") -> dict:
        return {
            "page": self.page,
            "page_end": self.page_end,
            "page_synthetic": self.synthetic_pages,
            "page_label": self.page_label(language),
            "notes": self.notes,
        }


@dataclass
class Summary:
    doc_id: str
    title: str
    style: str
    language: str
    overview: str
    sections: list[SummarySection]
    blocks: int
    pieces: int
    steps: int  # model outputs the summary needed
    from_cache: int  # of those, found in the cache
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The summary as Markdown: what Copy and "Save as Markdown" give, and the CLI prints."""
        return render_markdown(self)

    def as_dict(self) -> dict:
        return {
            "doc_id": self.doc_id,
            "title": self.title,
            "summary": self.text,
            "overview": self.overview,
            "sections": [s.to_json(self.language) for s in self.sections],
            "style": self.style,
            "language": self.language,
            "blocks": self.blocks,
            "pieces": self.pieces,
            "steps": self.steps,
            "from_cache": self.from_cache,
            "timings": {k: round(v, 1) for k, v in self.timings.items()},
        }


def render_markdown(
    summary: Summary, page_link: Callable[[SummarySection], str] | None = None, text: Callable[[str], str] = str
) -> str:
    """A summary as Markdown. `page_link` makes each section's pages a link (the window's
    "page:12"); `text` escapes what the model wrote (the window shows its HTML as text)."""
    zh = summary.language == "zh"
    lines = [f"# {summary.title}", "", "## 概述" if zh else "## Overview", "", text(summary.overview), ""]
    lines += ["## 要点" if zh else "## Key points", ""]
    for section in summary.sections:
        label = section.page_label(summary.language)
        lines.append(f"**[{label}]({page_link(section)})**" if page_link else f"**{label}**")
        lines.append(text(section.notes))
        lines.append("")
    return "\n".join(lines).strip() + "\n"


_BULLET = re.compile(r"^\s*(?:[-*•·]|\d+[.)、])\s*")
# A sentence ends at .!? before a capital (not inside "3.10" or "config.toml"), or at a CJK stop.
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])|(?<=[。！？])")
MAX_BULLETS = 8
_TAG_ONLY = re.compile(r"^‹?</?\s*(?:text|notes|sources?)\s*>?$", re.IGNORECASE)


def bullets(text: str) -> list[str]:
    """A model's reply as bullet points, whatever list style (or none) it used; repeats dropped."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not any(_BULLET.match(line) for line in lines):
        lines = [s.strip() for s in _SENTENCE_BREAK.split(" ".join(lines)) if s.strip()]
    points: list[str] = []
    for line in lines:
        point = _BULLET.sub("", line).strip()
        if _TAG_ONLY.match(point):  # a delimiter of the prompt, echoed
            continue
        if point and point not in points and not point.endswith(":"):
            points.append(point)
    return points[:MAX_BULLETS]


class Summarizer:
    def __init__(
        self, library: Library, backend: Backend, piece_tokens: int | None = None, thinking: bool | None = False
    ) -> None:
        self.library = library
        self.backend = backend
        self.thinking = thinking  # ChatRequest.thinking of every step: off unless asked for
        self.cache = SummaryCache(library)
        self.piece_tokens = piece_tokens  # None: as much as the model reads well

    def summarize(
        self,
        doc_id: str,
        style: str = "brief",
        language: str | None = None,
        on_progress: Callable[[SummaryProgress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> Summary:
        if style not in SUMMARY_STYLES:
            raise EngineError(f"unknown summary style {style!r}: use one of {', '.join(SUMMARY_STYLES)}")
        doc = self.library.document(doc_id)
        if doc is None or doc.status != "indexed":
            raise EngineError(f"document {doc_id[:12]} is not indexed: add it first (docdesk add PATH)")
        language = language or doc.language or "en"
        title = doc.title or doc.path
        run = _Run(self, doc_id, title, style, language, on_progress, cancel or threading.Event())
        run.synthetic = doc.synthetic_pages
        return run.execute()


class _Run:
    """One summary: the state of a map-reduce in progress."""

    def __init__(self, owner: Summarizer, doc_id, title, style, language, on_progress, cancel) -> None:
        self.backend = owner.backend
        self.library = owner.library
        self.cache = owner.cache
        self.thinking = owner.thinking
        self.doc_id, self.title, self.style, self.language = doc_id, title, style, language
        self.shape = SUMMARY_STYLES[style]  # its points, overview sentences and sections
        self.on_progress = on_progress or (lambda _p: None)
        self.cancel = cancel
        self.started = time.perf_counter()
        self.synthetic = False
        self.steps = self.from_cache = 0
        self.model_id = f"{self.backend.name}:{self.backend.model}"
        window = self.backend.context_window
        self.input_tokens = window - PROMPT_OVERHEAD - max(OUTPUT_TOKENS.values()) - 64
        if self.input_tokens < 256:
            raise EngineError(f"the model's context ({window} tokens) is too small to summarize: raise it")
        if owner.piece_tokens:
            self.input_tokens = min(self.input_tokens, owner.piece_tokens)
        elif not self.backend.on_gpu:
            self.input_tokens = min(self.input_tokens, CPU_PIECE_TOKENS)

    # -- steps ----------------------------------------------------------------------
    def execute(self) -> Summary:
        blocks = self.library.blocks(self.doc_id)
        t = time.perf_counter()
        pieces = [piece for block_id, block in blocks for piece in self._pieces(block_id, block)]
        requests = [self._map_request(piece) for piece in pieces]
        notes = self._run_all("map", requests)
        map_ms = (time.perf_counter() - t) * 1000

        t = time.perf_counter()
        level = 0
        while len(notes) > self.shape.sections or self._tokens(notes) > self.input_tokens:
            groups = self._group(notes)
            if len(groups) == len(notes):  # nothing could be merged: notes too long to combine two
                break
            level += 1
            notes = self._run_all(f"reduce {level}", [self._reduce_request(group) for group in groups])
        overview = self._run_all("overview", [self._overview_request(notes)])[0]
        reduce_ms = (time.perf_counter() - t) * 1000
        total_ms = (time.perf_counter() - self.started) * 1000
        return Summary(
            self.doc_id,
            self.title,
            self.style,
            self.language,
            overview.text,
            [SummarySection(n.page, n.page_end, n.text, self.synthetic) for n in notes],
            len(blocks),
            len(pieces),
            self.steps,
            self.from_cache,
            {"map_ms": map_ms, "reduce_ms": reduce_ms, "total_ms": total_ms},
        )

    def _pieces(self, block_id: int, block) -> list[Note]:
        """A block, or parts of it cut at passage starts when it is longer than the model can read."""
        if self.backend.count_tokens(block.text) <= self.input_tokens:
            return [Note(block.text, block.page, block.page_end)]
        passages = self.library.block_passages(block_id)
        cuts = [p.start - block.start for p in passages[1:]] + [len(block.text)]
        pieces: list[Note] = []
        text, page, page_end, used, begin = "", passages[0].page, passages[0].page_end, 0, 0
        for passage, end in zip(passages, cuts, strict=True):
            segment = block.text[begin:end]
            cost = self.backend.count_tokens(segment)
            if text and used + cost > self.input_tokens:
                pieces.append(Note(text, page, page_end))
                text, page, used = "", passage.page, 0
            text += segment
            page_end = max(page_end, passage.page_end)
            used += cost
            begin = end
        if text:
            pieces.append(Note(text, page, page_end))
        return pieces

    def _group(self, notes: list[Note]) -> list[list[Note]]:
        """Consecutive notes, a few per group, each group small enough for one prompt."""
        fanout = max(2, math.ceil(len(notes) / self.shape.sections))
        groups: list[list[Note]] = []
        current: list[Note] = []
        for note in notes:
            if current and (len(current) >= fanout or self._tokens([*current, note]) > self.input_tokens):
                groups.append(current)
                current = []
            current.append(note)
        if current:
            groups.append(current)
        return groups

    def _tokens(self, notes: list[Note]) -> int:
        return self.backend.count_tokens(self._notes_text(notes))

    def _notes_text(self, notes: list[Note]) -> str:
        return "\n".join(f"[{page_label(n.page, n.page_end, self.synthetic)}]\n{n.text}" for n in notes)

    # -- requests ---------------------------------------------------------------------
    def _map_request(self, piece: Note) -> tuple[str, list[dict], Note]:
        pages = page_label(piece.page, piece.page_end, self.synthetic)
        messages = summary_messages(
            MAP_USER, self.language, title=self.title, pages=pages, text=piece.text, points=self.shape.points
        )
        return "map", messages, piece

    def _reduce_request(self, group: list[Note]) -> tuple[str, list[dict], Note]:
        messages = summary_messages(
            REDUCE_USER,
            self.language,
            title=self.title,
            notes=self._notes_text(group),
            points=self.shape.points,
        )
        return "reduce", messages, Note("", group[0].page, group[-1].page_end)

    def _overview_request(self, notes: list[Note]) -> tuple[str, list[dict], Note]:
        messages = summary_messages(
            OVERVIEW_USER,
            self.language,
            title=self.title,
            notes=self._notes_text(notes),
            sentences=self.shape.sentences,
        )
        return "overview", messages, Note("", notes[0].page, notes[-1].page_end)

    def _key(self, kind: str, messages: list[dict]) -> str:
        return cache_key(PROMPT_VERSION, self.model_id, kind, self.style, self.language, messages[-1]["content"])

    # -- scheduling -------------------------------------------------------------------
    def _run_all(self, stage: str, requests: list[tuple[str, list[dict], Note]]) -> list[Note]:
        """Every request's reply, from the cache or the model, up to max_concurrency at once."""
        results: list[Note | None] = [None] * len(requests)
        pending: list[int] = []
        for i, (kind, messages, note) in enumerate(requests):
            cached = self.cache.get(self._key(kind, messages))
            if cached is not None:
                results[i] = Note(cached, note.page, note.page_end)
                self.from_cache += 1
            else:
                pending.append(i)
        self.steps += len(requests)
        cached_count = len(requests) - len(pending)
        stage_started = time.perf_counter()
        computed = 0

        def report() -> None:
            done = cached_count + computed
            elapsed = time.perf_counter() - stage_started
            eta = elapsed / computed * (len(requests) - done) if computed else None
            self.on_progress(SummaryProgress(stage, done, len(requests), cached_count, elapsed, eta))

        report()
        if pending:
            workers = max(1, min(self.backend.max_concurrency, len(pending)))
            executor = ThreadPoolExecutor(workers, thread_name_prefix="docdesk-summary")
            queue = list(pending)
            running: dict[Future, int] = {}
            try:
                while queue or running:
                    while queue and len(running) < workers and not self.cancel.is_set():
                        i = queue.pop(0)
                        running[executor.submit(self._generate, *requests[i])] = i
                    if self.cancel.is_set() and not running:
                        break
                    finished, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in finished:
                        i = running.pop(future)
                        results[i] = future.result()  # a failure ends the summary; what finished is cached
                        computed += 1
                        report()
            except Cancelled:
                self.cancel.set()
            except BaseException:
                self.cancel.set()  # Ctrl-C or a failure: stop the requests still running
                raise
            finally:
                executor.shutdown(wait=True, cancel_futures=True)
        if self.cancel.is_set():
            raise Cancelled(f"summary stopped: {self.from_cache + computed} steps are kept and resume next time")
        return [r for r in results if r is not None]

    def _generate(self, kind: str, messages: list[dict], note: Note) -> Note:
        # Without thinking by default: notes of a block need no reasoning, and a thinking model's
        # would cost more than the note; complete() never returns reasoning, so none is cached.
        request = ChatRequest(
            messages, max_tokens=OUTPUT_TOKENS[kind], temperature=0.2, cancel=self.cancel, thinking=self.thinking
        )
        text = complete(self.backend, request)
        if request.stats.finish_reason == "cancelled" or self.cancel.is_set():
            raise Cancelled("stopped")
        text = text.strip() if kind == "overview" else "\n".join(f"- {b}" for b in bullets(text))
        self.cache.put(self._key(kind, messages), self.doc_id, kind, text)
        return Note(text, note.page, note.page_end)
