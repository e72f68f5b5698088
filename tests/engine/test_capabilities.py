"""Backends declare what they can do (engine/backends/capabilities.py) and the backend table
declares what each kind runs; callers read those records and never try attributes. The backend
contract (tests/contracts/backend_contract.py) checks each real backend's record for the truth;
this checks the records that need no model running, and the callers that read them."""

from __future__ import annotations

import dataclasses
import importlib
import sys
from pathlib import Path

import pytest

from engine.backends import ChatRequest, registry
from engine.backends.capabilities import Capabilities, Reasoning, SlowStreaks
from engine.backends.chat_template import template_reasoning
from engine.backends.fake import FakeBackend
from engine.generation.generate import THINKING_ALLOWANCE, thinking_budget, with_thinking_room
from engine.generation.thinking import may_think
from engine.retrieval import query_translation, rerank
from tests.conftest import ROOT

TEMPLATES = ROOT / "tests" / "data" / "templates"


def template(name: str) -> str:
    return (TEMPLATES / f"{name}.jinja").read_text(encoding="utf-8")


def ask(**kwargs) -> ChatRequest:
    return ChatRequest([{"role": "user", "content": "Why is the sky blue?"}], max_tokens=100, **kwargs)


class Declaring(FakeBackend):
    """The fake backend with some of its record changed, as another backend would declare it."""

    def __init__(self, *args, declares: dict, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.declares = declares

    @property
    def capabilities(self) -> Capabilities:
        return dataclasses.replace(super().capabilities, **self.declares)


def toy_settings(**changes):
    from engine.backends import LlmSettings

    return LlmSettings(backend="toy", **changes)


# -- the backend table ------------------------------------------------------------------------
def test_the_table_says_which_kinds_run_a_gguf_file_someones_server_or_llama_cpp_here():
    assert registry.gguf_backends() == ("llama_cpp", "llama_server")
    assert registry.gguf_choices() == ("gguf", "llama_server")  # not "bundled": its model is fixed
    assert [n for n, e in registry.BUILT_IN.items() if e.served] == ["vllm", "openai"]
    assert [n for n, e in registry.BUILT_IN.items() if e.remote] == ["openai"]  # vLLM runs here
    assert [n for n, e in registry.BUILT_IN.items() if e.installed_llama_cpp] == ["llama_cpp"]
    assert registry.declared("llama_cpp") is registry.BUILT_IN["llama_cpp"]
    nobody = registry.declared("nobody-registered-this")
    assert not (nobody.gguf or nobody.served or nobody.remote or nobody.installed_llama_cpp)


def test_a_backend_added_from_elsewhere_declares_through_its_entry():
    sys.modules.pop("tests.engine.toy_backend", None)
    toy = importlib.import_module("tests.engine.toy_backend")
    try:
        entry = registry.table()["toy"]
        assert entry is registry.declared("toy") and not (entry.gguf or entry.served or entry.installed_llama_cpp)
        assert "toy" not in registry.gguf_backends() and "toy" not in registry.gguf_choices()
        backend = toy.ToyBackend.from_settings(toy_settings(url="http://toy:9", max_concurrency=3))
        declared = backend.capabilities  # the fake's, as it is one
        assert declared.parallel_slots == 3 and declared.model_file is None and not declared.served
    finally:
        registry.unregister_backend("toy")
        sys.modules.pop("tests.engine.toy_backend", None)


# -- records of the backends that need no model running ---------------------------------------------
def test_the_fake_declares_its_script():
    assert FakeBackend().capabilities.reasoning is Reasoning.TAGGED
    assert FakeBackend(thinks=True).capabilities.reasoning is Reasoning.OPENED
    assert FakeBackend(reasoning="hm").capabilities.reasoning is Reasoning.APART
    wide = FakeBackend(max_concurrency=3, on_gpu=True).capabilities
    assert (wide.parallel_slots, wide.gpu_offload, wide.logprobs, wide.streams) == (3, True, True, True)
    assert FakeBackend(model_file=Path("m.gguf")).capabilities.model_file == Path("m.gguf")
    assert FakeBackend(served=True).capabilities.served


def test_a_chat_template_that_opens_think_is_read_as_such():
    r1 = template("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B")
    assert template_reasoning(r1, None) is Reasoning.OPENED
    assert template_reasoning(r1, False) is Reasoning.NONE  # thinking off closes it at once
    assert template_reasoning(template("Qwen-Qwen3-0.6B"), None) is Reasoning.TAGGED  # Qwen3 writes <think> itself
    assert template_reasoning(template("Qwen-Qwen2.5-7B-Instruct"), True) is Reasoning.TAGGED
    assert template_reasoning("{% if %}", None) is Reasoning.TAGGED  # broken: the load says so


def test_vllm_declares_reasoning_apart_where_it_runs_a_reasoning_parser(tmp_path):
    from engine.backends.vllm_server import VllmServer, VllmSettings

    def declared(**settings) -> Capabilities:
        server = VllmServer(VllmSettings(executable="vllm-elsewhere", **settings), tmp_path)
        return server.capabilities  # built, never started

    qwen3 = declared(model="Qwen/Qwen3-8B", max_num_seqs=12)
    assert qwen3.reasoning is Reasoning.APART and qwen3.parallel_slots == 12 and qwen3.served
    assert qwen3.model_file is None and qwen3.logprobs and not qwen3.continues_final_message
    assert declared(model="Qwen/Qwen2.5-7B-Instruct").reasoning is Reasoning.ANY
    assert declared(model="Qwen/Qwen3-8B", reasoning_parser="").reasoning is Reasoning.ANY


@pytest.mark.parametrize("thinking", [None, False])
def test_llama_server_declares_what_it_was_started_with(tmp_path, thinking):
    from engine.backends.llama_cpp import bundled_model_path
    from engine.backends.llama_server import CPU_SLOTS, LlamaServer, LlamaServerSettings
    from engine.models.gguf_info import read_gguf

    model = bundled_model_path()
    options = LlamaServerSettings(model=model, executable=sys.executable, thinking=thinking, thinking_budget=64)
    server = LlamaServer(options, tmp_path, gpus=[])  # built, never started: no GPU, so CPU slots
    declared = server.capabilities
    assert declared.reasoning is (Reasoning.NONE if thinking is False else Reasoning.APART)
    assert declared.model_file == model and not declared.served and declared.continues_final_message
    assert declared.chat_template == read_gguf(model).chat_template  # --jinja: the GGUF's own
    assert declared.parallel_slots == CPU_SLOTS == server.max_concurrency and not declared.gpu_offload
    assert declared.logprobs and not declared.installed_llama_cpp


# -- callers read the record --------------------------------------------------------------------
def test_the_thinking_budget_is_counted_only_where_the_backend_does_not_keep_it():
    counted = FakeBackend()
    counted.thinking_budget = 40
    assert thinking_budget(counted) == 40
    assert with_thinking_room(counted, ask(thinking=True)).max_tokens == 140
    kept = Declaring(declares={"thinking_budget": 40, "keeps_thinking_budget": True})
    assert thinking_budget(kept) is None  # it forces the close itself (llama.cpp in process)
    assert with_thinking_room(kept, ask(thinking=True)).max_tokens == 140  # the room is given all the same
    assert with_thinking_room(FakeBackend(), ask(thinking=True)).max_tokens == 100 + THINKING_ALLOWANCE


def test_a_reply_may_begin_inside_its_reasoning_where_the_backend_says_so():
    assert may_think(Declaring(declares={"thinks": True}, model="gemma-3-27b-it"), ask())
    assert not may_think(Declaring(declares={"thinks": False}, model="Qwen3-32B"), ask())
    assert may_think(FakeBackend(model="Qwen3-32B"), ask())  # not declared: the name decides
    assert not may_think(Declaring(declares={"thinks": True}), ask(thinking=False))


def test_reranking_asks_for_declared_log_probabilities_and_a_gpu():
    assert rerank.available(FakeBackend())
    assert not rerank.available(Declaring(declares={"logprobs": False}))
    assert not rerank.wanted("on", Declaring(declares={"logprobs": False}))
    assert rerank.wanted("auto", FakeBackend(on_gpu=True)) and not rerank.wanted("auto", FakeBackend())


def test_auto_reranking_strikes_belong_to_the_backend_that_was_slow():
    slow, other = FakeBackend(on_gpu=True), FakeBackend(on_gpu=True)
    for _ in range(rerank.AUTO_STRIKES):
        rerank._record(slow, rerank.AUTO_BUDGET_MS + 1)
    assert not rerank.wanted("auto", slow) and rerank.wanted("on", slow)
    assert rerank.wanted("auto", other)  # another backend's speed is its own
    del slow
    assert rerank.wanted("auto", FakeBackend(on_gpu=True))  # a new one starts afresh, whatever its id
    rerank._record(other, rerank.AUTO_BUDGET_MS + 1)
    rerank._record(other, 1.0)  # a fast one ends the streak
    assert other.slow_streaks.count(rerank.WORK) == 0
    assert not hasattr(rerank, "_over_budget")  # no process-wide table


def test_slow_streaks_count_each_kind_of_work_apart():
    streaks = SlowStreaks()
    streaks.record("rerank", True)
    streaks.record("rerank", True)
    streaks.record("translate", True)
    assert (streaks.count("rerank"), streaks.count("translate"), streaks.count("other")) == (2, 1, 0)
    streaks.record("rerank", False)
    assert streaks.count("rerank") == 0


def test_translation_judges_the_declared_model_file_or_server(tmp_path):
    big = tmp_path / "big.gguf"
    with big.open("wb") as handle:
        handle.truncate(query_translation.MIN_MODEL_BYTES)
    assert query_translation.model_bytes(FakeBackend(model_file=big)) == query_translation.MIN_MODEL_BYTES
    assert query_translation.model_bytes(FakeBackend(model_file=tmp_path / "gone.gguf")) is None
    assert query_translation.model_bytes(FakeBackend(served=True)) is None
    assert query_translation.can_translate(FakeBackend(served=True))
    assert not query_translation.can_translate(FakeBackend())
