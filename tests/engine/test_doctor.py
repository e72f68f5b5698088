"""Memory planning and GPU pitfalls, on real model metadata."""

from __future__ import annotations

import json

import pytest

from engine.backends.llama_cpp import bundled_model_path
from engine.errors import ModelNotFound
from engine.models.doctor import (
    GIB,
    OVERHEAD_BYTES,
    Gpu,
    kv_bytes_per_token,
    pitfalls,
    plan_memory,
    read_model_shape,
    report,
)

QWEN25_32B = {  # config.json of Qwen/Qwen2.5-32B-Instruct
    "architectures": ["Qwen2ForCausalLM"],
    "hidden_size": 5120,
    "num_attention_heads": 40,
    "num_hidden_layers": 64,
    "num_key_value_heads": 8,
    "max_position_embeddings": 32768,
}
V100 = Gpu("Tesla V100-SXM2-32GB", "7.0", 32 * GIB, "535.183.01", "12.2")


@pytest.fixture
def qwen(tmp_path):
    folder = tmp_path / "Qwen2.5-32B-Instruct-GPTQ-Int4"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(QWEN25_32B))
    (folder / "model.safetensors").write_bytes(b"\0" * 1024)  # size stands in for weights below
    return folder


def test_qwen25_32b_f16_kv_cache_is_256_kib_per_token(qwen):
    shape = read_model_shape(qwen)
    assert (shape.layers, shape.kv_heads, shape.head_dim) == (64, 8, 128)
    assert kv_bytes_per_token(shape, "f16") == 256 * 1024
    assert kv_bytes_per_token(shape, "q8_0") == 256 * 1024 * 34 / 64


def test_plan_gives_the_largest_context_that_fits(qwen):
    shape = read_model_shape(qwen)
    shape.file_bytes = 24 * GIB
    plan = plan_memory(shape, 32 * GIB, context=16384)
    free = 32 * GIB - shape.file_bytes - OVERHEAD_BYTES  # 7 GiB for the KV cache
    assert plan.max_context["f16"] == int(free // (256 * 1024)) == 28672
    assert plan.max_context["q8_0"] == 32768  # 53,970 would fit: capped at the training context
    assert plan.fits and "context = 16384" in plan.flags["llama_cpp"]


def test_a_model_too_large_for_the_card_does_not_fit(qwen):
    shape = read_model_shape(qwen)
    shape.file_bytes = 40 * GIB
    plan = plan_memory(shape, 32 * GIB)
    assert not plan.fits and plan.max_context == {"f16": 0, "q8_0": 0}


def test_gguf_metadata_is_read_without_loading_weights():
    shape = read_model_shape(bundled_model_path())
    assert shape.source == "gguf" and shape.architecture == "llama"
    assert kv_bytes_per_token(shape) == 2 * 30 * 3 * 64 * 2


def test_v100_pitfalls():
    notes = " | ".join(pitfalls(V100))
    for expected in ("no bf16", "fp16", "535-550", "sm_70", "AWQ", "Marlin", "fp8", "GPTQ works", "Gemma-3"):
        assert expected in notes
    assert pitfalls(Gpu("NVIDIA H200", "9.0", 141 * GIB, "570", "12.8")) == []


def test_report_without_gpu_says_cpu_mode_and_plans_for_given_vram(qwen):
    result = report(qwen, vram_gb=32, context=8192, gpus=[])
    assert result["gpu_message"] == "no NVIDIA GPU found: CPU mode"
    assert result["plan"]["vram_bytes"] == 32 * GIB


def test_missing_model_is_named(tmp_path):
    with pytest.raises(ModelNotFound, match="give a .gguf file or a Hugging Face folder"):
        read_model_shape(tmp_path / "nothing-here")


def test_nvidia_smi_output_is_parsed(monkeypatch):
    # What nvidia-smi printed on a real H200 host (the device machine), and its header line.
    import subprocess

    outputs = {
        "--query-gpu=name,compute_cap,memory.total,driver_version": "NVIDIA H200, 9.0, 143771, 580.159.04\n",
        "": "| NVIDIA-SMI 580.159.04   Driver Version: 580.159.04   CUDA Version: 13.0     |\n",
    }

    def run(command, **kwargs):
        key = command[1] if len(command) > 1 else ""
        return subprocess.CompletedProcess(command, 0, stdout=outputs[key], stderr="")

    import engine.models.doctor as doctor

    monkeypatch.setattr(doctor.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    gpus = doctor.detect_gpus(run=run)
    assert gpus == [Gpu("NVIDIA H200", "9.0", 143771 * 1024**2, "580.159.04", "13.0")]


def test_the_doctor_reports_the_threads_and_where_they_came_from():
    from app.desk.doctor_text import render
    from engine.models.threads import default_threads, physical_cores, usable_cpus

    automatic = report(None, None, None, gpus=[])["threads"]
    decode, batch, why = default_threads()
    assert (automatic["threads"], automatic["threads_batch"]) == (decode, batch)
    assert automatic["source"] == f"automatic: {why}"
    assert (automatic["physical_cores"], automatic["cpus"]) == (physical_cores(), usable_cpus())
    configured = report(None, None, None, gpus=[], threads=3, threads_batch=4)
    assert "llama.cpp threads: 3 for answers, 4 for prompts ([llm] threads and threads_batch)" in render(configured)
    half = report(None, None, None, gpus=[], threads=3)["threads"]
    assert (half["threads"], half["threads_batch"]) == (3, batch) and half["source"].startswith("[llm] threads;")


def test_the_thread_default_is_computed_from_the_machine(tmp_path):
    from engine.models.threads import default_threads, physical_cores, usable_cpus

    cpuinfo = tmp_path / "cpuinfo"
    # Two packages of two cores, each core with two hyper-threads: 4 physical cores.
    blocks = [f"processor\t: {n}\nphysical id\t: {n // 4}\ncore id\t\t: {n % 2}\n" for n in range(8)]
    cpuinfo.write_text("\n".join(blocks))
    assert physical_cores(cpuinfo) == min(4, usable_cpus())
    assert default_threads(cores=2, cpus=2)[:2] != default_threads(cores=16, cpus=32)[:2]
    for cores, cpus in ((1, 1), (2, 2), (8, 16), (64, 128)):
        decode, batch, why = default_threads(cores=cores, cpus=cpus)
        assert 1 <= decode <= cores and 1 <= batch <= cpus and str(cores) in why
