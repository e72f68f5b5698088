"""Ingest of the test corpus with each embedding model, side by side in one run.

    python tests/bench/bench_ingest_embedders.py [--models NAME,...] [--repeats 2] [--json FILE]

`tests/data/corpus/pdf-samples` (the corpus `bench_ingest.py` times) is ingested into a fresh
library by `Ingestor.add` for each model, the models taking turns in every round (this VM's speed
drifts by 20-30% from minute to minute, so turns and the best of the rounds), each model loaded and
warm before its first round. Names as `ingest.embedding.make_embedder` takes them; the first is
the baseline every ratio is against. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
CORPUS = ROOT / "tests" / "data" / "corpus" / "pdf-samples"


def ingest_once(embedder, folder: Path) -> tuple[float, dict]:
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library

    library = Library(folder)
    started = time.perf_counter()
    report = Ingestor(library, embedder).add([CORPUS])
    wall = time.perf_counter() - started
    passages = library.conn.execute("SELECT count(*) FROM passages").fetchone()[0]
    library.close()
    return wall, {"passages": passages, "stages": {k: round(v, 2) for k, v in report.timings.items()}}


def main() -> None:
    from ingest.embedding import make_embedder

    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="all-MiniLM-L6-v2,use-multilingual-v3,all-MiniLM-L6-v2|use-multilingual-v3")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    names = [n for n in args.models.split(",") if n]
    embedders = {}
    for name in names:
        embedders[name] = make_embedder(name)
        started = time.perf_counter()
        embedders[name].warm_up()
        print(f"{name}: loaded in {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    runs: dict[str, list[float]] = {n: [] for n in names}
    detail: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="docdesk-bench-") as work:
        for attempt in range(args.repeats):
            for number, name in enumerate(names):
                wall, detail[name] = ingest_once(embedders[name], Path(work) / f"{attempt}-{number}")
                runs[name].append(round(wall, 2))
                print(f"round {attempt + 1}: {name} {wall:.2f} s", file=sys.stderr, flush=True)
    baseline = min(runs[names[0]])
    result = {
        "corpus": str(CORPUS.relative_to(ROOT)),
        "cpus": os.cpu_count(),
        "models": {
            n: {"best_s": min(runs[n]), "runs_s": runs[n], "vs_first": round(min(runs[n]) / baseline, 2), **detail[n]}
            for n in names
        },
    }
    text = json.dumps(result, indent=2)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
