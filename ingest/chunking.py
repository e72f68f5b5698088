"""Cut a document into ~8k-token blocks and, inside them, passages that fit the embedder.

Blocks are counted in tiktoken cl100k tokens and cut at paragraph or sentence ends.
Passages are counted in the embedding model's own tokenizer, so that nothing an
embedder sees is silently truncated, and overlap a little so a fact on a cut survives.
The text goes through once, in windows, so time per megabyte is flat whatever its shape.
"""

from __future__ import annotations

import bisect
import logging
import re
from collections.abc import Callable, Sequence

from ingest.cjk import CJK_RANGES
from ingest.records import Block, Chunks, Page, Passage
from ingest.sentences import SentenceWindow, sentence_units

__all__ = ["Chunker", "ChunkStream", "join_pages", "page_starts", "sentence_units"]

log = logging.getLogger(__name__)

PAGE_SEPARATOR = "\n\n"
BLOCK_TOKENS = 8000
# A block is cut at a paragraph end if one lies in its last quarter, else at a sentence end.
PARAGRAPH_CUT_FROM = 0.75
# Text past this is not indexed, with a warning: 100 million characters (about 100 MB) are
# 100,000 passages and hours of embedding on a laptop; a hostile file must not take more.
MAX_DOCUMENT_CHARS = 100_000_000
# Passages are bounded in characters too: real text has 4-6 characters a token, but a run
# without spaces (a hex dump) is one word, one [UNK] token however long.
PASSAGE_CHARS_PER_TOKEN = 8
LONG_TOKEN_CHARS = 64  # a longer token (an [UNK] for a whole run) counts as pieces of this size
OFFSETS_PIECE_CHARS = 1 << 16  # the passage tokenizer never sees more at once
FEED_CHARS = 1 << 20  # a huge page enters the window in slices of this many characters
_CJK_CHAR = re.compile(f"[{CJK_RANGES}]")
_SPACE = re.compile(r"(?s).*\s")

OffsetsFn = Callable[[str], Sequence[tuple[int, int]]]
CountFn = Callable[[list[str]], list[int]]


