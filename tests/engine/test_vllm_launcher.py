"""How the vLLM manager starts vLLM: its module, a `vllm` executable, or a clear refusal."""

from __future__ import annotations

import sys

import pytest

from engine.backends.vllm_server import VllmSettings, build_command
from engine.errors import BackendUnavailable


def test_an_executable_in_another_environment_is_run_as_vllm_serve(tmp_path):
    command = build_command(
        VllmSettings(model="Qwen/Qwen2.5-32B-Instruct-GPTQ-Int4", executable="/opt/vllm/bin/vllm"), 8123, False
    )
    assert command[:3] == ["/opt/vllm/bin/vllm", "serve", "Qwen/Qwen2.5-32B-Instruct-GPTQ-Int4"]
    assert "--model" not in command and command[command.index("--dtype") + 1] == "half"
    assert command[command.index("--port") + 1] == "8123"


def test_the_packaged_app_without_vllm_says_how_to_point_at_one(monkeypatch):
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr("shutil.which", lambda _name: None)
    with pytest.raises(BackendUnavailable, match="not part of the DocDesk application.*executable.*OpenAI-compatible"):
        build_command(VllmSettings(model="m"), 8000, True)
