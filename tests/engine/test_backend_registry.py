"""The backend registry: every name is built by its own module, looked up without heavy imports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from engine.backends import BACKENDS, LlmSettings, create_backend
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
    from app.cli_parser import build_parser

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
