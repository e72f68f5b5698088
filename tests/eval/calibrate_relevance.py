"""How well does the "nothing relevant" rule (engine/retrieval/relevance.py) separate questions?

    python tests/eval/calibrate_relevance.py [--library DIR] [--model NAME] [--json]

Relevant: the retrieval question sets (questions_en.json, questions_zh.json, and the cross-lingual
questions_zh_en.json, questions_en_zh.json), whose answers are in the library. Unrelated:
unrelated.json, a "calibration" list the bars were chosen on and a "held_out" list written
afterwards. Without --library it builds one from the eval's documents (tests/data/corpus,
assets/samples, tests/eval/data/rust-book) with `--model` (an `[embedding] model` setting; empty:
the default embedder). Prints each question's coverage, dense score and margin, then the shares.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def open_library(path: str | None, model: str | None = None):
    from ingest.embedding import make_embedder
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library
    from tests.eval.eval_retrieval import documents

    embedder = make_embedder(model)
    library = Library(Path(path) if path else Path(tempfile.mkdtemp(prefix="docdesk-eval-")))
    if not path:
        Ingestor(library, embedder).add(documents())
    return library, embedder


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--library")
    parser.add_argument("--model", help="an [embedding] model setting (default: the default embedder)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from engine.retrieval.relevance import dense_bar, judge
    from engine.retrieval.retrieve import HybridRetriever

    library, embedder = open_library(args.library, args.model)
    retriever = HybridRetriever(library, embedder)
    relevant = [q["q"] for lang in ("en", "zh") for q in json.loads((HERE / f"questions_{lang}.json").read_text())]
    across = [q["q"] for lang in ("zh_en", "en_zh") for q in json.loads((HERE / f"questions_{lang}.json").read_text())]
    unrelated = json.loads((HERE / "unrelated.json").read_text())
    groups = {"relevant": relevant, "relevant (across languages)": across}
    groups["unrelated (calibration)"] = unrelated["calibration"]
    groups["unrelated (held out)"] = unrelated["held_out"]
    report: dict = {}
    for name, questions in groups.items():
        rows = []
        for q in questions:
            query = retriever.query(q)
            r = judge(query, retriever.search(query, 12).hits, dense_bar(embedder.name))
            rows.append({"q": q, **r.as_dict()})
        want = name.startswith("relevant")
        right = sum(1 for row in rows if row["relevant"] == want)
        report[name] = {"questions": len(rows), "right": right, "share": right / len(rows), "rows": rows}
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return 0
    for name, group in report.items():
        print(f"\n{name}: {group['right']}/{group['questions']} = {group['share']:.0%} judged right")
        for row in sorted(group["rows"], key=lambda r: r["margin"]):
            mark = "ok " if row["relevant"] == name.startswith("relevant") else "BAD"
            print(
                f"  {mark} margin {row['margin']:+.2f}  coverage {row['coverage']:.2f}  dense {row['dense']:.2f}"
                f" (weight {row['dense_weight']:.2f})  {row['q']}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
