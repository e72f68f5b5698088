"""Cut a document into ~8k-token blocks and, inside them, passages that fit the embedder.

Blocks are counted in tiktoken cl100k tokens and cut at paragraph or sentence ends.
Passages are counted in the embedding model's own tokenizer, so that nothing an
embedder sees is silently truncated, and overlap a little so a fact on a cut survives.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .cjk import CJK_RANGES
from .records import Block, Chunks, Page, Passage

PAGE_SEPARATOR = "\n\n"
BLOCK_TOKENS = 8000
# A block is cut at a paragraph end if one lies in its last quarter, else at a sentence end.
PARAGRAPH_CUT_FROM = 0.75

# Sentence ends: Latin punctuation before whitespace, CJK full stops anywhere
# (after NFKC, full-width ！？； have become !?;, so those count when CJK precedes them).
_CJK = CJK_RANGES
_SENTENCE_END = re.compile(rf"(?:[.!?…]+[\"'”’»)\]]*(?=\s)|[。！？；]+[”’」』)]*|(?<=[{_CJK}])[!?;]+)")
_PARAGRAPH_END = re.compile(r"\n\s*\n")
_CJK_CHAR = re.compile(f"[{_CJK}]")

OffsetsFn = Callable[[str], Sequence[tuple[int, int]]]
CountFn = Callable[[list[str]], list[int]]


@dataclass(frozen=True)
class _Unit:
    start: int
    end: int
    paragraph_end: bool


def sentence_units(text: str) -> list[_Unit]:
    """Split text into contiguous sentence spans covering all of it."""
    cuts: dict[int, bool] = {}
    for match in _SENTENCE_END.finditer(text):
        cuts.setdefault(match.end(), False)
    for match in _PARAGRAPH_END.finditer(text):
        cuts[match.start()] = True
    units: list[_Unit] = []
    start = 0
    for position in sorted(cuts):
        if position > start:
            units.append(_Unit(start, position, cuts[position]))
            start = position
    if start < len(text):
        units.append(_Unit(start, len(text), True))
    return units


def _split_long_unit(text: str, unit: _Unit, max_chars: int) -> list[_Unit]:
    """A 'sentence' longer than a block (a table, a dump): cut at whitespace."""
    pieces: list[_Unit] = []
    start = unit.start
    while unit.end - start > max_chars:
        space = text.rfind(" ", start + max_chars // 2, start + max_chars)
        end = space + 1 if space != -1 else start + max_chars
        pieces.append(_Unit(start, end, False))
        start = end
    pieces.append(_Unit(start, unit.end, unit.paragraph_end))
    return pieces


class Chunker:
    """Blocks by tiktoken count, passages by the embedder's tokenizer offsets."""

    def __init__(
        self,
        passage_offsets: OffsetsFn,
        passage_tokens: int,
        overlap_tokens: int = 32,
        block_tokens: int = BLOCK_TOKENS,
        count_block_tokens: CountFn | None = None,
    ) -> None:
        if count_block_tokens is None:
            from .tokens import count_block_tokens as count_block_tokens
        self.passage_offsets = passage_offsets
        self.passage_tokens = passage_tokens
        self.overlap_tokens = min(overlap_tokens, passage_tokens // 4)
        self.block_tokens = block_tokens
        self.count_block_tokens = count_block_tokens

    # -- blocks ---------------------------------------------------------------
    def block_spans(self, text: str, count: CountFn | None = None) -> list[tuple[int, int, int]]:
        """(start, end, tokens) of each block."""
        units: list[_Unit] = []
        for unit in sentence_units(text):
            units.extend(_split_long_unit(text, unit, self.block_tokens))  # >= 1 char per token
        counts = (count or self.count_block_tokens)([text[u.start : u.end] for u in units])
        blocks: list[tuple[int, int, int]] = []
        first = 0
        total = 0
        last_paragraph: int | None = None  # index after which a paragraph ends
        paragraph_total = 0
        for i, (unit, count) in enumerate(zip(units, counts, strict=True)):
            if total + count > self.block_tokens and i > first:
                if last_paragraph is not None and paragraph_total >= PARAGRAPH_CUT_FROM * self.block_tokens:
                    cut, cut_total = last_paragraph + 1, paragraph_total
                else:
                    cut, cut_total = i, total
                blocks.append((units[first].start, units[cut - 1].end, cut_total))
                first, total = cut, total - cut_total
                last_paragraph = None
            total += count
            if unit.paragraph_end:
                last_paragraph, paragraph_total = i, total
        if first < len(units):
            blocks.append((units[first].start, units[-1].end, total))
        return blocks

    # -- passages -------------------------------------------------------------
    def passage_spans(self, text: str) -> list[tuple[int, int]]:
        """Spans of `text` that each fit `passage_tokens` of the embedder's tokenizer."""
        offsets = [o for o in self.passage_offsets(text) if o[1] > o[0]]
        if not offsets:
            return []
        sentence_ends = sorted({u.end for u in sentence_units(text)})
        line_ends = [m.end() for m in re.finditer(r"\n", text)]
        token_starts = [o[0] for o in offsets]
        spans: list[tuple[int, int]] = []
        i, n = 0, len(offsets)
        budget = self.passage_tokens
        while i < n:
            j = min(n, i + budget)
            start = offsets[i][0]
            if j == n:
                spans.append((start, len(text)))  # keep trailing characters the tokenizer ignores
                break
            hi = offsets[j - 1][1]
            lo = start + (hi - start) // 2  # a cut must keep the passage at least half full
            end = _last_in(sentence_ends, lo, hi) or _last_in(line_ends, lo, hi)
            if end is None:
                k = _word_start_at_or_before(text, offsets, j, i + 1)
                end = offsets[k - 1][1]
            spans.append((start, end))
            next_token = bisect.bisect_left(token_starts, end, lo=i + 1)
            i = self._overlap_start(text, offsets, token_starts, sentence_ends, i, next_token, end)
        return [_strip(text, s, e) for s, e in spans if text[s:e].strip()]

    def _overlap_start(self, text, offsets, token_starts, sentence_ends, i, next_token, end) -> int:
        """Step back `overlap_tokens` from the cut, preferring a sentence start."""
        back = max(i + 1, next_token - self.overlap_tokens)
        if back >= next_token:
            return max(next_token, i + 1)
        window_start = offsets[back][0]
        boundary = _first_in(sentence_ends, window_start, end - 1)
        if boundary is not None:
            k = bisect.bisect_left(token_starts, boundary, lo=back)
            if i < k < next_token:
                return k
        return _word_start_at_or_after(text, offsets, back, next_token)

    # -- both -----------------------------------------------------------------
    def chunk(self, pages: list[Page]) -> Chunks:
        stream = self.stream()
        stream.add_pages(pages)
        stream.finish()
        return stream.chunks

    def stream(self) -> ChunkStream:
        return ChunkStream(self)


class ChunkStream:
    """Chunks a document while its pages are still arriving.

    Every block but the last one of the text seen so far is final: a block is cut when
    the next complete sentence would overflow it, and text appended later cannot move
    that cut. So blocks (and their passages) are released as soon as they are final,
    and the embedder can work on them while the reader extracts the following pages.
    """

    def __init__(self, chunker: Chunker) -> None:
        self.chunker = chunker
        self.pages: list[Page] = []
        self._parts: list[str] = []
        self._starts: list[int] = []
        self._length = 0
        self._final_upto = 0  # text before this offset is cut into final blocks
        self.chunks = Chunks([], [])
        self._counts: dict[str, int] = {}  # unit text -> tokens; pages arrive often, units rarely change

    def _count(self, texts: list[str]) -> list[int]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._counts]
        if missing:
            self._counts.update(zip(missing, self.chunker.count_block_tokens(missing), strict=True))
        return [self._counts[t] for t in texts]

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def add_pages(self, pages: list[Page]) -> list[Passage]:
        """Append pages; returns the passages that became final."""
        for page in pages:
            if self.pages:
                self._parts.append(PAGE_SEPARATOR)
                self._length += len(PAGE_SEPARATOR)
            self._starts.append(self._length)
            self._parts.append(page.text)
            self._length += len(page.text)
            self.pages.append(page)
        return self._cut(final=False)

    def finish(self) -> list[Passage]:
        """No more pages: the rest of the text becomes final too."""
        return self._cut(final=True)

    def _page_at(self, position: int) -> int:
        return self.pages[max(0, bisect.bisect_right(self._starts, position) - 1)].number

    def _cut(self, final: bool) -> list[Passage]:
        text = self.text
        spans = self.chunker.block_spans(text[self._final_upto :], self._count)
        if not final:
            spans = spans[:-1]
        if spans:
            self._counts.clear()  # the units of released blocks will not be counted again
        released: list[Passage] = []
        for b_start, b_end, tokens in spans:
            b_start, b_end = b_start + self._final_upto, b_end + self._final_upto
            released += self._add_block(text, b_start, b_end, tokens)
        if spans:
            self._final_upto = spans[-1][1] + self._final_upto
        return released

    def _add_block(self, text: str, b_start: int, b_end: int, tokens: int) -> list[Passage]:
        b_start, b_end = _strip(text, b_start, b_end)
        if b_end <= b_start:
            return []
        block_text = text[b_start:b_end]
        ordinal = len(self.chunks.blocks)
        self.chunks.blocks.append(
            Block(ordinal, b_start, b_end, self._page_at(b_start), self._page_at(b_end - 1), tokens, block_text)
        )
        passages = []
        for p_ordinal, (s, e) in enumerate(self.chunker.passage_spans(block_text)):
            start, end = b_start + s, b_start + e
            passages.append(
                Passage(ordinal, p_ordinal, start, end, self._page_at(start), self._page_at(end - 1), text[start:end])
            )
        self.chunks.passages += passages
        return passages


