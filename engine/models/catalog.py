"""The models DocDesk suggests (engine/models/model_catalog.toml) and, for the machine at hand, whether
each fits: from the GGUF header read on the Hub with HTTP range requests (engine/models/gguf_info.py),
before anything is downloaded, planned with the doctor's numbers (engine/models/doctor.py).

A verdict is one of:
  gpu          every layer on the GPU with `context` tokens, `parallel` answers at once
  gpu-short    every layer on the GPU, but only a shorter context fits beside the weights
  gpu-no       the weights and their working memory do not fit in the card's memory
  cpu          no usable GPU: the model runs on the CPU at about `tokens_per_s`
  cpu-no       no usable GPU, and the model does not fit in this computer's memory either

CPU speed is estimated from memory bandwidth: generating a token reads every weight it uses once
(a mixture of experts only the experts it routes to), so tokens/s ≈ bandwidth ÷ bytes read per
token. The bandwidth is measured here (a 256 MB memory copy, best of 5). It is an upper bound:
llama.cpp reaches part of it (the bundled 135M model, measured at 53 tokens/s on the 2-core
machine of README's tables, reads 0.1 GB a token: 5 GB/s where the copy measured 11 GB/s).
"""

from __future__ import annotations

import json
import os
import tomllib
import urllib.parse
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from pathlib import Path

from engine.errors import ModelNotFound
from engine.models.doctor import (
    GIB,
    OVERHEAD_BYTES,
    detect_gpus,
    kv_bytes_per_token,
    llama_gpu_offload,
    plan_memory,
    server_kv_cache,
    slot_plan,
)
from engine.models.gguf_info import (
    FileSource,
    GgufHeader,
    HttpRangeSource,
    ModelShape,
    metadata_count,
    read_header,
    refuse_non_models,
    shape_of,
)

CATALOG = Path(__file__).with_name("model_catalog.toml")
DEFAULT_ENDPOINT = "https://huggingface.co"
ANSWER_CONTEXT = 8192  # one answer's context, as the doctor plans it
SHORTEST_USEFUL = 2048  # below this a model cannot hold DocDesk's sources and an answer
CPU_RESERVE = 2 * GIB  # the system and DocDesk itself (the embedder, the window)
CPU_OVERHEAD = GIB // 2  # llama.cpp's compute buffers on the CPU


class CatalogError(ValueError):
    pass


@dataclass(frozen=True)
class CatalogEntry:
    name: str
    title: str
    repo: str
    file: str
    quant: str
    size_bytes: int
    size_exact: bool
    licence: str
    family: str
    context: int
    thinking: str  # always | switchable | no
    languages: tuple[str, ...]
    tier: str  # 32 GB | 24 GB | 16 GB | CPU
    sha256: str = ""

    def url(self, endpoint: str | None = None, revision: str = "main") -> str:
        """Where the Hub serves the file (it redirects to its CDN); `endpoint`: a mirror, from
        HF_ENDPOINT (the app reads it: app/desk/model_download.py)."""
        base = (endpoint or DEFAULT_ENDPOINT).rstrip("/")
        return f"{base}/{self.repo}/resolve/{revision}/{urllib.parse.quote(self.file)}"

    def as_dict(self) -> dict:
        return asdict(self) | {"languages": list(self.languages)}


def load_catalog(path: Path | None = None) -> list[CatalogEntry]:
    """The catalog's entries in their order (`path`: another catalog, from DOCDESK_MODEL_CATALOG;
    the app reads it); a broken entry is named with what is wrong."""
    path = path or CATALOG
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise CatalogError(f"the model catalog {path} cannot be read: {exc}") from exc
    names = {f.name for f in fields(CatalogEntry)}
    required = names - {"sha256"}
    entries, seen = [], set()
    for n, item in enumerate(raw.get("model", []), 1):
        missing, unknown = required - set(item), set(item) - names
        if missing or unknown:
            raise CatalogError(
                f"{path}: model {n} ({item.get('name', '?')}): missing {sorted(missing)}, unknown {sorted(unknown)}"
            )
        if item["name"] in seen:
            raise CatalogError(f"{path}: the name {item['name']} is used twice")
        seen.add(item["name"])
        entries.append(CatalogEntry(**{**item, "languages": tuple(item["languages"])}))
    return entries


def find(name: str, entries: list[CatalogEntry] | None = None) -> CatalogEntry | None:
    """An entry by its name (any case) or its file name."""
    wanted = name.strip().lower()
    for entry in entries if entries is not None else load_catalog():
        if wanted in (entry.name.lower(), entry.file.lower()):
            return entry
    return None


