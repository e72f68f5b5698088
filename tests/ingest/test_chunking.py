"""Chunking against the real tokenizers: tiktoken for blocks, the embedder's own for passages."""

from __future__ import annotations

import bisect
import random
import re

import pytest

import ingest.chunking
from ingest.chunking import Chunker, join_pages, page_starts, sentence_units
from ingest.embedders.sentence_transformer import SentenceTransformerEmbedder
from ingest.keywords import index_tokens
from ingest.readers import read_document
from ingest.records import Page
from ingest.tokens import count_block_tokens

GEOTOPO = "pdf-samples/009-pdflatex-geotopo/GeoTopo-komprimiert.pdf"


@pytest.fixture(scope="module")
def tokenizer_only():
    return SentenceTransformerEmbedder()  # the tokenizer loads without torch


@pytest.fixture(scope="module")
def geotopo(corpus, tokenizer_only):
    pages = read_document(corpus / GEOTOPO).pages
    return pages, Chunker(tokenizer_only.token_offsets, tokenizer_only.max_tokens).chunk(pages)


def test_sentence_units_cover_the_text_and_split_at_cjk_punctuation():
    text = "第一句。第二句！Third one. Fourth?\n\nNew paragraph"
    units = sentence_units(text)
    assert "".join(text[u.start : u.end] for u in units) == text
    assert [text[u.start : u.end].strip() for u in units][:3] == ["第一句。", "第二句！", "Third one."]


def test_blocks_of_the_117_page_book_are_about_8k_tokens_and_cut_at_sentence_ends(geotopo):
    pages, chunks = geotopo
    text, _ = join_pages(pages)
    assert len(chunks.blocks) >= 6
    counts = count_block_tokens([b.text for b in chunks.blocks])
    assert max(counts) <= 8000 * 1.02  # sentence sums vs. whole-text BPE differ by a few tokens
    assert min(counts[:-1]) >= 6000
    for block in chunks.blocks[:-1]:
        after = text[block.end : block.end + 2]
        assert block.text.rstrip()[-1] in ".!?:)]\"'" or after.startswith("\n"), block.text[-40:]
    assert chunks.blocks[0].page == 1 and chunks.blocks[-1].page_end == 117


def test_passages_fit_the_embedder_and_never_cut_a_word(geotopo, tokenizer_only):
    pages, chunks = geotopo
    text, _ = join_pages(pages)
    assert len(chunks.passages) > 200
    for passage in chunks.passages:
        assert len(tokenizer_only.token_offsets(passage.text)) <= tokenizer_only.max_tokens
        assert text[passage.start : passage.end] == passage.text
        before = text[passage.start - 1] if passage.start else " "
        after = text[passage.end] if passage.end < len(text) else " "
        assert not (before.isalnum() and passage.text[0].isalnum()), passage.text[:30]
        assert not (after.isalnum() and passage.text[-1].isalnum()), passage.text[-30:]


def test_passages_overlap_a_little_and_cover_every_block(geotopo):
    _, chunks = geotopo
    by_block: dict[int, list] = {}
    for p in chunks.passages:
        by_block.setdefault(p.block, []).append(p)
    for block in chunks.blocks:
        passages = by_block[block.ordinal]
        assert passages[0].start == block.start and passages[-1].end == block.end
        for a, b in zip(passages, passages[1:], strict=False):
            assert b.start <= a.end, "a gap between passages would lose text"
            assert a.end - b.start < (a.end - a.start) / 2, "overlap is meant to be small"


def test_passages_know_their_pages():
    pages = [Page(1, "Alpha is on page one. " * 30), Page(2, "Beta is on page two. " * 30), Page(3, "Gamma ends it.")]
    tokenizer = SentenceTransformerEmbedder()
    chunks = Chunker(tokenizer.token_offsets, 60).chunk(pages)
    for p in chunks.passages:
        first = {"Alpha": 1, "Beta": 2, "Gamma": 3}[p.text.split()[0]]
        assert p.page == first
        assert p.page_end >= p.page


def test_chinese_without_spaces_is_cut_at_sentence_ends(tokenizer_only):
    sentence = "显卡驱动版本应当与版本匹配否则推理框架会报错。"
    pages = [Page(1, sentence * 40)]
    chunks = Chunker(tokenizer_only.token_offsets, 100).chunk(pages)
    assert len(chunks.passages) > 3
    for p in chunks.passages:
        assert len(tokenizer_only.token_offsets(p.text)) <= 100
        assert p.text.endswith("。") or p is chunks.passages[-1]


