"""The in-process llama.cpp backend on the bundled SmolLM2 model, for real."""

from __future__ import annotations

import subprocess
import sys

import pytest

from engine.backends import LlmSettings, create_backend
from engine.backends.base import ChatRequest
from engine.backends.llama_cpp import LlamaCppBackend, bundled_model_path
from engine.errors import Cancelled, ContextTooLong, ModelLoadError, ModelNotFound
from engine.models.gguf_info import read_gguf
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

    def template_tokens(self, backend) -> dict:
        backend.warm_up()  # the model's own BOS and EOS text, as its vocabulary writes them
        return {"bos_token": backend._template.bos_token, "eos_token": backend._template.eos_token}

    def template_prompt_tokens(self, backend, prompt: str) -> int:
        return len(backend._prompt_tokens(backend._llm, prompt))  # special tokens read as such, BOS once


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


def test_threads_and_threads_batch_reach_llama_cpp():
    from engine.models.threads import plan_threads

    model = create_backend(LlmSettings(backend="llama_cpp", context=512, threads=1, threads_batch=2))
    automatic = LlamaCppBackend(context=512)
    try:
        model.warm_up()
        params = model._llm.context_params
        assert (params.n_threads, params.n_threads_batch) == (1, 2)
        assert (automatic.settings["n_threads"], automatic.settings["n_threads_batch"]) == (
            plan_threads().threads,
            plan_threads().threads_batch,
        )
    finally:
        model.close()
        automatic.close()


def r1_template_on(backend: LlamaCppBackend):
    """DeepSeek-R1's real template (tests/data/templates) on the bundled model: its prompt ends inside <think>."""
    from engine.backends.chat_template import ChatTemplate
    from tests.conftest import ROOT

    source = (ROOT / "tests" / "data" / "templates" / "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja").read_text()
    backend._load()
    backend._template = ChatTemplate(source, bos_token="", eos_token="<|im_end|>")


def test_a_spent_thinking_budget_forces_the_close_and_an_answer_follows():
    model = LlamaCppBackend(context=1024, thinking_budget=6)
    try:
        r1_template_on(model)
        request = ask("What is the capital of France? Think step by step.", max_tokens=60, temperature=0.0)
        text = "".join(model.stream_chat(request))
        thought, closed, answer = text.partition("</think>")
        assert closed, text  # the model was stopped thinking, with the close written into its text
        assert request.stats.reasoning_tokens == 6 and "<think>" not in thought
        assert answer.strip(), text  # and it went on to answer
        assert request.stats.completion_tokens > 6 + 4  # the forced tokens count, then the answer's
        unlimited = LlamaCppBackend(context=1024)
        try:
            r1_template_on(unlimited)
            free = ask("What is the capital of France? Think step by step.", max_tokens=60, temperature=0.0)
            free_text = "".join(unlimited.stream_chat(free))
        finally:
            unlimited.close()
        # The same greedy thinking up to where the budget cut it ("\n</think>\n\n" written there).
        assert free_text.startswith(thought.removesuffix("\n")) and not free_text.startswith(thought + "</think>")
    finally:
        model.close()


def test_thinking_off_closes_a_template_opened_think_block_in_the_prompt():
    model = LlamaCppBackend(context=1024)
    try:
        r1_template_on(model)
        request = ask("What is the capital of France?", max_tokens=30, temperature=0.0, thinking=False)
        text = "".join(model.stream_chat(request))
        assert request.stats.reasoning_tokens == 0 and text.strip()
        rendered = model._template.render(request.messages, thinking=False)
        assert rendered.prompt.endswith("<think>\n\n</think>\n\n")
        assert request.stats.prompt_tokens == len(model._prompt_tokens(model._llm, rendered.prompt))
    finally:
        model.close()


def test_prompt_lookup_speculation_in_process_drafts_from_the_prompt():
    # [llm] speculation = "ngram": llama-cpp-python's LlamaPromptLookupDecoding, with the logits it
    # checks drafts against (0.3.36 fails at the first draft without logits_all)
    quoted = "The kettle model KX-200 boils one litre of water in ninety seconds flat."
    backend = LlamaCppBackend(context=2048, threads=2, speculation="ngram")
    try:
        request = ChatRequest(
            [{"role": "user", "content": f"Repeat this sentence exactly: {quoted}"}], max_tokens=40, temperature=0.0
        )
        text = "".join(backend.stream_chat(request))
        llm = backend._load()
        assert type(llm.draft_model).__name__ == "LlamaPromptLookupDecoding" and llm._logits_all
        assert text.strip() and request.stats.completion_tokens > 0
    finally:
        backend.close()
    assert LlamaCppBackend(context=2048).speculation == "off"  # unset: off in process, as measured
