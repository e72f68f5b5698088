"""The model as reranker: the top passages judged by the configured model (P(yes) from the first
token's log-probabilities) and reordered before the context is built; on by default only where
the model runs on a GPU. The fake backend judges as a scripted model would; llama.cpp's server
shows the plumbing for real (its 135M model's judgements are not judged here)."""

from __future__ import annotations

import pytest

from app.desk.answering import final_answer
from engine.answer import AnswerSettings
from engine.backends.fake import FakeBackend
from engine.backends.logprobs import yes_share
from engine.prompts import judge_messages
from engine.retrieval import rerank
from tests.conftest import SAMPLES

QUESTION = "How does DocDesk handle encrypted PDF files?"


@pytest.fixture(scope="module")
def library(tmp_path_factory, embedder):
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library

    folder = tmp_path_factory.mktemp("rerank-library")
    lib = Library(folder)
    Ingestor(lib, embedder).add([SAMPLES / "docdesk-guide.md"])
    lib.close()
    return folder


def desk_on(folder, embedder, backend, mode):
    from app.desk.services import DocDesk
    from app.desk.settings import Settings

    settings = Settings(library=folder)
    settings.answers = AnswerSettings(rerank=mode, context_tokens=400)
    return DocDesk(settings, backend=backend, embedder=embedder)


def test_yes_share_reads_the_first_tokens_log_probabilities():
    import math

    both = [{"token": "Yes", "logprob": math.log(0.6)}, {"token": " no", "logprob": math.log(0.2)}]
    assert yes_share(both) == pytest.approx(0.75)
    assert yes_share([{"token": "是", "logprob": 0.0}]) == 1.0
    assert yes_share([{"token": "maybe", "logprob": 0.0}]) == 0.5


def test_the_judged_passages_are_reordered_before_the_context(library, embedder):
    backend = FakeBackend("An answer [1].")  # one slot: the passages are judged in the search's order
    # A judge that likes each passage more than the one before: the search's last becomes the first.
    backend.judge = lambda messages: float(len(backend.judged))
    desk = desk_on(library, embedder, backend, "on")
    try:
        answered = final_answer(desk.answer(QUESTION, save_chat=False))
    finally:
        desk.close()
    assert 2 <= len(backend.judged) <= rerank.TOP and "rerank_ms" in answered.timings
    best = backend.judged[-1][-1]["content"].split("Passage:\n", 1)[1].removesuffix("\n\nyes or no?")
    assert best[:200].strip() in answered.given[0].text  # the judged-best passage leads the context
    assert backend.judged[0][-1]["content"].startswith(f"Question: {QUESTION}")


def test_auto_reranks_only_on_a_gpu(library, embedder):
    for on_gpu, judged in ((False, False), (True, True)):
        backend = FakeBackend("An answer [1].", on_gpu=on_gpu)
        desk = desk_on(library, embedder, backend, "auto")
        try:
            final_answer(desk.answer(QUESTION, save_chat=False))
        finally:
            desk.close()
        assert bool(backend.judged) is judged
    backend = FakeBackend("An answer [1].", on_gpu=True)
    desk = desk_on(library, embedder, backend, "off")
    try:
        final_answer(desk.answer(QUESTION, save_chat=False))
    finally:
        desk.close()
    assert backend.judged == []


def test_auto_stops_reranking_where_it_is_slow(library, embedder, monkeypatch):
    backend = FakeBackend("An answer [1].", on_gpu=True)
    monkeypatch.setattr(rerank, "AUTO_BUDGET_MS", -1.0)  # every reranking is over budget
    desk = desk_on(library, embedder, backend, "auto")
    judged = []
    try:
        for _ in range(rerank.AUTO_STRIKES + 1):
            final_answer(desk.answer(QUESTION, save_chat=False))
            judged.append(len(backend.judged))
    finally:
        desk.close()
    first = judged[0]
    assert first >= 2 and judged == [first * n for n in range(1, rerank.AUTO_STRIKES + 1)] + [
        first * rerank.AUTO_STRIKES
    ]
    assert not rerank.wanted("auto", backend) and rerank.wanted("on", backend)


def test_a_null_log_probability_counts_as_none():
    # llama-server writes a -inf log-probability (a token the model rules out) as null
    assert yes_share([{"token": "yes", "logprob": None}, {"token": "no", "logprob": 0.0}]) == 0.0


def test_llama_cpp_server_gives_the_judgement_from_its_log_probabilities(tmp_path):
    from engine.backends import LlmSettings, create_backend
    from engine.backends.llama_server import find_executable
    from engine.errors import BackendUnavailable

    try:
        find_executable(None)
    except BackendUnavailable:
        pytest.skip("no llama-server: run `make llama-server`")
    backend = create_backend(LlmSettings(backend="llama_server", slots=2, context=2048, threads=2), log_dir=tmp_path)
    try:
        relevant = backend.yes_probability(
            judge_messages("What is the capital of France?", "Paris is the capital of France.")
        )
        other = backend.yes_probability(judge_messages("What is the capital of France?", "Bananas are yellow."))
    finally:
        backend.close()
    assert 0.0 <= relevant <= 1.0 and 0.0 <= other <= 1.0
    assert (relevant, other) != (0.5, 0.5)  # the server gave log-probabilities of yes or no
