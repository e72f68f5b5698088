"""The human-readable form of `docdesk doctor`'s report."""

from __future__ import annotations

GIB = 1024**3


def render(result: dict) -> str:
    lines: list[str] = [f"!! {warning}" for warning in result.get("warnings", [])]  # what matters most, first
    if not result["gpus"]:
        lines.append(result["gpu_message"])
    for gpu in result["gpus"]:
        lines.append(
            f"GPU: {gpu['name']} · compute capability {gpu['compute_capability']} · "
            f"{gpu['vram_bytes'] / GIB:.1f} GiB · driver {gpu['driver']} · CUDA {gpu['cuda']}"
        )
        lines += [f"  ! {note}" for note in gpu["pitfalls"]]
        lines += [f"  · {line}" for line in gpu.get("support", [])]  # the card table's lines, with sources
    offload = result["llama_cpp_gpu_offload"]
    lines.append(
        "llama-cpp-python: not installed"
        if offload is None
        else f"llama-cpp-python: {'can' if offload else 'cannot'} offload to a GPU (this build)"
    )
    threads = result.get("threads")
    if threads:
        lines.append(
            f"llama.cpp threads: {threads['threads']} for answers, {threads['threads_batch']} for prompts "
            f"({threads['source']})"
        )
    model = result.get("model")
    if model:
        lines.append(
            f"model: {model['name']} ({model['architecture']}) · {model['layers']} layers · {model['kv_heads']} KV heads · "
            f"head dim {model['head_dim']} · trained context {model['context_length']} · {model['file_bytes'] / GIB:.2f} GiB"
            + (f" · {model['quantization'].upper()}" if model.get("quantization") else "")
        )
    lines += [f"  ~ {line}" for line in result.get("decode_predicted", [])]
    plan = result.get("plan")
    if plan:
        kv = plan["kv_bytes_per_token"]
        lines.append(
            f"memory plan for {plan['vram_bytes'] / GIB:.1f} GiB: weights {plan['weights_bytes'] / GIB:.2f} GiB + "
            f"overhead {plan['overhead_bytes'] / GIB:.1f} GiB + KV cache {kv['f16'] / 1024:.0f} KiB/token (f16), "
            f"{kv['q8_0'] / 1024:.0f} KiB/token (q8_0)"
        )
        lines.append(
            f"largest context that fits: {plan['max_context']['f16']} tokens with f16 KV cache, "
            f"{plan['max_context']['q8_0']} with q8_0" + ("" if plan["fits"] else "  (the model does not fit as asked)")
        )
        lines += [f"  {name}: {flags}" for name, flags in plan["flags"].items()]
    elif "plan_message" in result:
        lines.append(result["plan_message"])
    return "\n".join(lines)


def gpu_situation(result: dict) -> tuple[str, str, float]:
    """The GPU part of the report in one word, with the first card's name and GiB: "none" (no
    NVIDIA GPU), "offload" (llama-cpp-python can use it), "cpu-build" (it cannot: a CPU-only
    build) or "no-llama" (llama-cpp-python is not installed)."""
    if not result["gpus"]:
        return "none", "", 0.0
    gpu = result["gpus"][0]
    offload = result["llama_cpp_gpu_offload"]
    kind = "no-llama" if offload is None else "offload" if offload else "cpu-build"
    return kind, gpu["name"], gpu["vram_bytes"] / GIB
