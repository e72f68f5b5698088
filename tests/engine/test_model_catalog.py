"""The model catalog (engine/models/model_catalog.toml) and the verdicts: from real GGUF headers read
over HTTP ranges from a local Hub, planned with the doctor's numbers."""

from __future__ import annotations

import re

import pytest

from engine.backends.llama_cpp import bundled_model_path
from engine.models.catalog import (
    CatalogError,
    Machine,
    ModelFacts,
    facts_of,
    find,
    judge,
    load_catalog,
    read_remote,
)
from engine.models.doctor import GIB
from engine.models.gguf_info import GgufHeader, ModelShape, TensorInfo
from tests.hub_server import FakeHub

# Qwen2.5-32B-Instruct Q4_K_M as its GGUF header describes it (the same shape tests/bench uses).
QWEN_32B = ModelShape("Qwen2.5 32B Instruct", "qwen2", 64, 40, 8, 128, 32768, 19_851_335_840)


def machine(vram_gib: float = 0, ram_gib: float = 23.5, usable: bool = True) -> Machine:
    name = f"GPU {vram_gib:.0f} GB" if vram_gib else ""
    return Machine(name, int(vram_gib * GIB), usable, int(ram_gib * GIB), 10e9, "given")


def test_the_shipped_catalog_names_the_models_people_run_for_each_card():
    entries = load_catalog()
    assert 8 <= len(entries) <= 12
    assert {e.tier for e in entries} == {"32 GB", "24 GB", "16 GB", "CPU"}
    titles = " ".join(e.title for e in entries)
    for wanted in ("Qwen3 32B", "30B-A3B", "QwQ", "DeepSeek-R1-Distill-Qwen 32B", "Gemma 3 27B", "Mistral Small 24B"):
        assert wanted in titles
    for e in entries:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", e.repo) and e.file.endswith(".gguf")
        assert e.quant in e.file.upper().replace("-", "_") or e.quant.lower() in e.file
        assert e.size_bytes > 1e9 and e.context >= 32768 and e.licence and e.languages
        assert e.thinking in ("always", "switchable", "no")
        assert e.sha256 == "" or re.fullmatch(r"[0-9a-f]{64}", e.sha256)
    assert find("QWEN3-32B") == entries[0] and find(entries[1].file) == entries[1] and find("nope") is None


def test_a_broken_catalog_says_what_is_wrong(tmp_path):
    path = tmp_path / "catalog.toml"
    path.write_text('[[model]]\nname = "x"\ntitle = "X"\n')
    with pytest.raises(CatalogError, match="missing .*repo"):
        load_catalog(path)


def test_verdicts_come_from_headers_read_with_range_requests_and_are_cached(tmp_path):
    hub = FakeHub()
    entries = load_catalog()
    for entry in entries:  # the bundled SmolLM2 stands in for each file
        hub.add(entry.repo, entry.file, bundled_model_path())
    hub.start()
    try:
        facts = [read_remote(e, hub.endpoint, cache=tmp_path) for e in entries]
        gets = [r for r in hub.log if r.method == "GET"]
        assert gets and all(r.range for r in gets)
        assert max(r.sent for r in gets) <= 4 << 20 and sum(r.sent for r in gets) < len(entries) * (8 << 20)
        assert all(f.shape.layers == 30 and f.shape.file_bytes == bundled_model_path().stat().st_size for f in facts)
        before = len(hub.log)
        again = read_remote(entries[0], hub.endpoint, cache=tmp_path)  # from the cache: no request
        assert len(hub.log) == before and again.shape == facts[0].shape and again.active_bytes == facts[0].active_bytes
        verdict = judge(facts[0], machine())
        assert verdict.kind == "cpu" and verdict.tokens_per_s > 10 and "tokens/s" in verdict.text
    finally:
        hub.stop()


def test_a_32b_model_on_each_card_and_on_the_cpu():
    facts = ModelFacts(QWEN_32B, QWEN_32B.file_bytes, None, 0)
    on_32 = judge(facts, machine(32))
    on_24 = judge(facts, machine(24))
    assert on_32.kind == on_24.kind == "gpu" and on_32.context == 8192
    assert on_32.parallel > on_24.parallel >= 1  # a bigger card runs more answers at once
    assert judge(facts, machine(16)).kind == "gpu-no"
    cpu = judge(facts, machine(24, usable=False))  # a CPU-only build of llama.cpp: the card is no use
    assert cpu.kind == "cpu" and 0.3 < cpu.tokens_per_s < 1  # 10 GB/s over 19.9 GB a token
    assert judge(facts, machine(ram_gib=16)).kind == "cpu-no"


def test_a_mixture_of_experts_reads_only_its_chosen_experts_each_token():
    experts = [TensorInfo(f"blk.{i}.ffn_up_exps.weight", [1], 12, 1_000_000_000) for i in range(16)]
    dense = [TensorInfo("blk.0.attn_q.weight", [1], 12, 500_000_000), TensorInfo("output.weight", [1], 14, 300_000_000)]
    embedding = [TensorInfo("token_embd.weight", [1], 12, 200_000_000)]
    meta = {"general.architecture": "qwen3moe", "qwen3moe.expert_count": 128, "qwen3moe.expert_used_count": 8}
    meta |= {"qwen3moe.block_count": 48, "qwen3moe.attention.head_count": 32}  # a model, not just a header
    facts = facts_of(GgufHeader(meta, 17_000_000_000, experts + dense + embedding), "moe")
    assert facts.experts == (8, 128)
    assert facts.active_bytes == 800_000_000 + 16_000_000_000 * 8 // 128  # the embedding is looked up, not read
