"""Summaries end to end: the bundled model, a multi-block document, cancel and resume, the cache,
and the map step's concurrency against a local OpenAI-compatible server."""

from __future__ import annotations

import threading

import pytest

from engine.backends.openai_http import OpenAIBackend
from engine.errors import Cancelled
from engine.summarize import Summarizer, bullets
from ingest.chunking import Chunker
from ingest.pipeline import Ingestor
from ingest.store.library import Library
from ingest.store.summary_cache import SummaryCache
from tests.conftest import SAMPLES
from tests.counting import CountingBackend
from tests.engine.standin_server import serve

pytestmark = pytest.mark.models


def small_block_library(folder, embedder, *files, block_tokens=350) -> Library:
    """Blocks of a few hundred tokens, so that a short document has several (the real ones are ~8k)."""
    library = Library(folder)
    ingestor = Ingestor(library, embedder)
    ingestor.chunker = Chunker(embedder.token_offsets, embedder.max_tokens, block_tokens=block_tokens)
    assert not ingestor.add(list(files)).failed
    return library


@pytest.fixture(scope="module")
def guide(tmp_path_factory, embedder):
    library = small_block_library(tmp_path_factory.mktemp("summary"), embedder, SAMPLES / "docdesk-guide.pdf")
    yield library, library.documents()[0]
    library.close()


def test_summary_is_structured_with_page_references_and_resumes_after_cancel(guide, bundled_llm):
    library, doc = guide
    blocks = library.blocks(doc.id)
    assert len(blocks) >= 3
    backend = CountingBackend(bundled_llm)
    cancel = threading.Event()
    seen = []

    def stop_after_first_block(progress):
        seen.append((progress.stage, progress.done, progress.total))
        if progress.stage == "map" and progress.done >= 1:
            cancel.set()

    with pytest.raises(Cancelled):
        Summarizer(library, backend).summarize(doc.id, on_progress=stop_after_first_block, cancel=cancel)
    kept = SummaryCache(library).count(doc.id)
    assert kept >= 1 and backend.requests <= 2  # the in-process backend runs one request at a time
    assert seen[0] == ("map", 0, len(blocks))

    resumed_backend = CountingBackend(bundled_llm)
    summary = Summarizer(library, resumed_backend).summarize(doc.id)
    assert summary.from_cache >= kept
    assert resumed_backend.requests == summary.steps - summary.from_cache  # cached blocks were not redone
    assert resumed_backend.most_in_flight == 1
    assert summary.blocks == len(blocks)

    text = summary.text
    assert text.startswith("# DocDesk User Guide") and "## Overview" in text and "## Key points" in text
    overview = text.split("## Overview", 1)[1].split("## Key points", 1)[0].strip()
    assert len(overview) > 40
    assert "**pp. 1–" in text or "**p. 1**" in text  # key points carry their pages

    repeat_backend = CountingBackend(bundled_llm)
    again = Summarizer(library, repeat_backend).summarize(doc.id)
    assert again.text == text and again.from_cache == again.steps and repeat_backend.requests == 0


@pytest.fixture
def standin_url():
    server = serve(0, 0.3, 4)  # answers each request after 0.3 s, four at a time
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_a_block_longer_than_the_model_reads_is_split(tmp_path, embedder, standin_url):
    library = small_block_library(tmp_path, embedder, SAMPLES / "docdesk-guide.pdf", block_tokens=1500)
    doc = library.documents()[0]
    backend = OpenAIBackend(standin_url, "standin", max_concurrency=4)
    summary = Summarizer(library, backend, piece_tokens=120).summarize(doc.id)
    assert summary.pieces > summary.blocks
    library.close()


def test_a_chinese_document_is_summarized_in_chinese(tmp_path, embedder, bundled_llm):
    library = small_block_library(tmp_path, embedder, SAMPLES / "docdesk-guide-zh.pdf", block_tokens=2000)
    doc = library.documents()[0]
    summary = Summarizer(library, bundled_llm).summarize(doc.id)
    assert summary.language == "zh" and "## 概述" in summary.text and "## 要点" in summary.text
    assert "第 1" in summary.text
    library.close()


def test_the_map_step_runs_max_concurrency_requests_at_once(tmp_path, embedder, standin_url):
    library = small_block_library(tmp_path, embedder, SAMPLES / "docdesk-guide.pdf", block_tokens=60)
    doc = library.documents()[0]
    backend = CountingBackend(OpenAIBackend(standin_url, "standin", max_concurrency=4))
    summary = Summarizer(library, backend).summarize(doc.id)
    assert summary.pieces >= 8
    assert backend.most_in_flight == 4
    assert "stand-in reply" in summary.text
    library.close()


def test_reply_shapes_become_bullets():
    assert bullets("1. One\n2) Two\n* Three\n- Three\n<notes>\n- </text>") == ["One", "Two", "Three"]
    assert bullets("Python 3.11 is needed. Settings live in config.toml. Done.") == [
        "Python 3.11 is needed.",
        "Settings live in config.toml.",
        "Done.",
    ]
