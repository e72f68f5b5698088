"""Retrieval on held-out sets DocDesk was never tuned on, per language pair, both splits.

    python tests/eval/eval_heldout.py [--split heldout|tune|both] [--sets zh,en,...] [--limit N]
                                      [--json FILE]

The sets (tests/eval/data, a README and a licence beside each; CC BY-SA 4.0):

    zh      CMRC 2018 dev: Chinese questions over Chinese Wikipedia articles
    en      XQuAD: English questions over English Wikipedia paragraphs (SQuAD v1.1 dev)
    zh→en   XQuAD: the same questions in Chinese over the English paragraphs
    en→zh   XQuAD: English questions over the paragraphs' Chinese translations

Two libraries, embedded with the default embedder: a Chinese one (CMRC's articles and XQuAD's
Chinese paragraphs, both splits) for zh and en→zh, an English one (XQuAD's English paragraphs,
both splits) for en and zh→en, so the other split's documents stand beside the asked one's as
distractors (and a Chinese question over English text never finds the parallel translation).

A question counts as found within N tokens (tiktoken cl100k) when its answer string lies in:
    passages               the first N tokens of the ranked passages, whole (the measure of
                           tests/eval/eval_retrieval.py and of the figures before the context did)
    context                the context an answer gets at a budget of N tokens
                           (engine/retrieval/context.py, each source's header counted): the
                           default, a source that does not fit whole going as its best window
                           of sentences within the room left
    context, whole passages  the same without windows: such a source is left out (as before)
The in-document order (engine/retrieval/proximity.py, HybridRetriever.order_within_documents,
not yet the default) is measured beside the fused order; search p50 counts the reordering.
Nothing of `heldout` may be used to choose DocDesk's settings: `tune` is the split for that.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from tests.eval.eval_retrieval import BUDGETS, _squash, window  # noqa: E402

DATA = HERE / "data"
SETS = ("zh", "en", "zh→en", "en→zh")
LIBRARY_OF = {"zh": "zh", "en→zh": "zh", "en": "en", "zh→en": "en"}
MODES = (
    "passages", "passages, in-document order", "context", "context, in-document order", "context, whole passages",
)  # fmt: skip
CANDIDATES = 12  # the hits an answer's context is built from (engine/answer.py, candidates)


def load(name: str, split: str) -> list[dict]:
    folder, stem = {"cmrc": ("cmrc2018", "cmrc2018"), "xquad": ("xquad", "xquad")}[name]
    return json.loads((DATA / folder / f"{stem}_{split}.json").read_text(encoding="utf-8"))["articles"]


def questions(split: str, limit: int | None) -> dict[str, list[dict]]:
    """{set: [{"q", "answer"}]}: the split's questions of each set."""
    cmrc, xquad = load("cmrc", split), load("xquad", split)
    if limit:
        cmrc, xquad = cmrc[:limit], xquad[:limit]
    xq = [q for a in xquad for q in a["questions"]]
    return {
        "zh": [{"q": q["q"], "answer": q["answer"]} for a in cmrc for q in a["questions"]],
        "en": [{"q": q["question_en"], "answer": q["answer_en"]} for q in xq],
        "zh→en": [{"q": q["question_zh"], "answer": q["answer_en"]} for q in xq],
        "en→zh": [{"q": q["question_en"], "answer": q["answer_zh"]} for q in xq],
    }


def write_documents(folder: Path, limit: int | None) -> dict[str, list[Path]]:
    """Both splits' documents, one Markdown file per article, in the two libraries' folders."""
    docs: dict[str, list[Path]] = {"zh": [], "en": []}

    def write(lib: str, name: str, heading: str | None, paragraphs: list[str]) -> None:
        path = folder / lib / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        head = f"# {heading}\n\n" if heading else ""
        path.write_text(head + "\n\n".join(paragraphs) + "\n", encoding="utf-8")
        docs[lib].append(path)

    for split in ("heldout", "tune"):
        cmrc, xquad = load("cmrc", split), load("xquad", split)
        for n, article in enumerate(cmrc[:limit] if limit else cmrc):
            write("zh", f"cmrc-{split}-{n:03d}", article["title"], article["paragraphs"])
        for n, article in enumerate(xquad[:limit] if limit else xquad):
            write("en", f"xquad-en-{split}-{n:02d}", article["title_en"].replace("_", " "), article["paragraphs_en"])
            # No heading: XQuAD's Chinese file keeps the English page title, which would hand an
            # English question its words.
            write("zh", f"xquad-zh-{split}-{n:02d}", article["title_zh"], article["paragraphs_zh"])
    return docs


