"""Answer quality with a real model: is the answer in a cited source, and in the answer's text?

    python tests/eval/eval_answers.py [--library DIR] [--model GGUF] [--url URL --served NAME] [--json]

Questions (answers.json, written by hand over tests/data/corpus and assets/samples) name a
string that a correct answer contains and the document it is in. For each: whether the
sources given to the model hold it, whether a source the answer cites holds it (and is the
named document), whether the answer's text holds it. The unrelated questions of
unrelated.json ("held_out") must be declined. Default model: the bundled SmolLM2-135M.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tests.eval.calibrate_relevance import open_library  # noqa: E402
from tests.eval.eval_retrieval import _squash  # noqa: E402


def evaluate(answerer, questions: dict, unrelated: list[str]) -> dict:
    report: dict = {}
    for lang, items in questions.items():
        rows = []
        for item in items:
            started = time.perf_counter()
            answer = answerer.generate(answerer.prepare(item["q"]))
            want = _squash(item["answer"])
            sources = [s.to_json() for s in answer.cited_sources()]
            cited = [s for s in sources if s["cited"]]
            rows.append(
                {
                    "q": item["q"],
                    "answer": answer.text,
                    "declined": not answer.prepared.relevant,
                    "in_sources": any(want in _squash(s["text"]) for s in sources),
                    "in_cited": any(
                        want in _squash(s["text"]) and item["doc"] in s["title"] + s["path"] for s in cited
                    ),
                    "page_right": any(
                        s["page"] == item.get("page", s["page"]) and item["doc"] in s["title"] for s in cited
                    ),
                    "in_text": want in _squash(answer.text),
                    "seconds": round(time.perf_counter() - started, 1),
                }
            )
        n = len(rows)
        report[lang] = {
            "questions": n,
            **{
                key: sum(r[key] for r in rows) / n
                for key in ("in_sources", "in_cited", "page_right", "in_text", "declined")
            },
            "rows": rows,
        }
    declined = [not answerer.prepare(q).relevant for q in unrelated]
    report["unrelated"] = {"questions": len(declined), "declined": sum(declined) / len(declined)}
    return report


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--library")
    parser.add_argument("--model", help="a GGUF file (default: the bundled SmolLM2)")
    parser.add_argument("--url", help="an OpenAI-compatible server instead of llama.cpp in process")
    parser.add_argument("--served", help="the served model name at --url")
    parser.add_argument("--json", metavar="OUT")
    args = parser.parse_args()
    from engine.answer import Answerer, AnswerSettings
    from engine.backends import LlmSettings, create_backend
    from engine.retrieval.retrieve import HybridRetriever

    library, embedder = open_library(args.library)
    llm = LlmSettings(backend="openai", url=args.url, model=args.served) if args.url else LlmSettings(model=args.model)
    backend = create_backend(llm)
    answerer = Answerer(HybridRetriever(library, embedder), backend, AnswerSettings(temperature=0.0))
    questions = json.loads((HERE / "answers.json").read_text(encoding="utf-8"))
    unrelated = json.loads((HERE / "unrelated.json").read_text(encoding="utf-8"))["held_out"]
    report = evaluate(answerer, questions, unrelated)
    report["model"] = f"{backend.name}:{Path(str(backend.model)).name}"
    for lang in ("en", "zh"):
        r = report[lang]
        print(
            f"{lang}: {r['questions']} questions · answer in the sources given {r['in_sources']:.0%} · "
            f"in a cited source of the right document {r['in_cited']:.0%} · cited page right {r['page_right']:.0%} · "
            f"in the answer text {r['in_text']:.0%} · wrongly declined {r['declined']:.0%}"
        )
    print(f"unrelated questions declined: {report['unrelated']['declined']:.0%} of {report['unrelated']['questions']}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    backend.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