class Chunker:
    """Blocks by tiktoken count, passages by the embedder's tokenizer offsets."""

    def __init__(
        self,
        passage_offsets: OffsetsFn,
        passage_tokens: int,
        overlap_tokens: int = 32,
        block_tokens: int = BLOCK_TOKENS,
        count_block_tokens: CountFn | None = None,
        max_document_chars: int = MAX_DOCUMENT_CHARS,
    ) -> None:
        if count_block_tokens is None:
            from ingest.tokens import count_block_tokens as count_block_tokens
        self.passage_offsets = passage_offsets
        self.passage_tokens = passage_tokens
        self.overlap_tokens = min(overlap_tokens, passage_tokens // 4)
        self.passage_chars = PASSAGE_CHARS_PER_TOKEN * passage_tokens
        self.overlap_chars = PASSAGE_CHARS_PER_TOKEN * self.overlap_tokens
        self.block_tokens = block_tokens
        self.count_block_tokens = count_block_tokens
        self.max_document_chars = max_document_chars

    # -- passages -------------------------------------------------------------
    def passage_spans(self, text: str) -> list[tuple[int, int]]:
        """Spans of `text` that each fit `passage_tokens` of the embedder's tokenizer."""
        offsets = self._token_spans(text)
        if not offsets:
            return []
        sentence_ends = sorted({u.end for u in sentence_units(text)})
        line_ends = [m.end() for m in re.finditer(r"\n", text)]
        token_starts, token_ends = [o[0] for o in offsets], [o[1] for o in offsets]
        spans: list[tuple[int, int]] = []
        i, n = 0, len(offsets)
        while i < n:
            start = offsets[i][0]
            by_chars = bisect.bisect_right(token_ends, start + self.passage_chars, lo=i)
            j = max(i + 1, min(n, i + self.passage_tokens, by_chars))
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

    def _token_spans(self, text: str) -> list[tuple[int, int]]:
        """The tokenizer's offsets, asked for in pieces cut after whitespace (where there is some);
        a token longer than LONG_TOKEN_CHARS (an [UNK]) becomes pieces, so passages can cut it."""
        spans: list[tuple[int, int]] = []
        start = 0
        while start < len(text):
            end = min(len(text), start + OFFSETS_PIECE_CHARS)
            if end < len(text):
                space = _SPACE.match(text, start + OFFSETS_PIECE_CHARS // 2, end)
                end = space.end() if space else end
            piece = [o for o in self.passage_offsets(text[start:end]) if o[1] > o[0]]
            spans += [(s + start, e + start) for s, e in piece] if start else piece
            start = end
        if any(e - s > LONG_TOKEN_CHARS for s, e in spans):
            spans = [(p, min(p + LONG_TOKEN_CHARS, e)) for s, e in spans for p in range(s, e, LONG_TOKEN_CHARS)]
        return spans

    def _overlap_start(self, text, offsets, token_starts, sentence_ends, i, next_token, end) -> int:
        """Step back `overlap_tokens` from the cut, preferring a sentence start."""
        by_chars = bisect.bisect_left(token_starts, end - self.overlap_chars, lo=i + 1, hi=next_token)
        back = max(i + 1, next_token - self.overlap_tokens, by_chars)
        if back >= next_token:
            return max(next_token, i + 1)
        window_start = offsets[back][0]
        boundary = _first_in(sentence_ends, window_start, end - 1)
        if boundary is not None:
            k = bisect.bisect_left(token_starts, boundary, lo=back)
            if i < k < next_token:
                return k
        if next_token < len(offsets) and not _starts_word(text, offsets, next_token):
            return back  # cut inside a word longer than a passage: overlap inside it too
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

    A block is cut when the next sentence would overflow it, and text appended later cannot
    move that cut: so blocks (and their passages) are released as soon as they are final, and
    the embedder works on them while the reader extracts the next pages. The result is the
    same however the pages are grouped into calls (see SentenceWindow), and a huge page goes
    through in slices, so memory holds the pages and chunks plus one window and one block.
    """

    def __init__(self, chunker: Chunker) -> None:
        self.chunker = chunker
        self.pages: list[Page] = []
        self.chunks = Chunks([], [])
        self.warnings: list[str] = []
        self._starts: list[int] = []  # where each page starts in the text
        self._window = SentenceWindow(chunker.block_tokens)  # >= 1 character per token
        self._unfed = 0  # characters fed since units were last taken
        self._open: list[tuple[int, int]] = []  # units of the block being filled
        self._total = self._paragraph_total = 0  # its tokens, and those up to its last paragraph end
        self._last_paragraph: int | None = None  # index in _open after which a paragraph ends
        self._truncated = False

    @property
    def text(self) -> str:
        """The whole text so far, joined on every call: for a sample of it, `head` is cheap."""
        return PAGE_SEPARATOR.join(page.text for page in self.pages)

    def head(self, chars: int) -> str:
        """The first `chars` characters of the text, without joining the rest."""
        return PAGE_SEPARATOR.join(p.text for p in self.pages[: bisect.bisect_left(self._starts, chars)])[:chars]

    def add_pages(self, pages: list[Page]) -> list[Passage]:
        """Append pages; returns the passages that became final."""
        released: list[Passage] = []
        for page in pages:
            page = self._within_limit(page)
            if page is None:
                break
            if self.pages:
                released += self._feed(PAGE_SEPARATOR)
            self._starts.append(self._window.length)
            self.pages.append(page)
            released += self._feed(page.text)
        return released + self._advance(final=False)

    def finish(self) -> list[Passage]:
        """No more pages: the rest of the text becomes final too."""
        return self._advance(final=True)

    def _within_limit(self, page: Page) -> Page | None:
        """The page, or as much of it as the document's character limit leaves room for."""
        if self._truncated:
            return None
        limit = self.chunker.max_document_chars
        room = limit - self._window.length - (len(PAGE_SEPARATOR) if self.pages else 0)
        if len(page.text) <= room:
            return page
        self._truncated = True
        message = (
            f"only the first {limit:,} characters are indexed, DocDesk's limit for one document "
            f"(about {limit / 1e6:g} MB of text): the text stops on page {page.number}"
        )
        self.warnings.append(message)
        log.warning(message)
        return Page(page.number, page.text[:room]) if room > 0 else None

    def _feed(self, text: str) -> list[Passage]:
        released: list[Passage] = []
        for at in range(0, len(text), FEED_CHARS):
            piece = text[at : at + FEED_CHARS]
            self._window.feed(piece)
            self._unfed += len(piece)
            if self._unfed >= FEED_CHARS:
                released += self._advance(final=False)
        return released

    def _advance(self, final: bool) -> list[Passage]:
        self._unfed = 0
        released = self._add_units(self._window.units(final))
        if final and self._open:
            released += self._close_block(len(self._open), self._total)
        self._window.release(self._open[0][0] if self._open else self._window.length)
        return released

    def _add_units(self, units: list[tuple[int, int, bool]]) -> list[Passage]:
        """Fill the open block; when the next unit would overflow it, cut at its last paragraph
        end if that lies in its last quarter, else before this unit."""
        if not units:
            return []
        limit = self.chunker.block_tokens
        texts = [self._window.text(s, e) for s, e, _ in units]
        distinct = list(dict.fromkeys(texts))  # running heads, table rows, log lines: counted once
        known = dict(zip(distinct, self.chunker.count_block_tokens(distinct), strict=True))
        counts = [known[t] for t in texts]
        released: list[Passage] = []
        for (start, end, paragraph_end), count in zip(units, counts, strict=True):
            if self._total + count > limit and self._open:
                if self._last_paragraph is not None and self._paragraph_total >= PARAGRAPH_CUT_FROM * limit:
                    released += self._close_block(self._last_paragraph + 1, self._paragraph_total)
                else:
                    released += self._close_block(len(self._open), self._total)
            self._open.append((start, end))
            self._total += count
            if paragraph_end:
                self._last_paragraph, self._paragraph_total = len(self._open) - 1, self._total
        return released

    def _close_block(self, cut: int, tokens: int) -> list[Passage]:
        start, end = self._open[0][0], self._open[cut - 1][1]
        del self._open[:cut]
        self._total -= tokens
        self._last_paragraph = None
        return self._add_block(start, end, tokens)

    def _page_at(self, position: int) -> int:
        return self.pages[max(0, bisect.bisect_right(self._starts, position) - 1)].number

    def _add_block(self, b_start: int, b_end: int, tokens: int) -> list[Passage]:
        raw = self._window.text(b_start, b_end)
        start, end = _strip(raw, 0, len(raw))
        if end <= start:
            return []
        block_text = raw[start:end]
        b_start, b_end = b_start + start, b_start + end
        ordinal = len(self.chunks.blocks)
        self.chunks.blocks.append(
            Block(ordinal, b_start, b_end, self._page_at(b_start), self._page_at(b_end - 1), tokens, block_text)
        )
        passages = []
        for p_ordinal, (s, e) in enumerate(self.chunker.passage_spans(block_text)):
            start, end = b_start + s, b_start + e
            passages.append(
                Passage(ordinal, p_ordinal, start, end, self._page_at(start), self._page_at(end - 1), block_text[s:e])
            )
        self.chunks.passages += passages
        return passages


def join_pages(pages: list[Page]) -> tuple[str, list[int]]:
    """The document text and the offset where each page starts in it."""
    return PAGE_SEPARATOR.join(p.text for p in pages), page_starts(pages)


def page_starts(pages: list[Page]) -> list[int]:
    """The offset where each page starts in the document text, without joining it."""
    starts: list[int] = []
    position = 0
    for page in pages:
        starts.append(position)
        position += len(page.text) + len(PAGE_SEPARATOR)
    return starts


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