def measure(desk, items: list[dict]) -> dict:
    """Found within each budget, per mode, and the search's time per question."""
    from engine.answer import SOURCE_HEADER_TOKENS
    from engine.retrieval.context import build_sources
    from engine.retrieval.proximity import reorder_within_documents
    from ingest.tokens import block_encoding

    encoding = block_encoding()
    cost = lambda text: len(encoding.encode_ordinary(text)) + SOURCE_HEADER_TOKENS  # noqa: E731
    retriever, library = desk.retriever, desk.library
    found = {mode: dict.fromkeys(BUDGETS, 0) for mode in MODES}
    search_ms = []
    for item in items:
        started = time.perf_counter()
        query = retriever.query(item["q"])
        retriever.order_within_documents = False  # the fused order; the in-document order below
        hits = retriever.search(query, k=20).hits
        reordered = reorder_within_documents(query, hits)
        search_ms.append((time.perf_counter() - started) * 1000)  # as search does it: reordering included
        answer = _squash(item["answer"])
        for budget in BUDGETS:
            for mode, ranked in (("passages", hits), ("passages, in-document order", reordered)):
                found[mode][budget] += answer in _squash(window([h.passage.text for h in ranked], budget))
            for mode, ranked, trim in (
                ("context", hits, True), ("context, in-document order", reordered, True),
                ("context, whole passages", hits, False),
            ):  # fmt: skip
                sources = build_sources(library, ranked[:CANDIDATES], budget, cost, query, trim=trim)
                found[mode][budget] += answer in _squash("\n".join(s.text for s in sources))
    return {
        "questions": len(items),
        "within": {mode: {str(b): n for b, n in counts.items()} for mode, counts in found.items()},
        "search_ms_p50": round(statistics.median(search_ms), 1),
    }


def run_split(split: str, sets: list[str], limit: int | None, desks: dict) -> dict:
    asked = questions(split, limit)
    return {name: measure(desks[LIBRARY_OF[name]], asked[name]) for name in sets}


def print_split(split: str, results: dict) -> None:
    print(f"\n{split}: answers found within 300 / 500 / 800 / 1,500 tokens (share of the set's questions)")
    for name, row in results.items():
        n = row["questions"]
        for mode in MODES:
            shares = " / ".join(f"{row['within'][mode][str(b)] / n:.2f}" for b in BUDGETS)
            print(f"  {name:6} {mode:28} {shares}   ({n} questions)")
        print(f"  {name:6} search p50 {row['search_ms_p50']} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("heldout", "tune", "both"), default="both")
    parser.add_argument("--sets", default=",".join(SETS), help="comma-separated, of: " + ", ".join(SETS))
    parser.add_argument("--limit", type=int, help="only the first N articles of each source and split")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    sets = [s for s in args.sets.split(",") if s]
    splits = ["heldout", "tune"] if args.split == "both" else [args.split]
    from app.desk.services import DocDesk
    from app.desk.settings import Settings

    report: dict = {"libraries": {}, "splits": {}}
    with tempfile.TemporaryDirectory() as tmp:
        docs = write_documents(Path(tmp) / "docs", args.limit)
        desks = {}
        try:
            for lib in sorted({LIBRARY_OF[s] for s in sets}):
                desks[lib] = DocDesk(Settings(library=Path(tmp) / f"library-{lib}"))
                started = time.perf_counter()
                added = desks[lib].add(docs[lib])
                rows = desks[lib].documents()
                report["libraries"][lib] = {
                    "documents": sum(r.status == "indexed" for r in rows), "failed": len(added.failed),
                    "passages": sum(r.passages for r in rows), "add_s": round(time.perf_counter() - started, 1),
                }  # fmt: skip
            for split in splits:
                report["splits"][split] = run_split(split, sets, args.limit, desks)
                print_split(split, report["splits"][split])
        finally:
            for desk in desks.values():
                desk.close()
    print(f"\nlibraries: {report['libraries']}")
    if args.json:
        args.json.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
