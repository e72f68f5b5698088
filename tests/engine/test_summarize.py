"""Summaries end to end: a multi-block document, cancel and resume, the cache (on the fake
backend), the bundled model through every step, and the map step's concurrency against a local
OpenAI-compatible server."""

from __future__ import annotations

import threading

import pytest

from engine.backends.fake import FakeBackend
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


def summary_reply(request) -> str:
    """The fake model's summary steps: two points per piece (naming its pages), one overview."""
    asked = request.messages[-1]["content"]
    if asked.startswith("Document: "):  # map: "Document: {title}, {pages}."
        pages = asked.split("\n", 1)[0].rsplit(", ", 1)[1].rstrip(".")
        return f"- The text on {pages} explains a feature.\n- It gives one setting."
    if asked.startswith("Notes on consecutive parts"):
        return "- The features are explained.\n- The settings are given."
    return "The guide explains what DocDesk does and how it is set up."


def test_summary_is_structured_with_page_references_and_resumes_after_cancel(guide):
    library, doc = guide
    blocks = library.blocks(doc.id)
    assert len(blocks) >= 3
    backend = FakeBackend(summary_reply, token_delay=0.002)  # one request at a time, as in process
    cancel = threading.Event()
    seen = []

    def stop_after_first_block(progress):
        seen.append((progress.stage, progress.done, progress.total))
        if progress.stage == "map" and progress.done >= 1:
            cancel.set()

    with pytest.raises(Cancelled):
        Summarizer(library, backend).summarize(doc.id, on_progress=stop_after_first_block, cancel=cancel)
    kept = SummaryCache(library).count(doc.id)
    assert kept >= 1 and len(backend.requests) <= 2 and backend.most_in_flight == 1
    assert seen[0] == ("map", 0, len(blocks))
    first_map = backend.requests[0].messages[-1]["content"]
    assert blocks[0][1].text[:200] in first_map and "DocDesk User Guide" in first_map

    resumed = FakeBackend(summary_reply)
    summary = Summarizer(library, resumed).summarize(doc.id)
    assert summary.from_cache >= kept
    assert len(resumed.requests) == summary.steps - summary.from_cache  # cached blocks were not redone
    assert summary.blocks == len(blocks)

    text = summary.text
    assert text.startswith("# DocDesk User Guide") and "## Overview" in text and "## Key points" in text
    overview = text.split("## Overview", 1)[1].split("## Key points", 1)[0].strip()
    assert overview == "The guide explains what DocDesk does and how it is set up."
    assert "**pp. 1–" in text or "**p. 1**" in text  # key points carry their pages
    assert "- The features are explained." in text or "- The text on p" in text

    repeat = FakeBackend(summary_reply)
    again = Summarizer(library, repeat).summarize(doc.id)
    assert again.text == text and again.from_cache == again.steps and repeat.requests == []


def test_the_bundled_model_writes_a_structured_summary(guide, bundled_llm):
    """The real model through every step: its replies become bullet points and an overview."""
    library, doc = guide
    summary = Summarizer(library, bundled_llm).summarize(doc.id)
    text = summary.text
    assert text.startswith("# DocDesk User Guide") and "## Overview" in text and "## Key points" in text
    overview, points = text.split("## Overview", 1)[1].split("## Key points", 1)
    assert len(overview.strip()) > 40
    assert "**pp. 1–" in points or "**p. 1**" in points
    assert sum(line.startswith("- ") and len(line) > 8 for line in points.splitlines()) >= 2


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


def test_a_chinese_document_is_summarized_in_chinese(tmp_path, embedder):
    library = small_block_library(tmp_path, embedder, SAMPLES / "docdesk-guide-zh.pdf", block_tokens=2000)
    doc = library.documents()[0]
    backend = FakeBackend(lambda request: "- 本文介绍功能。\n- 本文给出设置。")
    summary = Summarizer(library, backend).summarize(doc.id)
    assert summary.language == "zh" and "## 概述" in summary.text and "## 要点" in summary.text
    assert "第 1" in summary.text
    assert all("Write in Simplified Chinese." in r.messages[-1]["content"] for r in backend.requests)
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
