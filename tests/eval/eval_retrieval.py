"""Retrieval quality: does the answer lie in the first 1,500 tokens of retrieved text?

    python tests/eval/eval_retrieval.py [--library DIR] [--json]

Without --library it builds a fresh library from tests/data/corpus and assets/samples.
The question sets (questions_en.json, questions_zh.json) were written by hand over those
documents; each names a string that a correct retrieval must contain.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

BUDGET_TOKENS = 1500


def load_questions() -> dict[str, list[dict]]:
    return {lang: json.loads((HERE / f"questions_{lang}.json").read_text(encoding="utf-8")) for lang in ("en", "zh")}


def _squash(text: str) -> str:
    # PDF line breaks fall anywhere, inside CJK runs too: compare without whitespace.
    import unicodedata

    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text)).lower()


def retrieved_window(retriever, question: str, budget: int = BUDGET_TOKENS) -> str:
    from ingest.tokens import block_encoding

    encoding = block_encoding()
    parts: list[str] = []
    used = 0
    for hit in retriever.search(question, k=20).hits:
        ids = encoding.encode_ordinary(hit.passage.text)
        room = budget - used
        if room <= 0:
            break
        parts.append(encoding.decode(ids[:room]))
        used += min(len(ids), room)
    return "\n".join(parts)


def evaluate(retriever, questions: dict[str, list[dict]]) -> dict:
    report: dict = {}
    for lang, items in questions.items():
        misses = []
        started = time.perf_counter()
        for item in items:
            window = retrieved_window(retriever, item["q"])
            if _squash(item["answer"]) not in _squash(window):
                misses.append(item["q"])
        report[lang] = {
            "questions": len(items),
            "found": len(items) - len(misses),
            "share": (len(items) - len(misses)) / len(items),
            "misses": misses,
            "ms_per_question": (time.perf_counter() - started) * 1000 / len(items),
        }
    return report


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--library")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from engine.retrieve import HybridRetriever
    from ingest.embedding import SentenceTransformerEmbedder
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library

    embedder = SentenceTransformerEmbedder()
    folder = Path(args.library) if args.library else Path(tempfile.mkdtemp(prefix="docdesk-eval-"))
    library = Library(folder)
    if not args.library:
        Ingestor(library, embedder).add([ROOT / "tests" / "data" / "corpus", ROOT / "assets" / "samples"])
    report = evaluate(HybridRetriever(library, embedder), load_questions())
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        for lang, r in report.items():
            print(
                f"{lang}: {r['found']}/{r['questions']} = {r['share']:.0%} answers within the first {BUDGET_TOKENS} tokens"
            )
            for miss in r["misses"]:
                print(f"   miss: {miss}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