def test_streaming_pages_one_at_a_time_gives_the_same_chunks(geotopo, tokenizer_only):
    pages, whole = geotopo
    stream = Chunker(tokenizer_only.token_offsets, tokenizer_only.max_tokens).stream()
    released = []
    for page in pages:
        released += stream.add_pages([page])
    assert 0 < len(released) < len(whole.passages), "passages are released before the last page arrives"
    released += stream.finish()
    assert stream.chunks.blocks == whole.blocks
    assert released == whole.passages


# -- big and hostile inputs ------------------------------------------------------------
# Odd pieces of text: punctuation runs, closers, CJK stops, blank lines with spaces, words
# glued into runs. Where a page or a window ends among them, a sentence end could look
# different from the one in the whole text.
_ODD = [
    "中!!)))",
    "...",
    "\n \n",
    "。」",
    "word ",
    "Sentence. ",
    "\n\n",
    "!?",
    "显卡驱动。",
    " ",
    "x" * 50,
    "；",
    "» ",
    "a.) b",
]


def _word_offsets(text: str) -> list[tuple[int, int]]:
    """A cheap stand-in for the embedder's tokenizer: words, digits and single punctuation."""
    return [m.span() for m in re.finditer(r"[^\W\d_]{1,12}|\d{1,3}|[^\w\s]", text)]


