"""DocDesk's llama.cpp backend on a GPU, next to llama.cpp's own llama-bench (run on the GPU machine).

    python tests/bench/bench_gpu.py --model synthetic-32b.gguf --llama-bench build/bin/llama-bench \\
        [--book-library DIR] --out tests/bench/results/gpu-h200.json

- Decode tokens/s and time to first token of LlamaCppBackend (every layer on the GPU, flash
  attention, greedy, 128 tokens, DocDesk's repeat penalty 1.1) with an f16 and a q8_0 KV cache,
  as the caller sees them and by llama.cpp's own count; beside `llama-bench -p 512 -n 128 -ngl 99
  -fa 1` on the same file in the same run, and the memory-bandwidth limit (bytes per token = the
  file size). The model is meant to be the synthetic 32B-shaped Q4_K_M (tests/bench/synthetic_gguf.py):
  random weights, so its numbers are throughput only, its text noise.
- VRAM the process holds (nvidia-smi) against the doctor's plan for the same file and context.
- Control: the same file read first with the `gguf` package's reader, then loaded (the crash
  DocDesk's own header reader avoids): the child's exit status is recorded.
- With --book-library (a library holding the GeoTopo book), its summary with the bundled model on
  the GPU: wall time and model steps.
Each configuration loads in a child process, so its VRAM is its own and a crash is recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

BANDWIDTH_BYTES_S = 4.8e12  # H200 HBM3e, the vendor's figure
TOKENS = 128
CONTEXT = 8192
SHORT = "Write a long story about a lighthouse keeper and the storm that changed her life."
LONG_WORDS = 220  # a prompt of roughly 1,000 tokens: a question with retrieved passages


def _mib(value: float) -> float:
    return round(value / 2**20)


def _smi(query: str) -> str:
    try:
        return subprocess.run(
            ["nvidia-smi", query, "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=20
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def process_vram_mib(pid: int) -> float | None:
    """GPU memory nvidia-smi shows for one process (MiB); None where it lists no processes."""
    for line in _smi("--query-compute-apps=pid,used_memory").splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 2 and parts[0] == str(pid):
            return float(parts[1])
    return None


def card_vram_used_mib() -> float | None:
    out = _smi("--query-gpu=memory.used").split()
    return float(out[0]) if out else None


def run_llama_bench(binary: Path, model: Path) -> dict:
    command = [str(binary), "-m", str(model), "-p", "512", "-n", str(TOKENS), "-ngl", "99", "-fa", "1", "-o", "json"]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    rows = json.loads(done.stdout)
    result = {"command": " ".join(command[:1] + ["-m", model.name] + command[3:])}
    for row in rows:
        kind = "pp" if row.get("n_prompt") else "tg"
        result[f"{kind}_tps"] = round(row["avg_ts"], 1)
        result[f"{kind}_tps_stdev"] = round(row.get("stddev_ts", 0.0), 2)
    return result


def child_decode(model: Path, kv: str, repeats: int, tokens: int = TOKENS) -> dict:
    """In the child: load, then time streamed greedy requests the way DocDesk makes them."""
    from engine.backends.base import ChatRequest
    from engine.backends.llama_cpp import LlamaCppBackend

    started = time.perf_counter()
    backend = LlamaCppBackend(str(model), context=CONTEXT, gpu_layers=-1, flash_attention=True, kv_cache=kv)
    backend.warm_up()
    load_s = time.perf_counter() - started
    vram = process_vram_mib(os.getpid())
    card_used = card_vram_used_mib()

    def one(prompt: str) -> dict:
        backend.reset_native_timings()
        request = ChatRequest([{"role": "user", "content": prompt}], max_tokens=tokens, temperature=0.0)
        for _ in backend.stream_chat(request):
            pass
        native = backend.native_timings()
        s = request.stats
        return {
            "prompt_tokens": s.prompt_tokens,
            "completion_tokens": s.completion_tokens,
            "ttft_ms": round(s.ttft_ms, 1),
            "caller_tps": round(s.tokens_per_s, 2),
            "native_tps": round(native["decode_tokens"] / native["decode_ms"] * 1000, 2) if native["decode_ms"] else 0,
        }

    long_prompt = " ".join(f"passage{i % 97} word{i}" for i in range(LONG_WORDS)) + " Summarize the passages."
    cold = one(SHORT)
    cached = [one(SHORT) for _ in range(repeats)]  # the same prompt: llama.cpp reuses its KV prefix
    long_cold = one(long_prompt)
    backend.close()
    return {
        "kv_cache": kv,
        "load_s": round(load_s, 2),
        "vram_mib": vram,
        "card_used_mib": card_used,
        "cold_short": cold,
        "cached_short": cached,
        "cold_long": long_cold,
        "caller_tps_median": statistics.median(r["caller_tps"] for r in cached),
        "native_tps_median": statistics.median(r["native_tps"] for r in cached),
    }


def child_control(model: Path) -> dict:
    """In the child: the gguf package's reader, then a load of the same file in the same process."""
    from gguf import GGUFReader
    from llama_cpp import Llama

    reader = GGUFReader(str(model))
    assert reader.fields
    llm = Llama(model_path=str(model), n_gpu_layers=-1, flash_attn=True, n_ctx=2048, verbose=False)
    text = llm.create_completion("Hello", max_tokens=4, temperature=0.0)["choices"][0]["text"]
    return {"loaded": True, "text_chars": len(text)}


