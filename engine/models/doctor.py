"""`docdesk doctor`: the GPU, its known pitfalls, and a memory plan for a model.

Plan = weights + KV cache + overhead, where the KV cache per token is
2 (K and V) x layers x KV heads x head dim x bytes per element.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path

from engine.errors import ModelNotFound
from engine.models.gguf_info import ModelShape, read_gguf
from engine.models.gpu_support import (
    doctor_lines,
    quantization_needs,
    quantization_of,
    quantization_runs,
    working_quantizations,
)

GIB = 1024**3
# CUDA context, cuBLAS workspace and llama.cpp/vLLM compute buffers, measured loosely across
# cards and models: DocDesk reserves this much besides weights and KV cache.
OVERHEAD_BYTES = int(1.0 * GIB)
KV_BYTES = {"f16": 2.0, "q8_0": 34 / 32}  # q8_0 stores 32 values in 34 bytes


@dataclass
class Gpu:
    name: str
    compute_capability: str
    vram_bytes: int
    driver: str
    cuda: str


@dataclass
class MemoryPlan:
    model: str
    weights_bytes: int
    kv_bytes_per_token: dict[str, float]
    overhead_bytes: int
    vram_bytes: int
    max_context: dict[str, int]
    training_context: int
    fits: bool
    flags: dict[str, str] = field(default_factory=dict)


def detect_gpus(run=subprocess.run) -> list[Gpu]:
    """GPUs from nvidia-smi; [] when there is none (or no driver)."""
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        query = run(
            ["nvidia-smi", "--query-gpu=name,compute_cap,memory.total,driver_version", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        header = run(["nvidia-smi"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if query.returncode != 0:
        return []
    cuda = re.search(r"CUDA Version:\s*([\d.]+)", header.stdout or "")
    gpus = []
    for line in query.stdout.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 4:
            gpus.append(
                Gpu(parts[0], parts[1], int(float(parts[2])) * 1024**2, parts[3], cuda.group(1) if cuda else "")
            )
    return gpus


def llama_gpu_offload() -> bool | None:
    """Whether this llama-cpp-python build can offload to a GPU (None: not installed)."""
    try:
        import llama_cpp
    except ImportError:
        return None
    return bool(llama_cpp.llama_supports_gpu_offload())


def gpu_build_warning(gpus: list[Gpu] | None = None, offload: bool | None = None) -> str:
    """'' unless an NVIDIA GPU is here and the installed llama.cpp cannot use it."""
    gpus = detect_gpus() if gpus is None else gpus
    offload = llama_gpu_offload() if offload is None else offload
    if not gpus or offload is not False:
        return ""
    cc = gpus[0].compute_capability
    return (
        f"{gpus[0].name} is here, but this llama-cpp-python is a CPU-only build: GGUF models run on the CPU, "
        f"many times slower. Install the CUDA toolkit (nvcc) and run `make run` again: it builds llama.cpp "
        f"for compute capability {cc} (CMAKE_ARGS='-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES={cc.replace('.', '')}')"
    )


def pitfalls(gpu: Gpu) -> list[str]:
    """Known problems of a card, by compute capability."""
    try:
        major, minor = (int(x) for x in gpu.compute_capability.split(".")[:2])
    except ValueError:
        return []
    notes: list[str] = []
    if (major, minor) < (8, 0):
        notes.append(
            f"compute capability {gpu.compute_capability}: no bf16, so run models in fp16 (vLLM: --dtype half)"
        )
        notes.append("AWQ and Marlin kernels and an fp8 KV cache need compute capability 8.0 or newer; GPTQ works")
        notes.append("vLLM refuses Gemma-3 in fp16 (its activations overflow): use llama.cpp (a GGUF) for Gemma-3")
    if (major, minor) == (7, 0):
        notes.append("Volta (V100): NVIDIA drivers 535-550 are the known-good range")
        notes.append(
            "vLLM: only releases below 0.21 ship sm_70 kernels, with a cu126 torch (engine/models/gpu_support.toml)"
        )
        notes.append("llama.cpp: build with CUDA for sm_70 (CMAKE_ARGS='-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=70')")
    if major < 7:
        notes.append(f"compute capability {gpu.compute_capability} is older than vLLM supports: use llama.cpp")
    return notes


def read_model_shape(path: Path) -> ModelShape:
    """A GGUF file, or a Hugging Face folder (or its config.json)."""
    path = Path(path).expanduser()
    if path.is_file() and path.suffix.lower() == ".gguf":
        return read_gguf(path)
    folder = path if path.is_dir() else path.parent
    config_path = folder / "config.json"
    if not config_path.exists():
        raise ModelNotFound(f"no model at {path}: give a .gguf file or a Hugging Face folder with config.json")
    config = json.loads(config_path.read_text())
    config = config.get("text_config", config)  # multimodal configs nest the language model
    heads = int(config.get("num_attention_heads", 0))
    hidden = int(config.get("hidden_size", 0))
    weights = sum(p.stat().st_size for p in folder.glob("*.safetensors")) or sum(
        p.stat().st_size for p in folder.glob("*.bin")
    )
    return ModelShape(
        name=folder.name,
        architecture=str((config.get("architectures") or [""])[0]),
        layers=int(config.get("num_hidden_layers", 0)),
        heads=heads,
        kv_heads=int(config.get("num_key_value_heads", heads)),
        head_dim=int(config.get("head_dim") or (hidden // heads if heads else 0)),
        context_length=int(config.get("max_position_embeddings", 0)),
        file_bytes=weights,
        source="hf-config",
    )


def kv_bytes_per_token(shape: ModelShape, kv_type: str = "f16") -> float:
    return 2 * shape.layers * shape.kv_heads * shape.head_dim * KV_BYTES[kv_type]


def vram_needed(shape: ModelShape, context: int, kv_type: str = "f16") -> int:
    """Bytes of GPU memory the plan reserves for a model with every layer offloaded."""
    return int(shape.file_bytes + kv_bytes_per_token(shape, kv_type) * context + OVERHEAD_BYTES)


def slot_plan(shape: ModelShape, vram_bytes: int, context: int, kv_type: str = "q8_0", most: int = 16) -> int:
    """How many parallel slots of `context` tokens llama-server can hold beside the weights (≥ 1)."""
    free = vram_bytes - shape.file_bytes - OVERHEAD_BYTES
    per_slot = kv_bytes_per_token(shape, kv_type) * context
    return max(1, min(most, int(free // per_slot))) if per_slot and free > 0 else 1


def server_kv_cache(shape: ModelShape, vram_bytes: int, context: int, slots: int = 16) -> str:
    """The server's KV cache: f16 where all `slots` fit with it, as it decodes faster (on the H200,
    230 against 217 tokens/s at 8 slots: tests/bench/results/gpu-h200.json); else q8_0, which
    holds about twice the slots in the same memory."""
    return "f16" if slot_plan(shape, vram_bytes, context, "f16", slots) >= slots else "q8_0"


def plan_memory(shape: ModelShape, vram_bytes: int, context: int | None = None) -> MemoryPlan:
    free = vram_bytes - shape.file_bytes - OVERHEAD_BYTES
    per_token = {kind: kv_bytes_per_token(shape, kind) for kind in KV_BYTES}
    limit = shape.context_length or 10**9
    max_context = {kind: max(0, min(limit, int(free // cost))) if cost else 0 for kind, cost in per_token.items()}
    wanted = context or min(8192, limit)
    fits = free > 0 and max_context["f16"] >= wanted
    kv = "f16" if max_context["f16"] >= wanted else "q8_0"
    use = min(wanted, max_context[kv]) if max_context[kv] else 0
    flags = {
        "llama_cpp": f'gpu_layers = -1, context = {use}, flash_attention = true, kv_cache = "{kv}"',
        "vllm": f"--max-model-len {min(use, max_context['f16'])} --gpu-memory-utilization 0.90",
    }
    if use:
        server_kv = server_kv_cache(shape, vram_bytes, use)
        slots = slot_plan(shape, vram_bytes, use, server_kv)
        flags["llama_server"] = (
            f"--parallel {slots} --ctx-size {slots * use} --cache-type-k {server_kv} --cache-type-v {server_kv} "
            f"--flash-attn on ({slots} answers at once, {use} tokens each)"
        )
    return MemoryPlan(
        shape.name,
        shape.file_bytes,
        per_token,
        OVERHEAD_BYTES,
        vram_bytes,
        max_context,
        shape.context_length,
        fits,
        flags,
    )


def thread_report(threads: int | None = None, threads_batch: int | None = None) -> dict:
    """The CPU threads llama.cpp gets ([llm] threads and threads_batch, else this machine's default)
    and where the numbers came from."""
    from engine.models.threads import physical_cores, plan_threads, usable_cpus

    plan = plan_threads(threads, threads_batch)
    return asdict(plan) | {"physical_cores": physical_cores(), "cpus": usable_cpus()}


def report(
    model: Path | None,
    vram_gb: float | None,
    context: int | None,
    gpus: list[Gpu] | None = None,
    *,
    threads: int | None = None,
    threads_batch: int | None = None,
) -> dict:
    """The doctor's findings; `threads` and `threads_batch` are [llm]'s (None: automatic)."""
    gpus = detect_gpus() if gpus is None else gpus
    offload = llama_gpu_offload()
    warning = gpu_build_warning(gpus, offload)
    result: dict = {
        "warnings": [warning] if warning else [],
        # "support": the card's lines of engine/models/gpu_support.toml (toolkits, vLLM, quantizations), with sources
        "gpus": [asdict(g) | {"pitfalls": pitfalls(g), "support": doctor_lines(g.compute_capability)} for g in gpus],
        "gpu_message": "" if gpus else "no NVIDIA GPU found: CPU mode",
        "llama_cpp_gpu_offload": offload,
        "threads": thread_report(threads, threads_batch),
    }
    if model is not None:
        shape = read_model_shape(model)
        vram = int(vram_gb * GIB) if vram_gb else (gpus[0].vram_bytes if gpus else 0)
        result["model"] = asdict(shape) | {"chat_template": bool(shape.chat_template)}
        _check_quantization(result, model, gpus)
        result["decode_predicted"] = _decode_predictions(shape, gpus, "hf-config" != shape.source)
        if vram:
            plan = plan_memory(shape, vram, context)
            if gpus and not vram_gb and any("fp16" in p for p in pitfalls(gpus[0])):
                plan.flags["vllm"] += " --dtype half"
            result["plan"] = asdict(plan)
        else:
            result["plan_message"] = "no VRAM to plan for: pass --vram GB"
    return result


def _decode_predictions(shape: ModelShape, gpus: list[Gpu], gguf: bool) -> list[str]:
    """Each card's predicted decode tokens/s for the model, through the runtimes that run it
    (engine/models/decode_speed.py: from bandwidth and the runs measured here; predicted, not measured)."""
    from engine.models.decode_speed import predict

    runtimes = ("llama_cpp", "llama_server") if gguf else ("vllm",)
    found = (predict(g.name, shape.file_bytes, runtime) for g in gpus for runtime in runtimes)
    return [p.text for p in found if p is not None]


def _check_quantization(result: dict, model: Path, gpus: list[Gpu]) -> None:
    """A Hugging Face folder's quantization_config, and a warning where vLLM's kernels for it
    cannot run on the first card (the table: engine/models/gpu_support.toml)."""
    quant = quantization_of(str(model))
    if not quant:
        return
    result["model"]["quantization"] = quant
    cc = gpus[0].compute_capability if gpus else ""
    if gpus and quantization_runs(cc, quant) is False:
        working = ", ".join(m.upper() for m in working_quantizations(cc))
        result["warnings"].append(
            f"{quant.upper()} does not run on {gpus[0].name} through vLLM: it needs compute capability "
            f"{quantization_needs(quant)}, the card has {cc}; a build in {working} does, or a GGUF with llama.cpp"
        )