def join_pages(pages: list[Page]) -> tuple[str, list[int]]:
    """The document text and the offset where each page starts in it."""
    starts: list[int] = []
    position = 0
    for page in pages:
        starts.append(position)
        position += len(page.text) + len(PAGE_SEPARATOR)
    return PAGE_SEPARATOR.join(p.text for p in pages), starts


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _last_in(sorted_positions: list[int], lo: int, hi: int) -> int | None:
    k = bisect.bisect_right(sorted_positions, hi) - 1
    return sorted_positions[k] if k >= 0 and sorted_positions[k] > lo else None


def _first_in(sorted_positions: list[int], lo: int, hi: int) -> int | None:
    k = bisect.bisect_left(sorted_positions, lo)
    return sorted_positions[k] if k < len(sorted_positions) and sorted_positions[k] <= hi else None


def _starts_word(text: str, offsets, k: int) -> bool:
    """Whether token k begins a word (so cutting before it never splits one)."""
    begin = offsets[k][0]
    if begin != offsets[k - 1][1]:
        return True
    before, here = text[begin - 1], text[begin]
    return not (before.isalnum() and here.isalnum()) or bool(_CJK_CHAR.match(here))


def _word_start_at_or_before(text: str, offsets, k: int, floor: int) -> int:
    for candidate in range(k, floor, -1):
        if _starts_word(text, offsets, candidate):
            return candidate
    return k  # one word longer than a passage: cut it, there is nothing better


def _word_start_at_or_after(text: str, offsets, k: int, ceiling: int) -> int:
    for candidate in range(k, ceiling):
        if _starts_word(text, offsets, candidate):
            return candidate
    return ceiling
