"""The in-process llama.cpp backend on the bundled SmolLM2 model, for real."""

from __future__ import annotations

import subprocess
import sys

import pytest

from engine.backends import LlmSettings, create_backend
from engine.backends.base import ChatRequest
from engine.backends.llama_cpp import LlamaCppBackend, bundled_model_path
from engine.errors import Cancelled, ContextTooLong, ModelLoadError, ModelNotFound
from engine.gguf_info import read_gguf
from tests.contracts.backend_contract import BackendContract

pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def backend():
    model = LlamaCppBackend(context=2048)
    yield model
    model.close()


class TestLlamaCppContract(BackendContract):
    """The bundled SmolLM2 in this process, as the session loaded it (its default 8192 context)."""

    @pytest.fixture
    def backend(self, bundled_llm):
        return bundled_llm

    def make_backend(self):
        return create_backend(LlmSettings(backend="llama_cpp", context=1024))

    def warm_state(self, backend) -> object:
        return backend._llm

    def check_released(self, backend, state) -> None:
        assert backend._llm is None and backend._worker._shutdown


def ask(text: str, **kwargs) -> ChatRequest:
    return ChatRequest([{"role": "user", "content": text}], **kwargs)


def test_streams_an_answer_with_stats(backend):
    request = ask("What is the capital of France? Answer in one sentence.", max_tokens=40, temperature=0.0)
    pieces = list(backend.stream_chat(request))
    assert len(pieces) > 3 and "Paris" in "".join(pieces)
    stats = request.stats
    assert stats.prompt_tokens > 10 and 0 < stats.completion_tokens <= 40
    assert 0 < stats.ttft_ms < stats.total_ms and stats.tokens_per_s > 1


def test_uses_the_chat_template_in_the_gguf():
    info = read_gguf(bundled_model_path())
    assert "<|im_start|>" in info.chat_template
    assert (info.layers, info.kv_heads, info.head_dim, info.context_length) == (30, 3, 64, 8192)


def test_cancel_stops_between_tokens_and_the_backend_stays_usable(backend):
    request = ask("Write a long story about a lighthouse keeper.", max_tokens=300)
    seen = 0
    with pytest.raises(Cancelled):
        for _ in backend.stream_chat(request):
            seen += 1
            if seen == 5:
                request.cancel.set()
    assert request.stats.completion_tokens < 20
    after = ask("Say hello.", max_tokens=8)
    assert "".join(backend.stream_chat(after))
    # A caller that simply stops reading also frees the worker.
    for _ in backend.stream_chat(ask("Count to one hundred.", max_tokens=200)):
        break
    assert "".join(backend.stream_chat(ask("Say yes.", max_tokens=4)))


def test_counts_tokens_with_the_models_tokenizer(backend):
    assert backend.count_tokens("hello world") == 2
    assert backend.count_tokens("驱动版本") > 2


def test_a_prompt_longer_than_the_context_is_refused_with_numbers(backend):
    request = ask("word " * 3000, max_tokens=100)
    with pytest.raises(ContextTooLong, match=r"the prompt has \d+ tokens .* the context is 2048"):
        list(backend.stream_chat(request))


def test_context_default_is_the_smaller_of_8192_and_training():
    model = LlamaCppBackend()
    assert model.context_window == 8192
    with pytest.raises(ContextTooLong, match="trained for \\(8192 tokens\\)"):
        LlamaCppBackend(context=32768)


def test_bad_model_files_give_one_clear_message(tmp_path):
    with pytest.raises(ModelNotFound, match="model file not found"):
        LlamaCppBackend(str(tmp_path / "missing.gguf"))
    not_gguf = tmp_path / "notes.gguf"
    not_gguf.write_text("not a model")
    with pytest.raises(ModelLoadError, match="not a GGUF file"):
        LlamaCppBackend(str(not_gguf))
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(bundled_model_path().read_bytes()[: 1 << 20])
    with pytest.raises(ModelLoadError, match="damaged GGUF"):
        LlamaCppBackend(str(truncated))


def test_a_gguf_without_chat_template_is_refused(tmp_path):
    stripped = tmp_path / "no-template.gguf"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "gguf.scripts.gguf_new_metadata",
            "--force",
            "--remove-metadata",
            "tokenizer.chat_template",
            str(bundled_model_path()),
            str(stripped),
        ],
        check=True,
        capture_output=True,
    )
    with pytest.raises(ModelLoadError, match="no chat template"):
        LlamaCppBackend(str(stripped))


def test_the_sampler_chain_puts_top_k_first_and_keeps_greedy_answers(backend):
    """DocDesk's chain (top-k before the repetition penalty) against llama-cpp-python's own."""
    import llama_cpp.llama_cpp as native
    from llama_cpp import Llama

    prompts = ["Name three colours.", "What is a library for?", "写一句关于春天的话。"]
    ours = ["".join(backend.stream_chat(ask(p, max_tokens=40, temperature=0.0))) for p in prompts]
    first = native.llama_sampler_chain_get(backend._llm._sampler.sampler, 0)
    assert native.llama_sampler_name(first) == b"top-k"
    backend._llm._init_sampler = Llama._init_sampler.__get__(backend._llm)  # llama-cpp-python's chain
    try:
        upstream = ["".join(backend.stream_chat(ask(p, max_tokens=40, temperature=0.0))) for p in prompts]
    finally:
        from engine.backends.llama_sampling import sampler_factory

        backend._llm._init_sampler = sampler_factory(backend._llm)
    assert ours == upstream
