"""The vLLM guard: what is installed in vLLM's Python, checked against the card and the model
before vLLM starts (stubbed probes and GPUs: no V100 here)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time

import pytest

from engine.backends import LlmSettings, vllm_guard
from engine.backends.vllm_guard import Probe, check, environment_prefix, interpreter_of, probe, problems
from engine.backends.vllm_server import VllmServer
from engine.errors import BackendUnavailable
from engine.models.doctor import GIB, Gpu

V100 = Gpu("Tesla V100-SXM2-32GB", "7.0", 32 * GIB, "535.183.01", "12.2")
H100 = Gpu("NVIDIA H100 80GB HBM3", "9.0", 80 * GIB, "570.86", "12.8")
# torch 2.11's cu128 wheel: no Volta (pytorch #172352); its cu126 wheel still has sm_70.
CU128 = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"]
CU126 = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
GOOD_FOR_VOLTA = Probe("0.20.2", "2.11.0+cu126", CU126, False, None)


def model_folder(tmp_path, method: str):
    folder = tmp_path / f"qwen-{method}"
    folder.mkdir()
    config = {"architectures": ["Qwen2ForCausalLM"], "quantization_config": {"quant_method": method, "bits": 4}}
    (folder / "config.json").write_text(json.dumps(config))
    return str(folder)


def test_a_v100_with_vllm_0_26_is_refused_with_the_release_that_works():
    wrong = problems(Probe("0.26.0", "2.11.0+cu128", CU128), "7.0")
    assert len(wrong) == 2
    assert "vLLM 0.26.0 does not run on Volta (V100)" in wrong[0] and "pip install 'vllm<0.21'" in wrong[0]
    assert "torch 2.11.0+cu128 has no kernels for sm_70" in wrong[1] and "cu126" in wrong[1]
    assert problems(GOOD_FOR_VOLTA, "7.0") == []
    assert problems(Probe("0.26.0", "2.11.0+cu128", CU128), "9.0") == []


def test_torch_kernels_run_from_a_lower_minor_of_the_same_major_or_from_ptx():
    assert problems(Probe("0.26.0", "2.11.0", ["sm_80", "sm_90"]), "8.6") == []
    assert problems(Probe("0.26.0", "2.11.0", ["sm_90", "compute_80"]), "8.6") == []
    assert "no kernels for" in problems(Probe("0.26.0", "2.11.0", ["sm_90"]), "8.6")[0]
    assert problems(Probe("0.20.2", "2.11.0", []), "7.0") == []  # torch sees no CUDA: nothing known


def test_awq_on_volta_is_refused_and_gptq_named_bf16_gets_fp16():
    wrong = problems(GOOD_FOR_VOLTA, "7.0", "awq", "bfloat16")
    assert "AWQ needs compute capability 7.5" in wrong[0] and "GPTQ" in wrong[0]
    assert 'dtype = "half"' in wrong[1]
    assert problems(GOOD_FOR_VOLTA, "7.0", "gptq", "half") == []
    assert problems(Probe("0.26.0", "2.11.0", CU128), "9.0", "awq", "bfloat16") == []
    with pytest.raises(BackendUnavailable, match="vLLM cannot start on this machine:\n- FP8 needs"):
        check(GOOD_FOR_VOLTA, "7.0", "fp8")
    check(None, "7.0", "awq")  # the probe failed: today's behaviour
    check(GOOD_FOR_VOLTA, "", "awq")  # no GPU found: nothing to check against


def test_the_python_behind_a_vllm_program_is_found(tmp_path):
    assert interpreter_of([sys.executable, "-m", "vllm.entrypoints.openai.api_server"]) == sys.executable
    script = tmp_path / "vllm"
    script.write_text("#!/opt/vllm/bin/python3.12\nfrom vllm.entrypoints.cli.main import main\n")
    assert interpreter_of([str(script), "serve"]) == "/opt/vllm/bin/python3.12"
    script.write_text("#!/bin/sh\n'''exec' \"/a/very/long/path/bin/python\" \"$0\" \"$@\"\n' '''\n")
    assert interpreter_of([str(script)]) == "/a/very/long/path/bin/python"
    script.write_text("#!/bin/sh\nexec something\n")
    (tmp_path / "python").write_text("")
    assert interpreter_of([str(script)]) == str(tmp_path / "python")
    assert interpreter_of([str(tmp_path / "missing")]) is None


def test_one_probe_call_is_read_and_a_failed_one_falls_back_with_a_note(caplog):
    calls = []

    def run(command, **options):
        calls.append((command, options["timeout"]))
        out = {"vllm": "0.26.0", "torch": "2.11.0", "arch_list": CU128, "flashinfer": False, "sampler_env": None}
        return subprocess.CompletedProcess(command, 0, "noise\nDOCDESK-PROBE " + json.dumps(out) + "\n", "")

    assert probe("/opt/vllm/bin/python", run=run) == Probe("0.26.0", "2.11.0", CU128, False, None)
    assert calls[0][0][:2] == ["/opt/vllm/bin/python", "-c"] and calls[0][1] == vllm_guard.PROBE_TIMEOUT

    def times_out(command, **options):
        raise subprocess.TimeoutExpired(command, options["timeout"])

    with caplog.at_level(logging.INFO, logger="engine.backends.vllm_guard"):
        assert probe("/opt/vllm/bin/python", run=times_out) is None
        assert probe(None) is None
    assert "starting vLLM without the checks" in caplog.text and "without the checks" in caplog.records[-1].message


def test_the_sampler_is_set_only_where_flashinfer_is_missing_and_the_user_left_it_unset():
    prefix = environment_prefix(Probe("0.26.0", "2.11.0", CU128, flashinfer=False, sampler_env=None))
    assert prefix[0].endswith("env") and prefix[1:] == ["VLLM_USE_FLASHINFER_SAMPLER=0"]
    assert environment_prefix(Probe("0.26.0", "2.11.0", CU128, flashinfer=True)) == []
    assert environment_prefix(Probe("0.26.0", "2.11.0", CU128, sampler_env="1")) == []
    assert environment_prefix(None) == []


@pytest.fixture
def v100(monkeypatch):
    monkeypatch.setattr("engine.models.doctor.detect_gpus", lambda: [V100])
    started = []
    monkeypatch.setattr(VllmServer, "start", lambda self: started.append(self.command) or self)
    return started


def settings(model: str, **vllm) -> LlmSettings:
    return LlmSettings(backend="vllm", model=model, vllm={"executable": "/opt/vllm/bin/vllm", **vllm})


def test_the_backend_refuses_an_awq_folder_on_a_v100_in_seconds_without_starting_vllm(v100, tmp_path, monkeypatch):
    monkeypatch.setattr(vllm_guard, "probe", lambda python: GOOD_FOR_VOLTA)
    began = time.monotonic()
    with pytest.raises(BackendUnavailable, match="AWQ needs compute capability 7.5.*GPTQ"):
        VllmServer.from_settings(settings(model_folder(tmp_path, "awq")), log_dir=tmp_path)
    assert time.monotonic() - began < 5 and v100 == []


def test_the_backend_starts_a_gptq_folder_on_a_v100_in_fp16_without_the_flashinfer_sampler(v100, tmp_path, monkeypatch):
    asked = []
    monkeypatch.setattr(vllm_guard, "probe", lambda python: asked.append(python) or GOOD_FOR_VOLTA)
    monkeypatch.setattr(vllm_guard, "interpreter_of", lambda launcher: launcher[0] + "-python")
    VllmServer.from_settings(settings(model_folder(tmp_path, "gptq")), log_dir=tmp_path)
    (command,) = v100
    assert asked == ["/opt/vllm/bin/vllm-python"]
    assert command[1:4] == ["VLLM_USE_FLASHINFER_SAMPLER=0", "/opt/vllm/bin/vllm", "serve"]
    assert command[command.index("--dtype") + 1] == "half"


def test_a_hub_name_skips_the_quantization_check_and_vllm_0_26_is_refused(v100, tmp_path, monkeypatch):
    monkeypatch.setattr(vllm_guard, "probe", lambda python: Probe("0.26.0", "2.11.0+cu128", CU128, True))
    with pytest.raises(BackendUnavailable, match=r"vLLM 0.26.0 does not run(.|\n)*no kernels for sm_70") as refused:
        VllmServer.from_settings(settings("Qwen/Qwen2.5-32B-Instruct-AWQ"), log_dir=tmp_path)
    assert "AWQ" not in str(refused.value)


def test_a_failed_probe_starts_vllm_as_before(v100, tmp_path, monkeypatch):
    monkeypatch.setattr(vllm_guard, "probe", lambda python: None)
    VllmServer.from_settings(settings(model_folder(tmp_path, "awq")), log_dir=tmp_path)
    assert v100[0][:2] == ["/opt/vllm/bin/vllm", "serve"]


@pytest.mark.subprocess
def test_the_probe_asks_a_real_interpreter_and_gives_up_on_a_hanging_one(tmp_path):
    from importlib.metadata import version

    found = probe(sys.executable)  # DocDesk's own Python: torch without vLLM
    assert found is not None and found.vllm == "" and found.torch == version("torch")
    hanging = tmp_path / "python"
    hanging.write_text("#!/bin/sh\nsleep 30\n")
    hanging.chmod(0o755)
    began = time.monotonic()
    assert probe(str(hanging), timeout=1) is None
    assert time.monotonic() - began < 10
