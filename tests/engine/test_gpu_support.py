"""The card table (engine/models/gpu_support.toml) and where DocDesk shows it: the doctor's lines
and the Models verdicts, for stubbed GPUs (no V100 here)."""

from __future__ import annotations

import json

from app.desk.doctor_text import render
from engine.models import gpu_support
from engine.models.catalog import Machine, ModelFacts, judge, this_machine
from engine.models.doctor import GIB, Gpu, report
from engine.models.gguf_info import ModelShape

V100 = Gpu("Tesla V100-SXM2-32GB", "7.0", 32 * GIB, "535.183.01", "12.2")
H100 = Gpu("NVIDIA H100 80GB HBM3", "9.0", 80 * GIB, "570.86", "12.8")
# Qwen2.5-32B in 4 bits (GPTQ and AWQ builds weigh about the same).
QWEN_32B_4BIT = ModelShape("Qwen2.5 32B Instruct", "qwen2", 64, 40, 8, 128, 32768, 19_000_000_000)


def test_every_card_row_and_note_names_its_source():
    cards = gpu_support.table()["card"]
    assert {"7.0", "7.5", "8.x", "9.0"} <= set(cards)
    for key, row in cards.items():
        for fact in ("cuda_toolkits", "dtype"):
            assert row[fact] and row[f"{fact.split('_')[0]}_source"], (key, fact)
        assert all(note["text"] and note["source"] for note in row["notes"]), key
    assert gpu_support.card("8.6")["name"].startswith("Ampere") and gpu_support.card("5.2") == {}


def test_volta_gets_cuda_12_vllm_below_0_21_and_fp16_from_the_table():
    lines = " | ".join(gpu_support.doctor_lines("7.0"))
    for expected in ("CUDA 12.x", "cutlass PR #3166", "below 0.21", "cu126", "#172352", "-fa off", "#28661",
                     "GPTQ, GGUF and bitsandbytes work", "AWQ, Marlin, W8A8 and FP8 do not", "fp16 only",
                     "--skip-mm-profiling", "#17505", "#16843"):  # fmt: skip
        assert expected in lines, expected
    assert not gpu_support.vllm_supported("7.0") and gpu_support.vllm_supported("7.5")
    assert not gpu_support.has_bf16("7.5") and gpu_support.has_bf16("8.0")


def test_quantizations_by_card():
    assert gpu_support.working_quantizations("7.0") == ["gptq", "gguf", "bitsandbytes"]
    assert gpu_support.quantization_runs("7.0", "AWQ") is False
    assert gpu_support.quantization_runs("7.5", "awq") is True
    assert gpu_support.quantization_runs("7.0", "fp8") is False and gpu_support.quantization_runs("9.0", "fp8")
    assert gpu_support.quantization_runs("7.0", "some-new-method") is None  # nothing claimed


def test_the_quantization_is_read_from_a_local_folder_only(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"quantization_config": {"quant_method": "AWQ", "bits": 4}}))
    assert gpu_support.quantization_of(str(tmp_path)) == "awq"
    assert gpu_support.quantization_of("Qwen/Qwen2.5-32B-Instruct-AWQ") == ""  # a hub name: not known here
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["Qwen2ForCausalLM"]}))
    assert gpu_support.quantization_of(str(tmp_path)) == ""


def test_the_doctor_shows_a_v100_its_lines_and_an_h100_its_own():
    result = report(None, None, None, gpus=[V100, H100])
    text = render(result)
    v100, h100 = text.split("GPU: NVIDIA H100")
    assert "· Volta (V100): CUDA toolkits that build for it: CUDA 12.x" in v100
    assert "-fa off" in v100 and "below 0.21" in v100 and "fp16 only" in v100
    assert "Hopper" in h100 and "-fa off" not in h100 and "bf16 and fp16" in h100


def test_through_vllm_a_gptq_model_fits_a_v100_and_an_awq_one_does_not():
    machine = this_machine(gpus=[V100], offload=True)
    assert machine.compute_capability == "7.0"
    facts = ModelFacts(QWEN_32B_4BIT, QWEN_32B_4BIT.file_bytes, None, 0)
    awq = judge(facts, machine, quantization="awq")
    assert awq.kind == "gpu-no" and not awq.fits
    assert "AWQ needs compute capability 7.5" in awq.text and "GPTQ" in awq.text
    gptq = judge(facts, machine, quantization="gptq")
    assert gptq.fits and gptq.kind == judge(facts, machine).kind
    h100 = Machine("H100", 80 * GIB, True, 64 * GIB, 10e9, "given", "9.0")
    assert judge(facts, h100, quantization="awq").fits


def test_the_doctor_warns_that_an_awq_folder_does_not_run_on_a_v100_and_passes_a_gptq_one(tmp_path):
    config = {"architectures": ["Qwen2ForCausalLM"], "hidden_size": 5120, "num_attention_heads": 40,
              "num_hidden_layers": 64, "num_key_value_heads": 8, "max_position_embeddings": 32768}  # fmt: skip
    (tmp_path / "config.json").write_text(json.dumps(config | {"quantization_config": {"quant_method": "awq"}}))
    result = report(tmp_path, None, 8192, gpus=[V100])
    assert result["model"]["quantization"] == "awq"
    text = render(result)
    (warning,) = [line for line in text.splitlines() if line.startswith("!! AWQ")]  # among the warnings, first
    assert "does not run on Tesla V100-SXM2-32GB through vLLM" in warning and "GPTQ" in warning
    assert "· AWQ" in text
    (tmp_path / "config.json").write_text(json.dumps(config | {"quantization_config": {"quant_method": "gptq"}}))
    assert not any("GPTQ" in w for w in report(tmp_path, None, 8192, gpus=[V100])["warnings"])