def child_cpu(repack: str) -> dict:
    """In the child: the bundled model on this machine's CPU alone (no layers, no ops offloaded),
    with llama.cpp's extra CPU buffer types on, off, or as DocDesk chooses (off on AMX CPUs)."""
    from engine.backends.base import ChatRequest
    from engine.backends.llama_cpp import LlamaCppBackend, cpu_has_amx

    choice = {"on": True, "off": False, "auto": None}[repack]
    backend = LlamaCppBackend(context=2048, gpu_layers=0, cpu_repack=choice)
    backend.settings["op_offload"] = False
    request = ChatRequest([{"role": "user", "content": "Say hello."}], max_tokens=16, temperature=0.0)
    text = "".join(backend.stream_chat(request))
    backend.close()
    return {
        "cpu_has_amx": cpu_has_amx(),
        "repack": backend.cpu_repack,
        "tokens": request.stats.completion_tokens,
        "text": text,
    }


def child_book(library_dir: Path) -> dict:
    from engine.backends.llama_cpp import LlamaCppBackend
    from engine.summarize import Summarizer
    from ingest.store.library import Library
    from tests.counting import CountingBackend

    library = Library(library_dir)
    doc = next(d for d in library.documents() if d.status == "indexed")
    backend = CountingBackend(LlamaCppBackend(gpu_layers=-1, flash_attention=True))
    backend.inner.warm_up()
    started = time.perf_counter()
    summary = Summarizer(library, backend).summarize(doc.id, "brief")
    wall = time.perf_counter() - started
    backend.close()
    library.close()
    return {
        "title": doc.title,
        "pages": doc.pages,
        "wall_s": round(wall, 1),
        "steps": summary.steps,
        "blocks": summary.blocks,
        "prompt_tokens": backend.prompt_tokens,
        "completion_tokens": backend.completion_tokens,
        "summary": summary.text,
    }


def in_child(*args: str, timeout: float = 600) -> dict:
    """Run this script's --child mode; a native crash comes back as its signal's name."""
    done = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, timeout=timeout)
    if done.returncode < 0:
        return {"crashed": signal.Signals(-done.returncode).name, "stderr_tail": done.stderr[-800:]}
    if done.returncode != 0:
        return {"failed": done.returncode, "stderr_tail": done.stderr[-1500:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path)
    parser.add_argument("--llama-bench", type=Path)
    parser.add_argument("--book-library", type=Path)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=TOKENS, help="tokens per request (128; fewer for a quick check)")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        kind, *rest = args.child
        if kind == "decode":
            result = child_decode(Path(rest[0]), rest[1], int(rest[2]), int(rest[3]))
        elif kind == "control":
            result = child_control(Path(rest[0]))
        elif kind == "cpu":
            result = child_cpu(rest[0])
        else:
            result = child_book(Path(rest[0]))
        print(json.dumps(result))
        return 0

    from engine.models.doctor import detect_gpus, vram_needed
    from engine.models.gguf_info import read_gguf

    gpus = detect_gpus()
    results: dict = {
        "gpu": gpus[0].name if gpus else None,
        "note": "synthetic 32B-shaped Q4_K_M GGUF with random weights: throughput only, its text is noise",
    }
    if args.model:
        shape = read_gguf(args.model)
        results["model"] = {"file": args.model.name, "bytes": shape.file_bytes, "layers": shape.layers}
        results["bandwidth_limit_tps"] = round(BANDWIDTH_BYTES_S / shape.file_bytes, 1)
        if args.llama_bench:
            results["llama_bench"] = run_llama_bench(args.llama_bench, args.model)
            results["llama_bench_tg_tps"] = results["llama_bench"].get("tg_tps")
        runs = {
            kv: in_child("decode", str(args.model), kv, str(args.repeats), str(args.tokens)) for kv in ("f16", "q8_0")
        }
        results["docdesk_runs"] = runs
        results["docdesk_decode_tps"] = {kv: r.get("caller_tps_median") for kv, r in runs.items()}
        results["docdesk_decode_tps_native"] = {kv: r.get("native_tps_median") for kv, r in runs.items()}
        # the process's own figure where nvidia-smi lists processes, else the card's use above idle
        results["vram_measured_mib"] = {kv: r.get("vram_mib") or r.get("card_delta_mib") for kv, r in runs.items()}
        results["vram_planned_mib"] = {kv: _mib(vram_needed(shape, CONTEXT, kv)) for kv in runs}
        if results.get("llama_bench_tg_tps"):
            results["docdesk_vs_llama_bench"] = {
                kv: round(tps / results["llama_bench_tg_tps"], 3)
                for kv, tps in results["docdesk_decode_tps"].items()
                if tps
            }
        results["control_gguf_reader_then_load"] = in_child("control", str(args.model))
    # The AMX question: llama.cpp's repacked CPU weights segfault on some AMX CPUs (llama.cpp #20824).
    results["cpu_extra_buffers"] = {choice: in_child("cpu", choice) for choice in ("auto", "on", "off")}
    if args.book_library:
        results["book"] = in_child("book", str(args.book_library), timeout=1200)
        results["book_summary_s"] = results["book"].get("wall_s")
    text = json.dumps(results, indent=2, ensure_ascii=False)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
