"""The token-budgeted context of an answer: the best passages first, widened with their neighbours.

Hits from the same block that touch or overlap are merged into one source, so the model reads
continuous text and the user sees one citation. A source that no longer fits whole is not
dropped: it goes as its passage's best window of sentences within the room left
(engine/retrieval/trimming.py), so the budget's last tokens hold the lines that answer rather
than nothing. When the budget allows, each whole source grows by the passages before and after
it in its block, best source first, one step at a time.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from engine.retrieval import trimming
from engine.retrieval.query import Query
from engine.retrieval.retrieve import SearchHit
from ingest.keywords import index_tokens, query_tokens
from ingest.records import CitedSource, page_label
from ingest.store.library import Library, PassageRow

MAX_SOURCES = 8
WIDEN_REACH = 8  # passages read on each side of a hit; ~2,000 tokens, more than a context takes
MIN_WINDOW_TOKENS = 40  # less room than this left: no window is cut for it


@dataclass
class Source:
    n: int
    doc_id: str
    title: str
    path: str
    block_id: int
    start: int  # character span in the document text
    end: int
    page: int  # the page of the best-matching passage where the question's terms are: a citation opens it
    page_end: int  # the last page of that passage
    span_pages: tuple[int, int]  # pages of all the quoted text, neighbours included
    synthetic_pages: bool
    text: str
    passage_ids: list[int] = field(default_factory=list)
    tokens: int = 0
    excerpt: bool = False  # its passage's best window of sentences (it did not fit whole)

    @property
    def page_label(self) -> str:
        """The page a citation names: one page, the one that holds what matched."""
        return page_label(self.page, synthetic=self.synthetic_pages)

    def cited_as(self, cited: bool) -> CitedSource:
        """The record the CLI, the window and the chat history get."""
        return CitedSource(
            self.n,
            self.doc_id,
            self.title,
            self.path,
            self.page,
            self.page_end,
            self.text,
            self.synthetic_pages,
            self.span_pages,
            cited,
            self.excerpt,
        )


class _Span:
    """A growing run of consecutive passages inside one block."""

    def __init__(self, block: list[PassageRow], index: int) -> None:
        self.block = block
        self.first = self.last = self.anchor = index
        # Where the span is its anchor passage's best window (document offsets) rather than whole
        # passages: it did not fit whole in the room left.
        self.window: tuple[int, int] | None = None

    def passages(self) -> list[PassageRow]:
        return self.block[self.first : self.last + 1]

    def touches(self, index: int) -> bool:
        return self.first - 1 <= index <= self.last + 1


def _text_of(block_start: int, block_text: str, first: PassageRow, last: PassageRow) -> str:
    return block_text[first.start - block_start : last.end - block_start].strip()


def best_page(library: Library, passage: PassageRow, query: str) -> int:
    """The page of a passage that spans several where the query's terms are found most."""
    if passage.page_end <= passage.page or not query:
        return passage.page
    terms = set(query_tokens(query))
    best, best_found = passage.page, -1
    starts = [(n, s) for n, s in library.page_starts(passage.doc_id) if passage.page <= n <= passage.page_end]
    for i, (number, start) in enumerate(starts):
        end = starts[i + 1][1] if i + 1 < len(starts) else passage.end
        part = passage.text[max(0, start - passage.start) : max(0, end - passage.start)]
        found = len(terms & set(index_tokens(part).split()))
        if found > best_found:
            best, best_found = number, found
    return best


def whole_documents(
    library: Library, doc_ids: list[str], budget_tokens: int, count_tokens: Callable[[str], int]
) -> list[Source] | None:
    """The documents whole, one source per block, when all of them fit in `budget_tokens` (as the
    model counts); None when they do not (then the best passages go, as for any question)."""
    if not doc_ids or len(doc_ids) > MAX_SOURCES:
        return None
    # The counts stored at ingest are the embedder's tokenizer's: a first, cheap look.
    if library.document_tokens(doc_ids) > 1.5 * budget_tokens:
        return None
    blocks = library.document_blocks(doc_ids)
    if not blocks or len(blocks) > MAX_SOURCES:
        return None
    docs = {doc_id: library.document(doc_id) for doc_id in doc_ids}
    sources, used = [], 0
    for n, (block_id, doc_id, start, end, page, page_end, _tokens, text) in enumerate(blocks, 1):
        doc = docs.get(doc_id)
        if doc is None:
            return None
        cost = count_tokens(text)
        used += cost
        if used > budget_tokens:
            return None
        sources.append(
            Source(
                n=n,
                doc_id=doc_id,
                title=doc.title,
                path=doc.path,
                block_id=block_id,
                start=start,
                end=end,
                page=page,
                page_end=page_end,
                span_pages=(page, page_end),
                synthetic_pages=doc.synthetic_pages,
                text=text.strip(),
                tokens=cost,
            )
        )
    return sources


