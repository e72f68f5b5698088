"""The backend registry: every name is built by its own module, looked up without heavy imports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from engine.backends import BACKENDS, LlmSettings, create_backend, registry
from engine.backends.registry import BUILT_IN, builder, listed_names
from engine.errors import EngineError
from tests.conftest import ROOT


def test_every_built_in_name_is_registered_by_its_module_as_that_name():
    for name, entry in BUILT_IN.items():
        build = builder(name)
        cls = build.__self__  # a from_settings classmethod
        assert cls.name == name and cls.__module__ == entry.module


def test_the_offered_names_are_the_listed_built_ins():
    assert BACKENDS == listed_names() == tuple(sorted(n for n, e in BUILT_IN.items() if e.listed))
    assert "fake" not in BACKENDS and "fake" in BUILT_IN


def test_the_command_line_offers_the_same_backends(capsys):
    from app.cli.parser import build_parser

    for name in BACKENDS:
        assert build_parser().parse_args(["chat", "--backend", name, "hi"]).backend == name
    with pytest.raises(SystemExit):
        build_parser().parse_args(["chat", "--backend", "fake", "hi"])  # a test double, not a user's choice
    assert "invalid choice: 'fake'" in capsys.readouterr().err


def test_an_unknown_backend_is_named_with_the_choices():
    with pytest.raises(EngineError) as raised:
        create_backend(LlmSettings(backend="llamacpp"))
    assert str(raised.value) == "unknown backend 'llamacpp': use one of llama_cpp, llama_server, openai, vllm"


def test_vllm_without_a_model_is_refused_before_anything_starts(tmp_path):
    with pytest.raises(EngineError, match="the vllm backend needs a model"):
        create_backend(LlmSettings(backend="vllm"), log_dir=tmp_path)
    assert not list(tmp_path.iterdir())


def test_looking_up_every_backend_imports_nothing_heavy():
    code = """
        import json, sys
        from engine.backends import LlmSettings, create_backend
        from engine.backends.registry import BUILT_IN, builder
        for name in BUILT_IN:
            builder(name)
        create_backend(LlmSettings(backend="fake")).close()
        heavy = ("llama_cpp", "httpx", "torch", "numpy", "sentence_transformers", "faiss")
        print(json.dumps(sorted(m for m in heavy if m in sys.modules)))
    """
    done = subprocess.run(
        [sys.executable, "-c", "\n".join(line[8:] for line in code.splitlines())],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_openai_is_built_from_its_settings_without_a_request():
    backend = create_backend(
        LlmSettings(backend="openai", url="http://127.0.0.1:9/v1", model="m", max_concurrency=3, context=2048)
    )
    try:
        assert (backend.url, backend.max_concurrency, backend.context_window) == ("http://127.0.0.1:9", 3, 2048)
        backend.warm_up()  # builds the HTTP client; the (absent) server is not asked
    finally:
        backend.close()


def test_every_listed_backend_has_lines_whose_options_are_llm_settings():
    from engine.backends.options import field_names

    keys = [choice.key for _, choice in registry.offered()]
    assert keys == ["bundled", "gguf", "llama_server", "vllm", "openai"] and len(set(keys)) == len(keys)
    for name, entry in BUILT_IN.items():
        assert bool(entry.choices) == entry.listed, name
        for choice in entry.choices:
            names = [option.name for option in choice.options]
            assert len(names) == len(set(names)) and set(names) <= set(field_names()), (name, choice.key)


def test_each_backend_declares_only_the_options_it_reads():
    declared = {name: {option.name for option in registry.options(name)} for name in BACKENDS}
    assert declared["llama_cpp"] == {
        "model",
        "context",
        "gpu_layers",
        "threads",
        "threads_batch",
        "batch",
        "flash_attention",
        "kv_cache",
        "mlock",
        "cpu_repack",
        "thinking",
        "thinking_budget",
        "speculation",
    }
    assert declared["openai"] == {
        "url",
        "model",
        "api_key",
        "context",
        "max_concurrency",
        "connect_timeout",
        "read_timeout",
        "thinking",
        "thinking_budget",
    }
    assert declared["vllm"] == {"model", "context", "vllm", "thinking", "thinking_budget", "speculation"}
    assert {
        "llama_server",
        "model",
        "slots",
        "server_port",
        "gpu_layers",
        "threads",
        "threads_batch",
        "speculation",
    } <= declared["llama_server"]
    assert "url" not in declared["llama_server"] and "vllm" not in declared["llama_cpp"]


def test_the_bundled_model_and_a_gguf_file_are_two_lines_of_llama_cpp():
    assert registry.choice_for(LlmSettings()) == "bundled"
    assert registry.choice_for(LlmSettings(model="/models/q.gguf")) == "gguf"
    assert registry.choice_for(LlmSettings(backend="llama_server")) == "llama_server"
    assert registry.choice_for(LlmSettings(backend="openai", model="m")) == "openai"
    assert registry.choice_for(LlmSettings(backend="fake")) == "bundled"  # not offered: the first line
    bundled = registry.BUILT_IN["llama_cpp"].choices[0]
    assert {o.name for o in bundled.options} == {"context", "threads"} and bundled.fixed == (("model", None),)


def test_options_map_widget_values_to_settings_and_back():
    from engine.backends.options import CONTEXT, FLASH_ATTENTION, GPU_LAYERS, KV_CACHE, Option

    assert (CONTEXT.shown(None), CONTEXT.stored(0), CONTEXT.stored(4096)) == (0, None, 4096)
    assert (GPU_LAYERS.shown(-1), GPU_LAYERS.stored(-1), GPU_LAYERS.stored(0)) == (-1, -1, 0)
    assert [FLASH_ATTENTION.shown(v) for v in (None, True, False)] == ["auto", "on", "off"]
    assert [FLASH_ATTENTION.stored(v) for v in ("auto", "on", "off")] == [None, True, False]
    assert (KV_CACHE.shown(None), KV_CACHE.stored("q8_0"), KV_CACHE.stored("auto")) == ("auto", "q8_0", None)
    url = dict(registry.offered())["openai"].option("url")
    assert (url.stored("  "), url.stored(" http://h:1 ")) == ("http://127.0.0.1:8000", "http://h:1")
    vllm = Option("vllm", "vLLM options", "options")
    assert vllm.stored(vllm.shown({"quantization": "gptq", "max_num_seqs": 16})) == {
        "quantization": "gptq",
        "max_num_seqs": 16,
    }
    with pytest.raises(ValueError, match="unknown kind"):
        Option("model", "Model", "colour")


def test_a_backend_from_elsewhere_is_checked_and_can_be_removed():
    from engine.backends.registry import Choice, Entry, Option, register_backend, unregister_backend

    class Elsewhere:
        name = "elsewhere"

        @classmethod
        def from_settings(cls, settings, *, log_dir=None, has_bf16=None):
            return create_backend(LlmSettings(backend="fake"))

    with pytest.raises(ValueError, match="taken"):
        register_backend("elsewhere", Entry(__name__, (Choice("gguf", "Clash"),)))(Elsewhere)
    with pytest.raises(ValueError, match="colour are not"):
        register_backend("elsewhere", Entry(__name__, (Choice("e", "E", (Option("colour", "C", "text"),)),)))(Elsewhere)
    with pytest.raises(ValueError, match="built in"):
        register_backend("openai", Entry(__name__, (Choice("e", "E"),)))(Elsewhere)
    register_backend("elsewhere", Entry(__name__, (Choice("e", "E"),)))(Elsewhere)
    try:
        assert "elsewhere" in registry.listed_names() and __name__ in registry.hidden_imports()
        create_backend(LlmSettings(backend="elsewhere")).close()
    finally:
        unregister_backend("elsewhere")
    assert "elsewhere" not in registry.table() and __name__ not in registry.hidden_imports()
    with pytest.raises(ValueError, match="built in"):
        unregister_backend("llama_cpp")


def test_every_backend_module_goes_into_the_packaged_app():
    assert registry.hidden_imports() == sorted(entry.module for entry in BUILT_IN.values())
    assert "engine.backends.llama_server" in registry.hidden_imports()


def test_speculation_reaches_each_runtime_in_its_own_words(tmp_path):
    from engine.backends import speculation
    from engine.backends.llama_server import LlamaServerSettings, ServerPlan, build_command
    from engine.backends.vllm_server import VllmSettings
    from engine.backends.vllm_server import build_command as vllm_command

    plan = ServerPlan(1, 2048, "f16", False, False, "test")
    gguf = tmp_path / "m.gguf"
    on = build_command(LlamaServerSettings(gguf, speculation="ngram"), plan, "llama-server", 8080)
    off = build_command(LlamaServerSettings(gguf, speculation="off"), plan, "llama-server", 8080)
    assert on[on.index("--spec-type") + 1] == "ngram-simple" and "--spec-type" not in off
    # unset: as measured, on for llama-server on a CPU, off on a GPU until measured there
    cpu = build_command(LlamaServerSettings(gguf), plan, "llama-server", 8080)
    gpu = build_command(LlamaServerSettings(gguf), ServerPlan(1, 2048, "f16", True, True, "test"), "llama-server", 8080)
    assert "--spec-type" in cpu and "--spec-type" not in gpu
    command = vllm_command(VllmSettings(model="m", speculation="ngram", executable="/bin/vllm"), 8000, True)
    config = command[command.index("--speculative-config") + 1]
    assert '"method": "ngram"' in config and "--speculative-config" not in vllm_command(
        VllmSettings(model="m", executable="/bin/vllm"), 8000, True
    )
    assert speculation.llama_cpp_draft("off") is None
    with pytest.raises(ValueError, match="unknown speculation"):
        speculation.chosen("llama_cpp", "eagle", False)
