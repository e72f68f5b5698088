"""`ask` overhead: the time from a question to the model's first input, on 100,000 passages.

That is retrieval (query embedding, FAISS, FTS5, fusion), the relevance check and the
token-budgeted context with the model's own tokenizer; the model is loaded beforehand, as
it is in a running app. Run by `make bench`:

    python tests/bench/bench_answer.py
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.bench_search import QUERIES, build_library  # noqa: E402

QUESTIONS = [*QUERIES, "What is the official language of Austria?", "V100 支持 bf16 吗？"]


def main() -> int:
    from app.desk.logs import setup_logging

    setup_logging(folder=Path(tempfile.gettempdir()) / "docdesk-bench-logs")
    from engine.answer import Answerer
    from engine.backends.llama_cpp import LlamaCppBackend
    from engine.retrieval.retrieve import HybridRetriever
    from ingest.embedders.sentence_transformer import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder()
    with tempfile.TemporaryDirectory(prefix="docdesk-answer-") as tmp:
        library = build_library(Path(tmp), embedder)
        retriever = HybridRetriever(library, embedder)
        retriever.warm_up()
        backend = LlamaCppBackend()
        backend.warm_up()
        answerer = Answerer(retriever, backend)
        for question in QUESTIONS[:2]:
            answerer.prepare(question)  # first-use costs (SQLite pages, tokenizer) out of the numbers
        runs: dict[str, list[float]] = {"prepare_ms": [], "retrieve_ms": [], "context_ms": []}
        sources = []
        for _ in range(5):
            for question in QUESTIONS:
                prepared = answerer.prepare(question)
                for key in runs:
                    runs[key].append(prepared.timings[key])
                sources.append(len(prepared.sources))
        prepare = sorted(runs["prepare_ms"])
        if "--profile" in sys.argv:  # where the time of prepare() goes
            import cProfile
            import pstats

            profiler = cProfile.Profile()
            profiler.enable()
            for question in QUESTIONS:
                answerer.prepare(question)
            profiler.disable()
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(12)
        print(
            json.dumps(
                {
                    "passages": library.passage_count(),
                    "questions": len(prepare),
                    "median_ms": {k: round(statistics.median(v), 1) for k, v in runs.items()},
                    "p95_prepare_ms": round(prepare[int(len(prepare) * 0.95) - 1], 1),
                    "max_prepare_ms": round(prepare[-1], 1),
                    "median_sources": statistics.median(sources),
                    "context_tokens": answerer.context_tokens,
                },
                indent=2,
            )
        )
        backend.close()
        library.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
