"""Chunking against the real tokenizers: tiktoken for blocks, the embedder's own for passages."""

from __future__ import annotations

import pytest

from ingest.chunking import Chunker, join_pages, sentence_units
from ingest.embedding import SentenceTransformerEmbedder
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
