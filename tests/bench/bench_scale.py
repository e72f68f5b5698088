"""Search at a million passages (issue 16; not part of `make bench`: ~10 min and 5.4 GB here).

    python tests/bench/bench_scale.py [--passages 1000000] [--library DIR]

1. Builds the library as bench_search does: the real corpus passages (their text and real
   embeddings) repeated with perturbed vectors, 100 per synthetic document, committed one
   document at a time, the dense index refreshed every 10,000 passages as ingest does (so it
   crosses the approximate threshold and is retrained in the background on the way). With
   --library, a library built before is reused.
2. In a fresh process at once: opens the library and answers the first search
   (`reopen_right_after_build_s`, the embedding model loaded before the clock starts) while the
   kernel is still writing out the gigabytes just built. Then, once `sync` has written them (what
   a later start finds), in another fresh process: the same (`reopen_s`), then times hybrid
   search (query embedding, dense, FTS5 keyword, fusion) over the bench and eval queries, and
   keyword search alone on queries of common words, as search runs it (within the posting
   budget) and with every word ranked; `rss_mb` is that process's peak memory.
3. `recall_at_10`: the dense top 10 of the library's index against exact search over every
   embedding in SQLite, on the same queries. `index_build_s`: the approximate index built from
   SQLite from nothing (a damaged file), in the background as the app would.

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Words that match a large share of passages (English and German; the corpus has both).
COMMON_QUERIES = ["data space information", "system", "die Menge und der Raum", "text page document"]


def queries() -> list[str]:
    from tests.bench.bench_search import QUERIES

    questions = list(QUERIES)
    for name in ("questions_en.json", "questions_zh.json"):
        questions += [item["q"] for item in json.loads((ROOT / "tests" / "eval" / name).read_text())]
    return questions


def build(folder: Path, target: int) -> float:
    from ingest.embedders.sentence_transformer import SentenceTransformerEmbedder
    from ingest.store.vectors import VectorIndex
    from tests.bench import bench_search

    embedder = SentenceTransformerEmbedder()
    started = time.perf_counter()
    library = bench_search.build_library(folder, embedder, 0)  # the real corpus: the passages to repeat
    vectors = VectorIndex(library, embedder)  # one per library and process, as in the app
    for step in range(10_000, target + 10_000, 10_000):
        bench_search.add_synthetic(library, embedder.name, min(step, target))
        vectors.refresh()  # as ingest does after each batch of documents
        progress = vectors.rebuild_progress()
        print(
            f"{library.passage_count()} passages, {time.perf_counter() - started:.0f} s"
            + (f", index: {progress.stage} {progress.fraction:.0%}" if progress else ""),
            file=sys.stderr,
            flush=True,
        )
    vectors.wait_for_rebuild()  # a training still running finishes, and adds what came since
    vectors.refresh()
    vectors.close()
    library.close()
    return time.perf_counter() - started


def best_of_3_ms(run, *args) -> float:
    runs = []
    for _ in range(3):
        t = time.perf_counter()
        run(*args)
        runs.append((time.perf_counter() - t) * 1000)
    return round(min(runs), 1)


def reopen(folder: Path, embedder):
    """(library, retriever, seconds): the library opened and its first search answered."""
    from engine.retrieval.retrieve import HybridRetriever
    from ingest.store.library import Library

    started = time.perf_counter()
    library = Library(folder)
    retriever = HybridRetriever(library, embedder)
    retriever.search("What does the library hold?", k=10)
    return library, retriever, time.perf_counter() - started


def reopen_at_once(folder: Path) -> float:
    """Reopening in a fresh process while the kernel still writes out the gigabytes just built."""
    from ingest.embedders.sentence_transformer import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder()
    embedder.encode(["warm up"])
    library, _, seconds = reopen(folder, embedder)
    library.close()
    return seconds


def measure(folder: Path) -> dict:
    """Run in a fresh process: reopen, latencies, keyword timings, the dense top 10s, peak RSS."""
    import numpy as np

    from ingest.embedders.sentence_transformer import SentenceTransformerEmbedder
    from ingest.keywords import query_tokens

    embedder = SentenceTransformerEmbedder()
    embedder.encode(["warm up"])
    library, retriever, reopen_s = reopen(folder, embedder)
    approximate = retriever.vectors.index() is not None and not hasattr(retriever.vectors.index(), "id_map")
    questions = queries()
    latencies, parts = [], {"dense_ms": [], "keyword_ms": [], "fuse_ms": []}
    for _ in range(3):
        for question in questions:
            t = time.perf_counter()
            result = retriever.search(question, k=10)
            latencies.append((time.perf_counter() - t) * 1000)
            for key in parts:
                parts[key].append(result.timings[key])
    # Keyword search alone on common words: as search runs it (the words it can afford to rank),
    # and with every word ranked, the cost the posting budget avoids.
    budgeted, every_word = {}, {}
    for text in COMMON_QUERIES:
        budgeted[text] = best_of_3_ms(retriever.keyword_candidates, text, 50)
        every_word[text] = best_of_3_ms(library.keyword_search, query_tokens(text), 50)
    dense_top = [[i for i, _ in retriever.vectors.search(embedder.encode([q])[0], 10)] for q in questions]
    ordered = sorted(latencies)
    return {
        "passages": library.passage_count(),
        "approximate_index": approximate,
        "p50_ms": round(statistics.median(latencies), 1),
        "p95_ms": round(ordered[int(len(ordered) * 0.95) - 1], 1),
        "median_parts_ms": {k: round(statistics.median(v), 1) for k, v in parts.items()},
        "keyword_common_words_ms": budgeted,
        "keyword_all_words_ms": every_word,
        "reopen_s": round(reopen_s, 2),
        "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "dense_top": dense_top,
        "query_vectors": np.asarray(embedder.encode(questions)).tolist(),
    }


def recall_at_10(folder: Path, dense_top: list[list[int]], query_vectors) -> float:
    """Exact inner-product top 10 over every embedding in SQLite, against the index's top 10."""
    import faiss
    import numpy as np

    from ingest.store.library import Library

    library = Library(folder)
    ids, parts = [], []
    for batch_ids, blobs in library.embeddings(library.passage_ids("all-MiniLM-L6-v2"), batch=20_000):
        ids += batch_ids
        parts.append(np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1))
    library.close()
    exact = faiss.IndexFlatIP(parts[0].shape[1])
    for part in parts:
        exact.add(part)
    _, found = exact.search(np.asarray(query_vectors, dtype=np.float32), 10)
    ids = np.asarray(ids)
    hits = [len(set(ids[row].tolist()) & set(top)) / 10 for row, top in zip(found, dense_top, strict=True)]
    return float(np.mean(hits))


