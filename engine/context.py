"""The token-budgeted context of an answer: the best passages first, widened with their neighbours.

Hits from the same block that touch or overlap are merged into one source, so the model reads
continuous text and the user sees one citation. When the budget allows, each source grows by
the passages before and after it in its block, best source first, one step at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ingest.keywords import index_tokens, query_tokens
from ingest.records import CitedSource, page_label
from ingest.store.library import Library, PassageRow

from .retrieve import SearchHit

MAX_SOURCES = 8
WIDEN_REACH = 8  # passages read on each side of a hit; ~2,000 tokens, more than a context takes


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
        )


class _Span:
    """A growing run of consecutive passages inside one block."""

    def __init__(self, block: list[PassageRow], index: int) -> None:
        self.block = block
        self.first = self.last = self.anchor = index

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


def build_sources(
    library: Library,
    hits: list[SearchHit],
    budget_tokens: int,
    count_tokens: Callable[[str], int],
    query: str = "",
) -> list[Source]:
    blocks: dict[int, list[PassageRow]] = {}
    block_texts: dict[int, tuple[int, str]] = {}
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
            blocks[p.block_id] = library.block_passages(p.block_id, (low - WIDEN_REACH, high + WIDEN_REACH))
            block_texts[p.block_id] = library.block_row(p.block_id)
        block = blocks[p.block_id]
        index = next((i for i, row in enumerate(block) if row.id == p.id), None)
        if index is None:
            continue
        merged = next((s for s in spans if s.block is block and s.touches(index)), None)
        if merged:
            merged.first, merged.last = min(merged.first, index), max(merged.last, index)
        else:
            spans.append(_Span(block, index))

    def span_text(span: _Span) -> str:
        start, text = block_texts[span.block[0].block_id]
        return _text_of(start, text, span.block[span.first], span.block[span.last])

    # Each passage is counted once: a span costs the stretches from each passage's start to the
    # next one's, plus its last passage whole (token counts add up to within a token per seam).
    counted: dict[tuple[int, int, bool], int] = {}

    def piece_cost(block: list[PassageRow], index: int, whole: bool) -> int:
        key = (block[index].id, index, whole)
        if key not in counted:
            start, text = block_texts[block[0].block_id]
            row = block[index]
            end = row.end if whole or index + 1 >= len(block) else block[index + 1].start
            counted[key] = count_tokens(text[row.start - start : end - start]) - (0 if whole else overhead)
        return counted[key]

    overhead = count_tokens("")  # what count_tokens adds to every call (the source header)

    def span_cost(span: _Span) -> int:
        return sum(piece_cost(span.block, i, False) for i in range(span.first, span.last)) + piece_cost(
            span.block, span.last, True
        )

    # Take whole spans, best first, while they fit.
    chosen: list[tuple[_Span, int]] = []
    used = 0
    for span in spans:
        cost = span_cost(span)
        if used + cost > budget_tokens and span.first != span.last:
            # Merged hits too long together: keep the best one; widening regrows it within the budget.
            span.first = span.last = span.anchor
            cost = span_cost(span)
        if used + cost > budget_tokens:
            continue
        chosen.append((span, cost))
        used += cost

    # Widen: one neighbour at a time for each source in turn, while the budget allows.
    grew = True
    while grew:
        grew = False
        for i, (span, cost) in enumerate(chosen):
            for first, last in ((span.first - 1, span.last), (span.first, span.last + 1)):
                if first < 0 or last >= len(span.block):
                    continue
                if any(
                    o is not span and o.block is span.block and o.first <= last and first <= o.last for o, _ in chosen
                ):
                    continue  # would run into another source
                old = (span.first, span.last)
                span.first, span.last = first, last
                new_cost = span_cost(span)
                if used - cost + new_cost <= budget_tokens:
                    used += new_cost - cost
                    cost = new_cost
                    chosen[i] = (span, cost)
                    grew = True
                else:
                    span.first, span.last = old

    sources = []
    for n, (span, cost) in enumerate(chosen, 1):
        rows = span.passages()
        head, anchor = rows[0], span.block[span.anchor]
        sources.append(
            Source(
                n=n,
                doc_id=head.doc_id,
                title=head.title,
                path=head.path,
                block_id=head.block_id,
                start=head.start,
                end=rows[-1].end,
                page=best_page(library, anchor, query),
                page_end=anchor.page_end,
                span_pages=(min(r.page for r in rows), max(r.page_end for r in rows)),
                synthetic_pages=head.synthetic_pages,
                text=span_text(span),
                passage_ids=[r.id for r in rows],
                tokens=cost,
            )
        )
    return sources
