"""50 editors at once against `docdesk serve` in its own process (tests/bench/load_serve.py):
for a bounded time each client asks, reads its stream to the end and asks again, honouring a
429's Retry-After. Correctness under load only; the numbers themselves are in the README. The
fake backend's server embeds with the stand-in embedder (tests/standin_embedder.py), in which the
library is embedded too; the llama.cpp one with the bundled model.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench.load_serve import Server, run_load

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "assets" / "samples"
CLIENTS = 50


GUIDES = [SAMPLES / "docdesk-guide.pdf", SAMPLES / "docdesk-guide-zh.pdf"]


def _library(folder: Path, embedder) -> Path:
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library

    library = Library(folder)
    Ingestor(library, embedder, read_in_subprocess=False).add(GUIDES)
    library.close()
    return folder


@pytest.fixture(scope="module")
def library_folder(tmp_path_factory, embedder):
    return _library(tmp_path_factory.mktemp("load-library"), embedder)


def test_fifty_clients_on_the_fake_backend_no_errors_every_stream_whole_memory_flat(tmp_path, standin_embedder):
    slots = 8
    folder = _library(tmp_path / "library", standin_embedder)
    server = Server(folder, fake_delay=0.01, slots=slots, queue=64, standin_embedder=True)
    try:
        result = run_load(server.url, CLIENTS, seconds=20, pid=server.process.pid)
    finally:
        code = server.stop()
    summary = result.summary()
    assert result.errors == [] and code == 0, summary
    assert result.busy == 0 and result.completed == result.requests > 2 * CLIENTS, summary
    assert 1 <= server.most_answers_at_once() <= slots, (server.log[-3:], summary)
    assert len(result.rss_mb) >= 15
    assert summary["rss_mb_end"] - summary["rss_mb_after_first_third"] < 20, summary  # flat, not leaking


@pytest.mark.models
def test_fifty_clients_on_llama_cpp_queue_then_429_with_retry_after(library_folder, tmp_path):
    from engine.backends.llama_server import find_executable
    from engine.errors import BackendUnavailable

    try:
        find_executable(None)
    except BackendUnavailable:
        pytest.skip("no llama-server: run `make llama-server`")
    slots, queue = 2, 4
    config = tmp_path / "config.toml"
    config.write_text(
        f'[llm]\nbackend = "llama_server"\nslots = {slots}\ncontext = 2048\nthreads = 2\n\n'
        "[answers]\nanswer_tokens = 24\ncontext_tokens = 500\n",
        encoding="utf-8",
    )
    server = Server(library_folder, config=config, queue=queue)
    try:
        result = run_load(server.url, CLIENTS, seconds=30, pid=server.process.pid)
    finally:
        code = server.stop()
    summary = result.summary()
    assert result.errors == [] and code == 0, summary
    assert result.completed >= slots and result.busy > 0, summary  # some answered, the rest told to come back
    assert result.completed + result.busy == result.requests, summary
    assert min(result.retry_after_s) >= 1, summary
    # Never more answers at once than llama.cpp has slots, by the server's own count.
    assert server.most_answers_at_once() == slots, (server.log[-3:], summary)