def build_sources(
    library: Library,
    hits: list[SearchHit],
    budget_tokens: int,
    count_tokens: Callable[[str], int],
    query: Query | str = "",
    trim: bool = True,
) -> list[Source]:
    """The hits as at most MAX_SOURCES sources within `budget_tokens`, each widened by its neighbours;
    `trim`: a hit that does not fit whole goes as its best window of sentences (False: not at all)."""
    builder = _ContextBuilder(library, count_tokens, query if isinstance(query, Query) else None, trim)
    chosen = builder.choose(builder.spans(hits), budget_tokens)
    builder.widen(chosen, budget_tokens)
    text = query.text if isinstance(query, Query) else query
    return [builder.source(n, span, cost, text) for n, (span, cost) in enumerate(chosen, 1)]


class _ContextBuilder:
    def __init__(
        self, library: Library, count_tokens: Callable[[str], int], query: Query | None = None, trim: bool = True
    ) -> None:
        self.library = library
        self.count_tokens = count_tokens
        self.query, self.trim = query, trim
        self.block_texts: dict[int, tuple[int, str]] = {}
        # Each passage is counted once: a span costs the stretches from each passage's start to the
        # next one's, plus its last passage whole (token counts add up to within a token per seam).
        self.counted: dict[tuple[int, int, bool], int] = {}
        self.overhead = count_tokens("")  # what count_tokens adds to every call (the source header)

    def spans(self, hits: list[SearchHit]) -> list[_Span]:
        """Hits from the same block that touch or overlap become one span, best hit first."""
        blocks: dict[int, list[PassageRow]] = {}
        spans: list[_Span] = []
        # Only the passages near the hits of each block are read: widening never reaches further.
        reach: dict[int, tuple[int, int]] = {}
        for hit in hits:
            low, high = reach.get(hit.passage.block_id, (hit.passage.ordinal, hit.passage.ordinal))
            reach[hit.passage.block_id] = (min(low, hit.passage.ordinal), max(high, hit.passage.ordinal))
        for hit in hits:
            if len(spans) >= MAX_SOURCES:
                break
            p = hit.passage
            if p.block_id not in blocks:
                low, high = reach[p.block_id]
                blocks[p.block_id] = self.library.block_passages(p.block_id, (low - WIDEN_REACH, high + WIDEN_REACH))
                self.block_texts[p.block_id] = self.library.block_row(p.block_id)
            block = blocks[p.block_id]
            index = next((i for i, row in enumerate(block) if row.id == p.id), None)
            if index is None:
                continue
            merged = next((s for s in spans if s.block is block and s.touches(index)), None)
            if merged:
                merged.first, merged.last = min(merged.first, index), max(merged.last, index)
            else:
                spans.append(_Span(block, index))
        return spans

    def _passage_text(self, row: PassageRow) -> str:
        start, text = self.block_texts[row.block_id]
        return text[row.start - start : row.end - start]

    def _window(self, span: _Span, room: int) -> tuple[int, int] | None:
        """The anchor passage's best window of sentences within `room` tokens (document offsets),
        None where nothing of it fits or it holds nothing of the question."""
        row = span.block[span.anchor]
        limit = room - self.overhead
        if not self.trim or self.query is None or limit < MIN_WINDOW_TOKENS:
            return None
        text = self._passage_text(row)
        first, last = trimming.best_window(self.query, text, self._sentence_counter(text), limit)
        if (first, last) == (0, len(text)) or self.count_tokens(text[first:last]) > room:
            return None
        return row.start + first, row.start + last

    def _sentence_counter(self, text: str) -> Callable[[str], int]:
        """Token counts for `text`'s sentences at one count by the model: cl100k's, scaled by the
        model's count of the whole passage (llama-server counts through HTTP, one request each);
        the window chosen is counted by the model again before it goes in."""
        from ingest.tokens import block_encoding

        encoding = block_encoding()
        scale = (self.count_tokens(text) - self.overhead) / max(1, len(encoding.encode_ordinary(text)))
        return lambda piece: math.ceil(len(encoding.encode_ordinary(piece)) * scale)

    def _piece_cost(self, block: list[PassageRow], index: int, whole: bool) -> int:
        key = (block[index].id, index, whole)
        if key not in self.counted:
            start, text = self.block_texts[block[0].block_id]
            row = block[index]
            end = row.end if whole or index + 1 >= len(block) else block[index + 1].start
            self.counted[key] = self.count_tokens(text[row.start - start : end - start]) - (
                0 if whole else self.overhead
            )
        return self.counted[key]

    def cost(self, span: _Span) -> int:
        if span.window is not None:
            start, text = self.block_texts[span.block[0].block_id]
            return self.count_tokens(text[span.window[0] - start : span.window[1] - start])
        inner = sum(self._piece_cost(span.block, i, False) for i in range(span.first, span.last))
        return inner + self._piece_cost(span.block, span.last, True)

    def choose(self, spans: list[_Span], budget: int) -> list[tuple[_Span, int]]:
        """Whole spans, best first, while they fit; one that does not, as its best window of the room left."""
        chosen: list[tuple[_Span, int]] = []
        used = 0
        for span in spans:
            cost = self.cost(span)
            if used + cost > budget and span.first != span.last:
                # Merged hits too long together: keep the best one; widening regrows it within the budget.
                span.first = span.last = span.anchor
                cost = self.cost(span)
            if used + cost > budget:
                span.window = self._window(span, budget - used)
                if span.window is None:
                    continue
                cost = self.cost(span)
            chosen.append((span, cost))
            used += cost
        return chosen

    def widen(self, chosen: list[tuple[_Span, int]], budget: int) -> None:
        """One neighbour at a time for each source in turn, while the budget allows (a source still
        a window stays one)."""
        used = sum(cost for _, cost in chosen)
        grew = True
        while grew:
            grew = False
            for i, (span, cost) in enumerate(chosen):
                if span.window is not None:
                    continue
                for first, last in ((span.first - 1, span.last), (span.first, span.last + 1)):
                    if first < 0 or last >= len(span.block) or self._collides(span, first, last, chosen):
                        continue
                    old = (span.first, span.last)
                    span.first, span.last = first, last
                    new_cost = self.cost(span)
                    if used - cost + new_cost <= budget:
                        used += new_cost - cost
                        cost = new_cost
                        chosen[i] = (span, cost)
                        grew = True
                    else:
                        span.first, span.last = old

    @staticmethod
    def _collides(span: _Span, first: int, last: int, chosen: list[tuple[_Span, int]]) -> bool:
        """Would the span, grown to first..last, run into another source?"""
        return any(o is not span and o.block is span.block and o.first <= last and first <= o.last for o, _ in chosen)

    def source(self, n: int, span: _Span, cost: int, query: str) -> Source:
        if span.window is not None:
            return self._window_source(n, span, cost)
        rows = span.passages()
        head, anchor = rows[0], span.block[span.anchor]
        start, text = self.block_texts[head.block_id]
        return Source(
            n=n,
            doc_id=head.doc_id,
            title=head.title,
            path=head.path,
            block_id=head.block_id,
            start=head.start,
            end=rows[-1].end,
            page=best_page(self.library, anchor, query),
            page_end=anchor.page_end,
            span_pages=(min(r.page for r in rows), max(r.page_end for r in rows)),
            synthetic_pages=head.synthetic_pages,
            text=_text_of(start, text, rows[0], rows[-1]),
            passage_ids=[r.id for r in rows],
            tokens=cost,
        )

    def _window_source(self, n: int, span: _Span, cost: int) -> Source:
        """A source that is still a window of its passage: its own text, the pages it lies on."""
        anchor = span.block[span.anchor]
        start, text = self.block_texts[anchor.block_id]
        low, high = span.window
        page, page_end = window_pages(self.library, anchor, low, high)
        return Source(
            n=n, doc_id=anchor.doc_id, title=anchor.title, path=anchor.path, block_id=anchor.block_id,
            start=low, end=high, page=page, page_end=page_end, span_pages=(page, page_end),
            synthetic_pages=anchor.synthetic_pages, text=text[low - start : high - start].strip(),
            passage_ids=[anchor.id], tokens=cost, excerpt=True,
        )  # fmt: skip


def window_pages(library: Library, passage: PassageRow, low: int, high: int) -> tuple[int, int]:
    """The first and last page of the document span low..high inside `passage`."""
    if passage.page_end <= passage.page:
        return passage.page, passage.page_end
    starts = [(n, s) for n, s in library.page_starts(passage.doc_id) if passage.page <= n <= passage.page_end]
    first = max((n for n, s in starts if s <= low), default=passage.page)
    last = max((n for n, s in starts if s < high), default=first)
    return first, max(first, last)