# -- what a GGUF header says ----------------------------------------------------------------------
@dataclass
class ModelFacts:
    shape: ModelShape
    active_bytes: int  # weights read for each generated token (a mixture of experts: only its chosen experts)
    experts: tuple[int, int] | None  # (used per token, count) for a mixture of experts
    fetched_bytes: int  # what reading the header cost (0 for a local file or a cached header)

    def as_dict(self) -> dict:
        shape = asdict(self.shape)
        shape.pop("chat_template")
        return {"shape": shape, "active_bytes": self.active_bytes, "experts": self.experts}


def facts_of(header: GgufHeader, fallback_name: str, fetched: int = 0) -> ModelFacts:
    shape = shape_of(header.metadata, header.size, fallback_name)
    refuse_non_models(header, shape, fallback_name)
    arch = shape.architecture
    count = metadata_count(header.metadata, f"{arch}.expert_count", shape.name)
    used = metadata_count(header.metadata, f"{arch}.expert_used_count", shape.name)
    sizes = [t.nbytes for t in header.tensors]
    total = sum(s or 0 for s in sizes) if sizes and None not in sizes else header.size
    active = total
    names = {t.name: t.nbytes or 0 for t in header.tensors}
    if "output.weight" in names:  # the embedding is looked up, one row a token, not read whole
        active -= names.get("token_embd.weight", 0)
    if count and used:
        experts = sum(size for name, size in names.items() if "_exps." in name)
        active -= int(experts * (1 - used / count))
    return ModelFacts(shape, max(active, 1), (used, count) if count and used else None, fetched)


def read_local(path: Path) -> ModelFacts:
    path = Path(path).expanduser()
    if not path.is_file():
        raise ModelNotFound(f"model file not found: {path}")
    with FileSource(path) as source:
        return facts_of(read_header(source), path.stem)


def read_remote(entry: CatalogEntry, endpoint: str | None = None, cache: Path | None = None) -> ModelFacts:
    """The entry's header from the Hub (range requests of a few MB), or from `cache` where an
    earlier look left it (a folder; one small JSON file per model)."""
    cached = cache / f"{entry.repo.replace('/', '--')}--{entry.file}.json" if cache else None
    if cached is not None and cached.is_file():
        try:
            data = json.loads(cached.read_text(encoding="utf-8"))
            return ModelFacts(ModelShape(**data["shape"]), data["active_bytes"], _pair(data["experts"]), 0)
        except (ValueError, KeyError, TypeError):
            pass  # a broken cache entry is read again from the Hub
    source = HttpRangeSource(entry.url(endpoint), name=entry.file)
    with source:
        header = read_header(source)
    facts = facts_of(header, Path(entry.file).stem, sum(end - start + 1 for start, end in source.requests))
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps(facts.as_dict() | {"shape": asdict(facts.shape)}), encoding="utf-8")
    return facts


def _pair(value) -> tuple[int, int] | None:
    return (int(value[0]), int(value[1])) if value else None


# -- this machine ---------------------------------------------------------------------------------
@dataclass
class Machine:
    gpu_name: str  # "" without an NVIDIA GPU
    vram_bytes: int
    gpu_usable: bool  # llama.cpp here can offload to it
    ram_bytes: int
    bandwidth: float  # bytes/s, for the CPU estimate
    bandwidth_source: str
    compute_capability: str = ""  # the card's, for the table of what runs on it (engine/models/gpu_support.toml)


def total_ram() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # Windows: ask the kernel
        import ctypes

        class Status(ctypes.Structure):
            _fields_ = [("length", ctypes.c_ulong), ("load", ctypes.c_ulong)] + [
                (n, ctypes.c_ulonglong) for n in ("total", "avail", "pages", "pages_free", "virt", "virt_free", "ext")
            ]

        status = Status(length=ctypes.sizeof(Status))
        ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status))
        return int(status.total)


@lru_cache(maxsize=1)
def measure_bandwidth(size: int = 256 << 20, rounds: int = 5) -> float:
    """Bytes a second one memory copy moves (best of `rounds`, buffers touched first): about 0.2 s."""
    import time

    source, target = bytearray(size), bytearray(size)
    source[::4096] = b"\1" * len(range(0, size, 4096))
    target[::4096] = b"\1" * len(range(0, size, 4096))
    a, b = memoryview(source), memoryview(target)
    best = 0.0
    for _ in range(rounds):
        started = time.perf_counter()
        b[:] = a
        best = max(best, size / max(time.perf_counter() - started, 1e-9))
    return best


