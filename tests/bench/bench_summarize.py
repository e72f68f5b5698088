"""Summary benchmark (run by `make bench`).

1. The 117-page GeoTopo book with the bundled model: wall time, model tokens per second, and a
   second run, which must come from the cache.
2. Map-step scheduling against the stand-in server (tests/engine/standin_server.py: a fixed
   delay per request, 4 served at once): the map step with max_concurrency=4 against 1.
   It measures DocDesk's scheduling, not a model.

    python tests/bench/bench_summarize.py [--skip-book] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
BOOK = ROOT / "tests" / "data" / "corpus" / "pdf-samples" / "009-pdflatex-geotopo" / "GeoTopo-komprimiert.pdf"


def bench_book(results: dict) -> None:
    from engine.backends.llama_cpp import LlamaCppBackend
    from engine.summarize import Summarizer
    from ingest.embedders.sentence_transformer import SentenceTransformerEmbedder
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library
    from tests.counting import CountingBackend

    with tempfile.TemporaryDirectory(prefix="docdesk-summary-") as tmp:
        library = Library(Path(tmp))
        Ingestor(library, SentenceTransformerEmbedder()).add([BOOK])
        doc = library.documents()[0]
        backend = CountingBackend(LlamaCppBackend())
        backend.inner.warm_up()
        summarizer = Summarizer(library, backend)

        def progress(p) -> None:
            eta = f", ~{p.eta_s:.0f} s left" if p.eta_s else ""
            print(f"  {p.stage}: {p.done}/{p.total} · {p.elapsed_s:.0f} s{eta}", file=sys.stderr, flush=True)

        started = time.perf_counter()
        first = summarizer.summarize(doc.id, "brief", on_progress=progress)
        wall = time.perf_counter() - started
        started = time.perf_counter()
        second = summarizer.summarize(doc.id, "brief")
        again = time.perf_counter() - started
        generated_s = wall  # the model is busy the whole run: in-process requests run one at a time
        results["book"] = {
            "pages": doc.pages,
            "blocks": first.blocks,
            "pieces": first.pieces,
            "steps": first.steps,
            "wall_s": round(wall, 1),
            "map_s": round(first.timings["map_ms"] / 1000, 1),
            "reduce_s": round(first.timings["reduce_ms"] / 1000, 1),
            "prompt_tokens": backend.prompt_tokens,
            "completion_tokens": backend.completion_tokens,
            "tokens_per_s_overall": round((backend.prompt_tokens + backend.completion_tokens) / generated_s, 1),
            "second_run_s": round(again, 3),
            "second_run_from_cache": f"{second.from_cache}/{second.steps}",
            "summary": first.text,
        }
        backend.close()
        library.close()


def bench_scheduling(results: dict, delay: float = 0.5, slots: int = 4) -> None:
    from engine.backends.openai_http import OpenAIBackend
    from engine.summarize import Summarizer
    from ingest.chunking import Chunker
    from ingest.embedders.sentence_transformer import SentenceTransformerEmbedder
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library
    from tests.counting import CountingBackend
    from tests.engine.standin_server import serve

    server = serve(0, delay, slots)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    embedder = SentenceTransformerEmbedder()
    try:
        with tempfile.TemporaryDirectory(prefix="docdesk-schedule-") as tmp:
            library = Library(Path(tmp))
            ingestor = Ingestor(library, embedder)
            ingestor.chunker = Chunker(embedder.token_offsets, embedder.max_tokens, block_tokens=1500)
            ingestor.add([BOOK])  # the book in 1,500-token blocks: many map requests
            doc = library.documents()[0]
            walls = {}
            for concurrency in (1, 4):
                library.conn.execute("DELETE FROM summary_cache")
                backend = CountingBackend(OpenAIBackend(url, "standin", max_concurrency=concurrency))
                summary = Summarizer(library, backend).summarize(doc.id)
                walls[concurrency] = (summary.timings["map_ms"] / 1000, backend.most_in_flight, summary.pieces)
            library.close()
    finally:
        server.shutdown()
    (one, _, pieces), (four, most, _) = walls[1], walls[4]
    results["scheduling"] = {
        "map_requests": pieces,
        "delay_s": delay,
        "server_slots": slots,
        "map_s_concurrency_1": round(one, 2),
        "map_s_concurrency_4": round(four, 2),
        "ratio": round(four / one, 3),
        "most_in_flight": most,
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-book", action="store_true")
    parser.add_argument("--json", metavar="OUT")
    args = parser.parse_args()
    from app.desk.logs import setup_logging

    setup_logging(folder=Path(tempfile.gettempdir()) / "docdesk-bench-logs")
    results: dict = {}
    bench_scheduling(results)
    print(json.dumps(results["scheduling"], indent=2), flush=True)
    if not args.skip_book:
        bench_book(results)
        print(json.dumps({k: v for k, v in results["book"].items() if k != "summary"}, indent=2))
        print(results["book"]["summary"])
    if args.json:
        Path(args.json).write_text(json.dumps(results, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
