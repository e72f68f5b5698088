"""llama.cpp's threads on this machine: decode and prompt tokens/s of the bundled model in process for
threads 1 and 2 and threads_batch 1 and 2, quiet and under a concurrent CPU load, side by side.

    python tests/bench/bench_threads.py [--reps 5] [--loads quiet,busy,embedder] [--out FILE]

Loads: `quiet` (nothing else runs), `busy` (one process spinning on one core: the window, a PDF
being read), `embedder` (DocDesk's real embedder encoding passages in another process, as while a
folder is being added). Each configuration is its own LlamaCppBackend (engine/backends/llama_cpp.py,
n_threads and n_threads_batch), the configurations take turns within each repetition so drift hits
them alike, and every prompt starts with a fresh nonce so llama.cpp's prompt cache never skips it.
Decode and prompt rates are llama.cpp's own counts (llama_perf_context); the medians are printed
as a table and written as JSON (default tests/bench/results/threads-cpu.json).

The model is the bundled SmolLM2-135M (Q4_1), a 135M demo model: a 7B-32B model spends far more
time per token in matrix work, so the numbers say which thread counts win on this machine, not
what a big model decodes at.

Measured on this project's 2-core AMD EPYC (KVM, no SMT), `python tests/bench/bench_threads.py`
(5 repetitions, 64 decoded tokens and a ~480-token prompt each; medians, min-max in brackets):

| load | threads | threads_batch | decode t/s | prompt t/s |
| --- | --- | --- | --- | --- |
| quiet | 1 | 1 | 61.3 (58.1-66.0) | 145.3 (131.8-150.6) |
| quiet | 1 | 2 | 63.2 (58.4-65.5) | 248.7 (138.6-280.8) |
| quiet | 2 | 1 | 55.6 (39.2-70.4) | 146.3 (139.8-149.7) |
| quiet | 2 | 2 | 53.0 (26.1-68.0) | 209.1 (133.3-281.7) |
| busy | 1 | 1 | 59.1 (45.8-67.8) | 80.9 (59.4-139.1) |
| busy | 1 | 2 | 51.6 (38.8-57.1) | 96.0 (78.2-145.2) |
| busy | 2 | 1 | 41.8 (30.3-42.7) | 142.2 (78.0-148.2) |
| busy | 2 | 2 | 36.1 (31.3-42.4) | 116.1 (68.0-149.3) |
| embedder | 1 | 1 | 29.7 (21.0-55.8) | 63.7 (48.5-144.4) |
| embedder | 1 | 2 | 30.6 (21.5-63.9) | 73.9 (66.4-140.1) |
| embedder | 2 | 1 | 35.0 (25.7-40.8) | 59.2 (43.5-108.9) |
| embedder | 2 | 2 | 32.4 (29.0-45.8) | 70.4 (67.6-148.7) |

So the default (engine/models/threads.py) decodes on the physical cores less one and reads
prompts on all CPUs: here threads 1, threads_batch 2. Decode depends on `threads` only and the
prompt on `threads_batch` only, so each column is four samples of two settings; the spread under
load is wide, and the embedder load slows every setting about alike.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

CONFIGS = ((1, 1), (1, 2), (2, 1), (2, 2))  # (threads, threads_batch)
PASSAGE = (
    "The lighthouse keeper logged the weather every four hours: wind speed, visibility, the state of "
    "the sea and the ships that passed. In winter the entries grew shorter and the storms longer. "
)
SPIN = "import time\nwhile True:\n    sum(i * i for i in range(10000))\n"
EMBED = """
import sys, time
sys.path.insert(0, {root!r})
from ingest.embedders.sentence_transformer import SentenceTransformerEmbedder
model = SentenceTransformerEmbedder()
model.warm_up()
texts = [{passage!r} * 3 + str(i) for i in range(16)]
print("ready", flush=True)
while True:
    model.encode(texts)