def this_machine(gpus=None, offload: bool | None = None) -> Machine:
    gpus = detect_gpus() if gpus is None else gpus
    offload = llama_gpu_offload() if offload is None and gpus else offload
    bandwidth = measure_bandwidth()
    gpu = gpus[0] if gpus else None
    return Machine(
        gpu.name if gpu else "",
        gpu.vram_bytes if gpu else 0,
        bool(gpu) and offload is not False,
        total_ram(),
        bandwidth,
        f"memory copy measured here: {bandwidth / 1e9:.1f} GB/s",
        gpu.compute_capability if gpu else "",
    )


# -- the verdict ------------------------------------------------------------------------------------
@dataclass
class Verdict:
    kind: str  # gpu | gpu-short | gpu-no | cpu | cpu-no
    context: int = 0  # tokens of context one answer gets
    parallel: int = 0  # answers at once (llama-server's slots)
    tokens_per_s: float = 0.0  # CPU estimate
    needed_bytes: int = 0
    available_bytes: int = 0
    text: str = ""  # the same in English words (the CLI's table)

    @property
    def fits(self) -> bool:
        return self.kind in ("gpu", "gpu-short", "cpu")

    def as_dict(self) -> dict:
        return asdict(self) | {"fits": self.fits, "tokens_per_s": round(self.tokens_per_s, 2)}


def judge(facts: ModelFacts, machine: Machine, context: int = ANSWER_CONTEXT, quantization: str = "") -> Verdict:
    """`quantization`: vLLM's quant_method where it is known (a folder's config.json: gpu_support.quantization_of);
    a card whose kernels cannot run it gets "gpu-no" with the methods that do."""
    shape = facts.shape
    wanted = min(context, shape.context_length or context)
    if machine.gpu_name and machine.gpu_usable:
        refused = _quantization_refused(quantization, machine, shape)
        return refused or _on_gpu(shape, machine.vram_bytes, wanted)
    needed = int(shape.file_bytes + kv_bytes_per_token(shape, "f16") * wanted + CPU_OVERHEAD)
    available = machine.ram_bytes - CPU_RESERVE
    if needed > available:
        return Verdict(
            "cpu-no",
            needed_bytes=needed,
            available_bytes=available,
            text=f"does not fit: needs {needed / GIB:.1f} GiB of memory, this computer has {machine.ram_bytes / GIB:.0f} GiB",
        )
    speed = machine.bandwidth / facts.active_bytes
    return Verdict(
        "cpu",
        wanted,
        1,
        speed,
        needed,
        available,
        f"CPU only: at most ~{speed:.1f} tokens/s ({facts.active_bytes / 1e9:.1f} GB read a token)",
    )


def _quantization_refused(quantization: str, machine: Machine, shape: ModelShape) -> Verdict | None:
    from engine.models import gpu_support

    if not quantization or gpu_support.quantization_runs(machine.compute_capability, quantization) is not False:
        return None
    working = ", ".join(m.upper() for m in gpu_support.working_quantizations(machine.compute_capability))
    return Verdict(
        "gpu-no", 0, 0, 0.0, int(shape.file_bytes), machine.vram_bytes,
        f"does not run through vLLM: {quantization.upper()} needs compute capability "
        f"{gpu_support.quantization_needs(quantization)}, the card has {machine.compute_capability}"
        + (f" ({working} run on it)" if working else ""),
    )  # fmt: skip


def _on_gpu(shape: ModelShape, vram: int, wanted: int) -> Verdict:
    plan = plan_memory(shape, vram, wanted)
    needed = int(shape.file_bytes + OVERHEAD_BYTES + kv_bytes_per_token(shape, "q8_0") * wanted)
    longest = plan.max_context["q8_0"]
    if longest >= wanted:
        kv = server_kv_cache(shape, vram, wanted)
        slots = slot_plan(shape, vram, wanted, kv)
        return Verdict(
            "gpu", wanted, slots, 0.0, needed, vram,
            f"fits: context {wanted:,} tokens, {slots} answer{'s' if slots > 1 else ''} at once "
            f"(up to {plan.max_context['f16']:,} tokens for one)",
        )  # fmt: skip
    if longest >= SHORTEST_USEFUL:
        return Verdict(
            "gpu-short",
            longest,
            1,
            0.0,
            needed,
            vram,
            f"fits with a short context: {longest:,} tokens, 1 answer at a time",
        )
    return Verdict(
        "gpu-no", 0, 0, 0.0, needed, vram,
        f"does not fit: needs {needed / GIB:.1f} GiB of GPU memory, the card has {vram / GIB:.0f} GiB",
    )  # fmt: skip