def index_build_s(folder: Path) -> float:
    """The approximate index made from SQLite alone (the file gone), timed to the end."""
    from ingest.embedders.sentence_transformer import SentenceTransformerEmbedder
    from ingest.store.library import Library
    from ingest.store.vectors import VectorIndex

    library = Library(folder)
    vectors = VectorIndex(library, SentenceTransformerEmbedder())
    kept = vectors.path.with_suffix(".kept")
    vectors.path.rename(kept)
    try:
        started = time.perf_counter()
        vectors.index()  # None: building in the background
        vectors.wait_for_rebuild()
        took = time.perf_counter() - started
        vectors.close()
    finally:
        # The library now names the file just written: the old one back would be distrusted (its
        # checksum differs) and rebuilt at the next open. Only when nothing was written is it restored.
        if vectors.path.exists():
            kept.unlink()
        else:
            kept.replace(vectors.path)
        library.close()
    return took


def fresh_process(flag: str, folder: Path):
    child = subprocess.run([sys.executable, __file__, flag, str(folder)], capture_output=True, text=True, check=True)
    return json.loads(child.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--passages", type=int, default=1_000_000)
    parser.add_argument("--library", type=Path, help="build here, or reuse what is here")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # the fresh process
    parser.add_argument("--reopen", type=Path, help=argparse.SUPPRESS)  # likewise
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return 0
    if args.reopen:
        print(json.dumps(reopen_at_once(args.reopen)))
        return 0
    from app.desk.logs import setup_logging

    setup_logging(folder=Path(tempfile.gettempdir()) / "docdesk-bench-logs")
    folder = args.library or Path(tempfile.mkdtemp(prefix="docdesk-scale-"))
    build_s = build(folder, args.passages)
    right_after_build = fresh_process("--reopen", folder)
    os.sync()  # what a later start finds: the library written out, the disk idle
    measured = fresh_process("--measure", folder)
    recall = recall_at_10(folder, measured.pop("dense_top"), measured.pop("query_vectors"))
    result = {
        "passages": measured.pop("passages"),
        "p50_ms": measured.pop("p50_ms"),
        "p95_ms": measured.pop("p95_ms"),
        "recall_at_10": round(recall, 4),
        "index_build_s": round(index_build_s(folder), 1),
        "reopen_s": measured.pop("reopen_s"),
        "reopen_right_after_build_s": round(right_after_build, 2),
        "rss_mb": measured.pop("rss_mb"),
        "library_build_s": round(build_s),
        **measured,
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
