"""Retrieval on a held-out set DocDesk was never tuned on: CMRC 2018's dev articles (Chinese
Wikipedia, CC BY-SA 4.0; tests/eval/data/cmrc2018, README there), the `heldout` split.

    python tests/eval/eval_heldout.py [--split heldout|tune] [--limit N] [--json FILE]

Each article of both splits becomes one Markdown document (its title as the heading, its
paragraphs below) in a fresh library embedded with the default embedder, so the other split's
articles stand beside the asked one's as distractors; each of the split's questions counts as found within N tokens
when its answer string lies in the first N tokens (tiktoken cl100k, as the context counts them) of
the ranked passages, the measure of tests/eval/eval_retrieval.py. Nothing of this split may be
used to choose DocDesk's settings: `tune` is the split for that.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from tests.eval.eval_retrieval import BUDGETS, evaluate  # noqa: E402

DATA = HERE / "data" / "cmrc2018"


def write_documents(articles: list[dict], folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for number, article in enumerate(articles):
        path = folder / f"cmrc-{number:03d}.md"
        path.write_text(f"# {article['title']}\n\n" + "\n\n".join(article["paragraphs"]) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("heldout", "tune"), default="heldout")
    parser.add_argument("--limit", type=int, help="only the first N articles")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)

    def load(split: str) -> list[dict]:
        found = json.loads((DATA / f"cmrc2018_{split}.json").read_text(encoding="utf-8"))["articles"]
        return found[: args.limit] if args.limit else found

    articles = load(args.split)
    others = load("tune" if args.split == "heldout" else "heldout")  # distractors in the same library
    questions = [q for a in articles for q in a["questions"]]

    from app.desk.services import DocDesk
    from app.desk.settings import Settings

    with tempfile.TemporaryDirectory() as tmp:
        docs = write_documents(articles + others, Path(tmp) / "docs")
        desk = DocDesk(Settings(library=Path(tmp) / "library"))
        try:
            started = time.perf_counter()
            report = desk.add(docs)
            add_s = time.perf_counter() - started
            rows = desk.documents()
            result = evaluate(desk.retriever, {f"zh (CMRC 2018 {args.split})": questions})
        finally:
            desk.close()
    failed = len(report.failed)
    summary = {
        "split": args.split,
        "articles": len(articles),
        "distractor_articles": len(others),
        "documents_indexed": sum(r.status == "indexed" for r in rows),
        "failed": failed,
        "passages": sum(r.passages for r in rows),
        "add_s": round(add_s, 1),
        "embedder": "the default (settings without [embedding] model)",
        "results": result,
    }
    for name, row in result.items():
        within = ", ".join(
            f"{b}: {row['within'][str(b)]} ({row['within'][str(b)] / row['questions']:.2f})" for b in BUDGETS
        )
        print(
            f"{name}: {row['questions']} questions, {len(articles)} articles + {len(others)} others; found within {within}"
        )
        print(
            f"  {row['ms_per_question']:.0f} ms a question; the library: {summary['passages']} passages, added in {add_s:.0f} s"
        )
    if args.json:
        args.json.write_text(json.dumps(summary, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