"""


def start_load(kind: str) -> subprocess.Popen | None:
    if kind == "quiet":
        return None
    if kind == "busy":
        load = subprocess.Popen([sys.executable, "-c", SPIN])
        time.sleep(0.5)
        return load
    code = EMBED.format(root=str(ROOT), passage=PASSAGE)
    load = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    line = load.stdout.readline()  # the embedder is loaded and encoding
    if "ready" not in line:
        load.kill()
        raise RuntimeError(f"the embedder load did not start: {line!r}")
    time.sleep(1.0)
    return load


def stop_load(load: subprocess.Popen | None) -> None:
    if load is not None:
        load.kill()
        load.wait()


def one_run(backend, max_tokens: int) -> tuple[float, float]:
    from engine.backends.base import ChatRequest

    prompt = f"[{uuid.uuid4().hex}] " + PASSAGE * 12 + "\nWrite a long story about the lighthouse keeper."
    request = ChatRequest([{"role": "user", "content": prompt}], max_tokens=max_tokens, temperature=0.0)
    backend.reset_native_timings()
    for _ in backend.stream_chat(request):
        pass
    t = backend.native_timings()
    decode = t["decode_tokens"] / t["decode_ms"] * 1000 if t["decode_ms"] else 0.0
    prompt_rate = t["prompt_tokens"] / t["prompt_ms"] * 1000 if t["prompt_ms"] else 0.0
    return decode, prompt_rate


def measure(loads: list[str], reps: int, max_tokens: int) -> list[dict]:
    from engine.backends.llama_cpp import LlamaCppBackend

    backends = {c: LlamaCppBackend(context=2048, threads=c[0], threads_batch=c[1]) for c in CONFIGS}
    for backend in backends.values():
        backend.warm_up()
        one_run(backend, 8)
    rows = []
    try:
        for kind in loads:
            load = start_load(kind)
            runs: dict = {c: [] for c in CONFIGS}
            try:
                for _ in range(reps):
                    for config, backend in backends.items():
                        runs[config].append(one_run(backend, max_tokens))
            finally:
                stop_load(load)
            for (threads, batch), results in runs.items():
                decode = [d for d, _ in results]
                prompt = [p for _, p in results]
                rows.append(
                    {
                        "load": kind,
                        "threads": threads,
                        "threads_batch": batch,
                        "decode_tps": round(statistics.median(decode), 1),
                        "decode_tps_range": [round(min(decode), 1), round(max(decode), 1)],
                        "prompt_tps": round(statistics.median(prompt), 1),
                        "prompt_tps_range": [round(min(prompt), 1), round(max(prompt), 1)],
                    }
                )
    finally:
        for backend in backends.values():
            backend.close()
    return rows


def table(rows: list[dict]) -> str:
    lines = [
        "| load | threads | threads_batch | decode t/s (median, min-max) | prompt t/s (median, min-max) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        d, p = r["decode_tps_range"], r["prompt_tps_range"]
        lines.append(
            f"| {r['load']} | {r['threads']} | {r['threads_batch']} | {r['decode_tps']} ({d[0]}-{d[1]}) "
            f"| {r['prompt_tps']} ({p[0]}-{p[1]}) |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=64, help="tokens decoded per run")
    parser.add_argument("--loads", default="quiet,busy,embedder")
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "bench" / "results" / "threads-cpu.json")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from engine.models.threads import physical_cores, plan_threads, usable_cpus

    started = time.perf_counter()
    rows = measure(args.loads.split(","), args.reps, args.max_tokens)
    plan = plan_threads()
    result = {
        "model": "SmolLM2-135M-Instruct.Q4_1.gguf (bundled, 135M demo model)",
        "machine": {"physical_cores": physical_cores(), "usable_cpus": usable_cpus(), "cpu": _cpu_name()},
        "reps": args.reps,
        "decode_tokens_per_run": args.max_tokens,
        "rows": rows,
        "default_on_this_machine": {"threads": plan.threads, "threads_batch": plan.threads_batch, "why": plan.source},
        "seconds": round(time.perf_counter() - started, 1),
    }
    print(table(rows))
    print(f"default here: threads={plan.threads} threads_batch={plan.threads_batch} ({plan.source})")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


if __name__ == "__main__":
    raise SystemExit(main())