def _char_counts(texts: list[str]) -> list[int]:
    return [len(t) // 4 + 1 for t in texts]


def _streamed(chunker: Chunker, pages: list[Page], seed: int):
    """Chunks and released passages of `pages` sent in random groups of 1 to 9 pages."""
    rng = random.Random(seed)
    stream = chunker.stream()
    released, at = [], 0
    while at < len(pages):
        size = rng.randint(1, 9)
        released += stream.add_pages(pages[at : at + size])
        at += size
    released += stream.finish()
    assert released == stream.chunks.passages
    return stream.chunks


def _assert_chunks_map_to_the_text(pages: list[Page], chunks) -> None:
    text, starts = join_pages(pages)
    assert page_starts(pages) == starts and all(text.startswith(p.text, s) for p, s in zip(pages, starts, strict=True))
    page_of = [p.number for p in pages]

    def page_at(position: int) -> int:
        return page_of[bisect.bisect_right(starts, position) - 1]

    for block in chunks.blocks:
        assert text[block.start : block.end] == block.text
        assert (block.page, block.page_end) == (page_at(block.start), page_at(block.end - 1))
    for passage in chunks.passages:
        assert text[passage.start : passage.end] == passage.text
        assert (passage.page, passage.page_end) == (page_at(passage.start), page_at(passage.end - 1))
    covered = "".join(text[a.end : b.start] for a, b in zip(chunks.blocks, chunks.blocks[1:], strict=False))
    assert not covered.strip(), "text between blocks is lost"


def test_five_megabytes_of_pages_stream_to_the_same_chunks_as_one_call(geotopo):
    book, _ = geotopo
    pages = [Page(n + 1, book[n % len(book)].text) for n in range(37 * len(book))]
    assert sum(len(p.text) for p in pages) > 5_000_000
    chunker = Chunker(_word_offsets, 200, count_block_tokens=_char_counts)
    whole = chunker.chunk(pages)
    assert len(whole.blocks) > 150 and len(whole.passages) > 4000
    assert _streamed(chunker, pages, seed=1) == whole
    _assert_chunks_map_to_the_text(pages, whole)
    assert whole.blocks[-1].page_end == len(pages)


def _odd_pages(seed: int, pages: int, most_pieces: int) -> list[Page]:
    rng = random.Random(seed)
    return [Page(n + 1, "".join(rng.choice(_ODD) for _ in range(rng.randint(1, most_pieces)))) for n in range(pages)]


@pytest.mark.parametrize("seed", range(12))
def test_odd_text_in_tiny_pages_streams_to_the_same_chunks(seed):
    pages = _odd_pages(seed, 400, 1 + seed % 4 * 20)
    chunker = Chunker(_word_offsets, 40, overlap_tokens=8, block_tokens=60 + seed * 40, count_block_tokens=_char_counts)
    whole = chunker.chunk(pages)
    assert _streamed(chunker, pages, seed) == whole
    _assert_chunks_map_to_the_text(pages, whole)


def test_chunks_do_not_depend_on_where_pages_or_windows_end(monkeypatch, tokenizer_only):
    pages = _odd_pages(5, 120, 300)
    chunker = Chunker(tokenizer_only.token_offsets, tokenizer_only.max_tokens, block_tokens=300)
    whole = chunker.chunk(pages)
    assert _streamed(chunker, pages, seed=2) == whole
    _assert_chunks_map_to_the_text(pages, whole)
    monkeypatch.setattr(ingest.chunking, "FEED_CHARS", 97)  # one page arrives in many small windows
    assert chunker.chunk(pages) == whole
    text, _ = join_pages(pages)
    unit_ends = sorted(u.end for u in sentence_units(text))
    for block in whole.blocks[:-1]:  # every block ends where a sentence of the whole text ends
        end = unit_ends[bisect.bisect_left(unit_ends, block.end)]
        assert not text[block.end : end].strip(), text[block.end - 20 : end]


def test_one_huge_line_is_cut_the_same_in_any_window(monkeypatch, geotopo):
    book, _ = geotopo
    line = " ".join(p.text.replace("\n", " ") for p in book) * 8  # about a megabyte, no line breaks
    pages = [Page(1, line)]
    chunker = Chunker(_word_offsets, 200, count_block_tokens=_char_counts)
    whole = chunker.chunk(pages)
    monkeypatch.setattr(ingest.chunking, "FEED_CHARS", 10_007)
    assert chunker.chunk(pages) == whole
    _assert_chunks_map_to_the_text(pages, whole)
    assert max(len(b.text) for b in whole.blocks) < 40_000


def test_runs_without_spaces_become_bounded_passages_and_keep_their_words(tokenizer_only):
    rng = random.Random(7)
    hex_run = "".join(rng.choice("0123456789abcdef") for _ in range(150_000))
    b64_run = "".join(
        rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwxyz+/") for _ in range(150_000)
    )
    pages = [
        Page(1, hex_run[:70_000] + "docdeskneedle" + hex_run[70_000:]),  # glued: one "word" of 150 kB
        Page(2, "a" * 200_000),  # 8 characters a tiktoken token: 64,000-character blocks
        Page(3, b64_run[:90_000] + "/haystackword/" + b64_run[90_000:]),
    ]
    chunker = Chunker(tokenizer_only.token_offsets, tokenizer_only.max_tokens)
    chunks = chunker.chunk(pages)
    for passage in chunks.passages:
        assert len(passage.text) <= 8 * tokenizer_only.max_tokens  # about 2,000 characters, not 64,000
        assert len(tokenizer_only.token_offsets(passage.text)) <= tokenizer_only.max_tokens
    assert any("docdeskneedle" in p.text for p in chunks.passages)
    assert any("haystackword" in index_tokens(p.text).split() for p in chunks.passages)
    _assert_chunks_map_to_the_text(pages, chunks)
    assert {p.page for p in chunks.passages} == {1, 2, 3}


def test_the_tokenizer_sees_bounded_pieces_with_the_same_offsets(geotopo, tokenizer_only):
    book, _ = geotopo
    text = "\n\n".join(p.text for p in book * 2)[:200_000]
    seen: list[int] = []

    def offsets(piece: str):
        seen.append(len(piece))
        return tokenizer_only.token_offsets(piece)

    spans = Chunker(offsets, tokenizer_only.max_tokens)._token_spans(text)
    assert len(seen) > 3 and max(seen) <= ingest.chunking.OFFSETS_PIECE_CHARS
    assert spans == [o for o in tokenizer_only.token_offsets(text) if o[1] > o[0]]


def test_a_document_over_the_limit_is_cut_with_a_warning(caplog):
    pages = [Page(n + 1, f"Page {n + 1} says something. " * 40) for n in range(30)]
    _, starts = join_pages(pages)
    last = bisect.bisect_right(starts, 10_000)  # the page holding character 10,000
    stream = Chunker(_word_offsets, 200, count_block_tokens=_char_counts, max_document_chars=10_000).stream()
    stream.add_pages(pages[:20])
    stream.add_pages(pages[20:])
    stream.finish()
    assert [p.number for p in stream.pages] == list(range(1, last + 1))
    assert stream.pages[:-1] == pages[: last - 1] and pages[last - 1].text.startswith(stream.pages[-1].text)
    assert len(stream.text) == 10_000
    assert stream.chunks.passages[-1].end <= 10_000 and stream.chunks.passages[-1].page == last
    _assert_chunks_map_to_the_text(stream.pages, stream.chunks)
    assert len(stream.warnings) == 1 and "10,000 characters" in stream.warnings[0]
    assert f"page {last}" in stream.warnings[0] and stream.warnings[0] in caplog.text
    assert stream.head(30) == stream.text[:30]
