"""The contract every LLM backend passes (docs/ARCHITECTURE.md §8), Haystack-style: a test module subclasses
BackendContract, names it Test..., and supplies

- a `backend` fixture: one backend for the class (module- or session-scoped is fine), and
- `make_backend()`: a fresh one for the tests that close it,

and may override `warm_state(backend)`, which names what warm_up() builds (the loaded model,
the HTTP client), so the contract can check that a second warm_up builds nothing new;
`thinking_backends()`, backends of the kind whose model thinks (each in its declared way); and
`template_prompt_tokens(backend, prompt)` with `template_tokens(backend)`, how the model's
tokenizer counts a prompt its declared chat template rendered.

Each backend's `capabilities` are checked for the truth: what it declares it does (streams,
slots, log-probabilities, reasoning, a chat template, GPU offload, a GGUF file) it does, and
its kind's entry in the backend table says the same.

Every property is checked against the real thing: the fake backend, the bundled model in
process, and real OpenAI-compatible servers on loopback. Prompts are greedy (temperature 0),
so a backend answers the same request the same way twice.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from engine.backends import BACKENDS
from engine.backends.base import ChatRequest, ReasoningPiece
from engine.backends.capabilities import Capabilities, Reasoning, SlowStreaks
from engine.backends.chat_template import ChatTemplate
from engine.backends.managed_server import group_alive
from engine.backends.registry import BUILT_IN, table
from engine.errors import Cancelled, ContextTooLong
from engine.generation.generate import Reply, pieces
from engine.prompts import judge_messages

LONG = "Write a long story about a lighthouse keeper and the sea, with many details."


def check_process_group_gone(backend, state) -> None:
    """A server DocDesk started (state: its client and process) is closed: no process of its
    group still runs (what a zombie left to a container's init holds is nothing)."""
    client, process = state
    assert client.is_closed and not backend.running
    assert not group_alive(process.pid)  # the server's whole process group is gone


def ask(text: str, max_tokens: int = 48, **kwargs) -> ChatRequest:
    return ChatRequest([{"role": "user", "content": text}], max_tokens=max_tokens, temperature=0.0, **kwargs)


def reasoning_shown(style: Reasoning, streamed: list[str]) -> None:
    """Assert that a reply came as a backend of reasoning `style` sends one."""
    apart = [p for p in streamed if isinstance(p, ReasoningPiece)]
    text = "".join(p for p in streamed if not isinstance(p, ReasoningPiece))
    if style is Reasoning.ANY:
        return
    assert not apart or style is Reasoning.APART, (style, apart)
    if style in (Reasoning.NONE, Reasoning.APART):
        assert "<think>" not in text and "</think>" not in text, (style, text)
    elif style is Reasoning.OPENED:
        assert "<think>" not in text, text
    elif "</think>" in text:  # tagged: a close only after its opening
        assert "<think>" in text.split("</think>", 1)[0], text


class CapabilitiesContract:
    """What every backend declares, checked for the truth (mixed into BackendContract)."""

    def test_declares_its_capabilities_in_one_frozen_record(self, backend):
        declared = backend.capabilities
        assert isinstance(declared, Capabilities) and isinstance(declared.reasoning, Reasoning)
        with pytest.raises(dataclasses.FrozenInstanceError):
            declared.streams = not declared.streams
        assert declared == backend.capabilities  # read twice, the same
        assert declared.parallel_slots == backend.max_concurrency
        assert isinstance(declared.gpu_offload, bool) and declared.gpu_offload == backend.on_gpu
        assert declared.thinks in (True, False, None)
        assert declared.thinking_budget is None or declared.thinking_budget >= 0
        assert isinstance(backend.slow_streaks, SlowStreaks) and backend.slow_streaks is backend.slow_streaks

    def test_its_kind_in_the_backend_table_says_the_same(self, backend):
        declared, entry = backend.capabilities, table()[backend.name]
        assert (declared.model_file is not None) == entry.gguf
        assert declared.served == entry.served and not (declared.served and declared.model_file)
        assert declared.installed_llama_cpp == entry.installed_llama_cpp
        assert declared.served or not entry.remote  # a server elsewhere: nothing of its model is known here
        if declared.model_file is not None:
            assert isinstance(declared.model_file, Path) and declared.model_file.is_file()
            assert declared.model_file.suffix == ".gguf" and declared.model_file.stem in backend.model

    def test_a_declared_stream_comes_in_pieces(self, backend):
        request = ask("Name three colours of the rainbow.", max_tokens=24)
        streamed = [p for p in backend.stream_chat(request) if p]
        assert len(streamed) > 1 if backend.capabilities.streams else len(streamed) == 1

    def test_declared_log_probabilities_give_the_judges_yes(self, backend):
        if not backend.capabilities.logprobs:
            assert not callable(getattr(backend, "yes_probability", None))  # nothing offered it cannot do
            return
        question = "What is the capital of France?"
        relevant = backend.yes_probability(judge_messages(question, "Paris is the capital of France."))
        other = backend.yes_probability(judge_messages(question, "Bananas are yellow."))
        assert isinstance(relevant, float) and 0.0 <= relevant <= 1.0 and 0.0 <= other <= 1.0
        assert (relevant, other) != (0.5, 0.5)  # a probability read from the model, not the "none given" 0.5

    def test_replies_come_as_the_declared_reasoning_says(self, backend):
        request = ask("What is the capital of France? Answer in one sentence.", max_tokens=32)
        reasoning_shown(backend.capabilities.reasoning, list(backend.stream_chat(request)))
        declared = backend.capabilities
        if declared.reasoning is Reasoning.OPENED:
            assert declared.thinks is True  # a template that opened <think>: the reply begins inside it
        if declared.reasoning is Reasoning.NONE:
            assert declared.thinks is not True

    def test_a_thinking_model_shows_its_reasoning_as_declared(self):
        for backend in self.thinking_backends():
            try:
                style = backend.capabilities.reasoning
                streamed = list(backend.stream_chat(ask("Why is the sky blue? Think first.", max_tokens=200)))
                reasoning_shown(style, streamed)
                text = "".join(p for p in streamed if not isinstance(p, ReasoningPiece))
                shown = {
                    Reasoning.APART: any(isinstance(p, ReasoningPiece) and p for p in streamed),
                    Reasoning.OPENED: "</think>" in text,
                    Reasoning.TAGGED: "<think>" in text and "</think>" in text,
                }
                assert shown.get(style, True), (style, streamed)
                reply = Reply()  # and the engine keeps the reasoning apart from the answer
                list(pieces(backend, ask("Why is the sky blue? Think first.", max_tokens=200), reply))
                assert reply.reasoning and reply.answer and "think>" not in reply.answer
            finally:
                backend.close()

    def test_a_declared_chat_template_is_what_prompts_are_rendered_with(self, backend):
        template = backend.capabilities.chat_template
        if template is None:
            pytest.skip("no chat template of the model declared (a server renders its own; the fake has none)")
        messages = [{"role": "user", "content": "What is the capital of France?"}]
        rendered = ChatTemplate(template, **self.template_tokens(backend)).render(messages)
        assert "What is the capital of France?" in rendered.prompt
        expected = self.template_prompt_tokens(backend, rendered.prompt)
        if expected is None:
            pytest.skip("how this model's tokenizer reads a rendered prompt is not known here")
        request = ChatRequest(messages, max_tokens=4, temperature=0.0)
        list(backend.stream_chat(request))
        assert request.stats.prompt_tokens == expected


class BackendContract(CapabilitiesContract):
    # What a prompt longer than the context raises: ContextTooLong wherever the backend can tell.
    too_long_error: type[Exception] = ContextTooLong

    # -- what a subclass supplies ---------------------------------------------------------
    @pytest.fixture
    def backend(self):
        raise NotImplementedError("a BackendContract subclass supplies the backend fixture")

    def make_backend(self):
        """A fresh backend of the same kind, closed by the test that asked for it."""
        raise NotImplementedError

    def warm_state(self, backend) -> object:
        """What warm_up() builds; compared with == before and after a second warm_up()."""
        return None

    def check_released(self, backend, state) -> None:
        """Assert that a closed backend let go of `state` (what warm_state gave before closing)."""

    def thinking_backends(self) -> list:
        """Backends of this kind whose model thinks, each giving its reasoning as it declares."""
        return []

    def template_tokens(self, backend) -> dict:
        """The bos_token and eos_token the declared chat template is rendered with."""
        return {}

    def template_prompt_tokens(self, backend, prompt: str) -> int | None:
        """The tokens of `prompt` as the model reads it (None: not known here, the check is skipped)."""
        return None

    # -- identity and limits ----------------------------------------------------------------
    def test_names_itself_as_registered(self, backend):
        assert backend.name in BUILT_IN and (BUILT_IN[backend.name].listed == (backend.name in BACKENDS))
        assert isinstance(backend.model, str) and backend.model

    def test_limits_are_sane(self, backend):
        assert isinstance(backend.context_window, int) and backend.context_window > 0
        assert isinstance(backend.max_concurrency, int) and backend.max_concurrency >= 1
        assert isinstance(backend.on_gpu, bool)

    # -- streaming ----------------------------------------------------------------------------
    def test_streams_text_piece_by_piece_and_fills_the_stats(self, backend):
        request = ask("What is the capital of France? Answer in one sentence.", max_tokens=32)
        pieces = list(backend.stream_chat(request))
        assert len(pieces) > 1 and all(isinstance(p, str) and p for p in pieces)
        assert "".join(pieces).strip()
        stats = request.stats
        assert stats.prompt_tokens > 0 and 0 < stats.completion_tokens <= 32
        assert 0 < stats.ttft_ms <= stats.total_ms
        assert stats.finish_reason in ("stop", "length")

    def test_max_tokens_is_respected(self, backend):
        request = ask(LONG, max_tokens=5)
        text = "".join(backend.stream_chat(request))
        assert text and request.stats.completion_tokens <= 5
        assert request.stats.finish_reason == "length"
        assert backend.count_tokens(text) <= 10  # the text is short too, not only the count (an estimate for servers)

    def test_a_stop_string_cuts_the_text_before_it(self, backend):
        full = "".join(backend.stream_chat(ask(LONG, max_tokens=40)))
        # A word that first appears well into the reply: stopping at it must keep exactly what came before.
        words = [m for m in re.finditer(r"[A-Za-z]{4,}", full) if m.start() > len(full) // 3]
        stop = next((m.group() for m in words if full.index(m.group()) == m.start()), None)
        assert stop, f"the reply has no word to stop at: {full!r}"
        request = ask(LONG, max_tokens=40, stop=[stop])
        cut = "".join(backend.stream_chat(request))
        assert stop not in cut
        assert cut == full[: full.index(stop)]
        assert request.stats.finish_reason == "stop"

    def test_cancel_mid_stream_stops_early_and_the_backend_stays_usable(self, backend):
        request = ask(LONG, max_tokens=300)
        seen = 0
        with pytest.raises(Cancelled):
            for _ in backend.stream_chat(request):
                seen += 1
                if seen == 3:
                    request.cancel.set()
        assert seen == 3 and request.stats.completion_tokens < 30
        # A caller that just stops reading frees the backend too.
        for _ in backend.stream_chat(ask(LONG, max_tokens=300)):
            break
        assert "".join(backend.stream_chat(ask("Say yes.", max_tokens=4)))

    def test_a_prompt_longer_than_the_context_is_refused(self, backend):
        request = ask("word " * (backend.context_window + 200), max_tokens=16)
        with pytest.raises(self.too_long_error):
            list(backend.stream_chat(request))
        assert "".join(backend.stream_chat(ask("Say yes.", max_tokens=4)))

    def test_requests_from_several_threads_each_get_their_own_answer(self, backend):
        prompts = [f"Say the number {n}." for n in range(min(backend.max_concurrency, 3) + 1)]
        alone = {p: "".join(backend.stream_chat(ask(p, max_tokens=8))) for p in prompts}
        with ThreadPoolExecutor(len(prompts)) as pool:
            requests = [ask(p, max_tokens=8) for p in prompts]
            texts = list(pool.map(lambda r: "".join(backend.stream_chat(r)), requests))
        assert all(texts) and all(0 < r.stats.completion_tokens <= 8 for r in requests)
        same = sum(text == alone[p] for p, text in zip(prompts, texts, strict=True))
        # Greedy answers do not depend on what else runs; a batched server may round one differently.
        assert same >= len(prompts) - 1, (alone, texts)

    # -- tokens ---------------------------------------------------------------------------------
    def test_counts_tokens(self, backend):
        short = "The backup runs every night."
        assert backend.count_tokens(short) > 0 and backend.count_tokens("驱动版本") > 0
        assert backend.count_tokens(short * 10) > backend.count_tokens(short)
        assert backend.count_tokens(short + " And on Sundays at noon.") >= backend.count_tokens(short)

    # -- life cycle -------------------------------------------------------------------------------
    def test_warm_up_is_idempotent(self, backend):
        backend.warm_up()
        state = self.warm_state(backend)
        backend.warm_up()
        assert self.warm_state(backend) == state  # the same model, client, process: nothing built again
        assert "".join(backend.stream_chat(ask("Say yes.", max_tokens=4)))

    def test_close_is_idempotent(self):
        backend = self.make_backend()
        try:
            backend.warm_up()
            assert "".join(backend.stream_chat(ask("Say yes.", max_tokens=4)))
            state = self.warm_state(backend)
        finally:
            backend.close()
        self.check_released(backend, state)
        backend.close()  # a second close does nothing
        closed = threading.Thread(target=backend.close)  # nor does one from another thread
        closed.start()
        closed.join(30)
        assert not closed.is_alive()
        self.check_released(backend, state)
