"""What runs on which NVIDIA card: the table in gpu_support.toml (each fact with its source), read
by the doctor's lines, the Models verdicts and the vLLM guard."""

from __future__ import annotations

import json
import tomllib
from functools import lru_cache
from pathlib import Path

TABLE = Path(__file__).with_name("gpu_support.toml")


@lru_cache(maxsize=1)
def table() -> dict:
    return tomllib.loads(TABLE.read_text(encoding="utf-8"))


def capability(text: str) -> tuple[int, int] | None:
    """(major, minor) of "7.0"; None for what is not one."""
    try:
        major, minor = (int(x) for x in str(text).split(".")[:2])
    except ValueError:
        return None
    return major, minor


def card(compute_capability: str) -> dict:
    """The table's row for a card ("7.0", else "7.x"); {} for a card the table does not know."""
    cc = capability(compute_capability)
    if cc is None:
        return {}
    cards = table()["card"]
    return cards.get(f"{cc[0]}.{cc[1]}") or cards.get(f"{cc[0]}.x") or {}


def _at_least(compute_capability: str, needed: str) -> bool:
    have, want = capability(compute_capability), capability(needed)
    return have is not None and want is not None and have >= want


def vllm_supported(compute_capability: str) -> bool:
    """Whether current vLLM releases still build for the card (older ones may: see card()['vllm_last'])."""
    return _at_least(compute_capability, table()["vllm"]["min_capability"])


def has_bf16(compute_capability: str) -> bool:
    return _at_least(compute_capability, table()["vllm"]["bf16_min_capability"])


def quantization_needs(method: str) -> str:
    """The lowest compute capability vLLM's kernels for `method` run on ("" for a method the table
    does not know: nothing is claimed about it)."""
    return table()["vllm"]["quantization"].get(method.strip().lower().replace("-", "_"), "")


def quantization_runs(compute_capability: str, method: str) -> bool | None:
    """True/False from the table; None where the method or the card is unknown."""
    needed = quantization_needs(method)
    if not needed or capability(compute_capability) is None:
        return None
    return _at_least(compute_capability, needed)


def working_quantizations(compute_capability: str) -> list[str]:
    """The table's quantization methods that run on the card, as vLLM names them."""
    methods = table()["vllm"]["quantization"]
    return [m for m, needed in methods.items() if _at_least(compute_capability, needed)]


def quantization_of(model: str) -> str:
    """The quant_method of a local model folder's config.json ("" for none, or a hub name: not known here)."""
    path = Path(model).expanduser()
    config = path / "config.json" if path.is_dir() else path
    if config.name != "config.json" or not config.is_file():
        return ""
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    data = data.get("text_config", data) if "quantization_config" not in data else data
    quant = data.get("quantization_config") or {}
    return str(quant.get("quant_method", "")).lower() if isinstance(quant, dict) else ""


def doctor_lines(compute_capability: str) -> list[str]:
    """What the doctor says about a card, from the table, each line with its source in brackets."""
    row = card(compute_capability)
    if not row:
        return []
    lines = [f"{row['name']}: CUDA toolkits that build for it: {row['cuda_toolkits']} [{row['cuda_source']}]"]
    if "vllm_last" in row:
        lines.append(
            f"vLLM: a release below {row['vllm_last']} with {row['torch']}; newer vLLM needs compute capability "
            f"{table()['vllm']['min_capability']} [{row['vllm_source']}; {row['torch_source']}]"
        )
    lines.append(f"precision: {row['dtype']} [{row['dtype_source']}]")
    lines += [f"{note['text']} [{note['source']}]" for note in row.get("notes", [])]
    return lines
