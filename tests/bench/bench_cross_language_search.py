"""What CC-CEDICT keywords and the alternating dense ranking add to a Chinese question's search.

    python tests/bench/bench_cross_language_search.py [--library DIR] [--rounds 3]

Builds the eval library (tests/eval: the corpus, the sample guides, the Rust book chapters) with
the default embedder unless --library names one, then times `HybridRetriever.search` for every
Chinese question of the eval sets (questions_zh.json, questions_zh_en.json) with
`cross_language` off and on, taking turns round by round so both see the same machine. Also
the dictionary's first load. Writes tests/bench/results/cross-language-search-cpu.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> int:
    from engine.retrieval import zh_en_dictionary
    from engine.retrieval.retrieve import HybridRetriever
    from tests.eval.calibrate_relevance import open_library

    parser = argparse.ArgumentParser()
    parser.add_argument("--library", help="an eval library (default: build one)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    library, embedder = open_library(args.library)
    retriever = HybridRetriever(library, embedder)
    retriever.vectors.refresh()
    embedder.encode(["warm up"])
    started = time.perf_counter()
    zh_en_dictionary.segment("预热")
    load_ms = (time.perf_counter() - started) * 1000
    eval_dir = ROOT / "tests" / "eval"
    questions = [
        q["q"]
        for name in ("questions_zh.json", "questions_zh_en.json")
        for q in json.loads((eval_dir / name).read_text())
    ]
    times: dict[str, list[float]] = {"off": [], "on": []}
    for _ in range(args.rounds):
        for mode in ("off", "on"):
            retriever.cross_language = mode == "on"
            for question in questions:
                started = time.perf_counter()
                retriever.search(question, k=20)
                times[mode].append((time.perf_counter() - started) * 1000)
    summary = {
        "questions": len(questions),
        "rounds": args.rounds,
        "passages": library.passage_count(),
        "dictionary_load_ms": round(load_ms, 1),
        **{f"search_ms_median_{m}": round(statistics.median(t), 1) for m, t in times.items()},
        **{f"search_ms_p90_{m}": round(sorted(t)[int(0.9 * len(t))], 1) for m, t in times.items()},
    }
    print(json.dumps(summary, indent=1))
    out = ROOT / "tests" / "bench" / "results" / "cross-language-search-cpu.json"
    out.write_text(json.dumps(summary, indent=1) + "\n")
    library.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
