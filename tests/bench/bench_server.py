"""The llama_server backend: aggregate decode rate at 1, 4, 8 and 16 concurrent requests through
DocDesk's client, and the map step of a book's summary at max_concurrency 1 and 8.

    python tests/bench/bench_server.py --model MODEL.gguf [--book-library DIR] [--slots 16] \\
        [--concurrency 1 4 8 16] [--tokens 128] [--out results.json]

With the synthetic 32B GGUF (tests/bench/synthetic_gguf.py) the numbers are speed only and the
summaries noise; with the bundled model the summary is real. Each summary run works on a fresh
copy of the library, so nothing comes from the summary cache. Overlap is read from the server's
own /slots while the requests run, not assumed. Prints the JSON it writes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


class Capped:
    """A backend seen with a lower max_concurrency (the summary's map step at 1 and at N)."""

    def __init__(self, backend, limit: int) -> None:
        self.inner, self.limit = backend, limit
        self.name, self.model = backend.name, backend.model

    context_window = property(lambda self: self.inner.context_window)
    max_concurrency = property(lambda self: self.limit)
    on_gpu = property(lambda self: self.inner.on_gpu)
    slow_streaks = property(lambda self: self.inner.slow_streaks)

    @property
    def capabilities(self):
        from dataclasses import replace

        # Its own limit, and no judge: it offers no yes_probability.
        return replace(self.inner.capabilities, parallel_slots=self.limit, logprobs=False)

    def warm_up(self) -> None:
        self.inner.warm_up()

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def stream_chat(self, request):
        return self.inner.stream_chat(request)

    def close(self) -> None:
        pass


def concurrent_rate(server, clients: int, tokens: int) -> dict:
    from engine.backends.base import ChatRequest

    busy, stop = [0], threading.Event()

    def watch() -> None:
        while not stop.is_set():
            busy[0] = max(busy[0], sum(1 for s in server.slots() if s.get("is_processing")))
            time.sleep(0.02)

    def one(n: int) -> int:
        request = ChatRequest(
            [{"role": "user", "content": f"Story {n}: write a long story about a lighthouse."}],
            max_tokens=tokens,
            temperature=0.0,
        )
        for _ in server.stream_chat(request):
            pass
        return request.stats.completion_tokens

    watcher = threading.Thread(target=watch)
    watcher.start()
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        counts = list(pool.map(one, range(clients)))
    wall = time.perf_counter() - started
    stop.set()
    watcher.join()
    return {"clients": clients, "tokens": sum(counts), "wall_s": round(wall, 2),
            "aggregate_tps": round(sum(counts) / wall, 1), "most_slots_busy": busy[0]}  # fmt: skip


def map_step(server, library_dir: Path, limit: int) -> dict:
    from engine.summarize import Summarizer
    from ingest.store.library import Library

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "library"
        shutil.copytree(library_dir, copy)
        library = Library(copy)
        doc = next(d for d in library.documents() if d.status == "indexed")
        started = time.perf_counter()
        summary = Summarizer(library, Capped(server, limit)).summarize(doc.id, "brief")
        result = {
            "max_concurrency": limit,
            "map_s": round(summary.timings["map_ms"] / 1000, 1),
            "wall_s": round(time.perf_counter() - started, 1),
            "steps": summary.steps,
            "summary_head": summary.text[:300],
        }
        library.close()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--book-library", type=Path)
    parser.add_argument("--llama-server", help="the executable (default: as DocDesk finds it)")
    parser.add_argument("--slots", type=int, default=16)
    parser.add_argument("--context", type=int, default=8192)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8, 16])
    parser.add_argument("--map-concurrency", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--kv-cache", choices=["f16", "q8_0"], help="default: the doctor's plan (q8_0 on a GPU)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)

    from engine.backends.llama_server import LlamaServer, LlamaServerSettings

    logs = Path(tempfile.mkdtemp(prefix="docdesk-server-logs-"))
    server = LlamaServer(
        LlamaServerSettings(
            args.model, args.llama_server, slots=args.slots, context=args.context, kv_cache=args.kv_cache
        ),
        logs,
    ).start()
    try:
        results: dict = {"model": args.model.name, "command": " ".join(server.command), "plan": vars(server.plan)}
        runs = [concurrent_rate(server, c, args.tokens) for c in args.concurrency if c <= args.slots]
        results["server_runs"] = runs
        results["server_tps_by_concurrency"] = {str(r["clients"]): r["aggregate_tps"] for r in runs}
        if args.book_library:
            maps = [map_step(server, args.book_library, n) for n in args.map_concurrency]
            results["book_map_runs"] = maps
            results["book_map_s_by_concurrency"] = {str(m["max_concurrency"]): m["map_s"] for m in maps}
    finally:
        server.close()
    text = json.dumps(results, indent=2, ensure_ascii=False)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
