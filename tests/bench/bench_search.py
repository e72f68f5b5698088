"""Search benchmark over a library of 100,000 passages (run by `make bench`).

The passages are the real corpus passages (text and real embeddings), repeated with small
perturbations of their vectors to reach 100k: index size and posting-list lengths are what
search time depends on. Queries are embedded for real on every call, as a user's would be.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
TARGET = 100_000
QUERIES = [
    "Who are the crazy ones?",
    "topologischer Raum Definition",
    "What should errors never do?",
    "驱动版本",
    "How do I add an encrypted PDF?",
    "kompakt Überdeckung",
    "显卡驱动版本需要注意什么？",
    "reciprocal rank fusion",
    "Hausdorff space neighbourhoods",
    "blind text information",
]


def build_library(folder: Path, embedder, target: int = TARGET):
    """The corpus and the samples, then synthetic documents of real passages up to `target` passages."""
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library

    library = Library(folder)
    if library.passage_count() == 0:
        Ingestor(library, embedder).add([ROOT / "tests" / "data" / "corpus", ROOT / "assets" / "samples"])
    add_synthetic(library, embedder.name, target)
    return library


def add_synthetic(library, embed_model: str, target: int) -> None:
    """Synthetic documents of 100 real passages each (perturbed real vectors) up to `target` passages."""
    import numpy as np

    from ingest.records import Block, Chunks, Page, Passage, ReadResult
    from ingest.store.library import FileRecord, IndexedDocument

    rows = library.conn.execute(
        "SELECT p.text, p.embedding FROM passages p JOIN documents d ON d.id = p.doc_id "
        "WHERE d.id NOT LIKE 'synthetic%' ORDER BY p.id"
    ).fetchall()
    texts = [r[0] for r in rows]
    base = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    per_doc = 100
    n = library.passage_count()
    doc = library.conn.execute("SELECT count(*) FROM documents WHERE id LIKE 'synthetic%'").fetchone()[0]
    rng = np.random.default_rng(doc)
    while n < target:
        picks = rng.integers(0, len(texts), per_doc)
        vectors = base[picks] + rng.normal(0, 0.02, (per_doc, base.shape[1])).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        passages, offset = [], 0
        for i, pick in enumerate(picks):  # one block of the passages in a row, as a real document has
            text = texts[pick]
            passages.append(Passage(0, i, offset, offset + len(text), 1 + i // 10, 1 + i // 10, text))
            offset += len(text) + 2
        block_text = "\n\n".join(texts[pick] for pick in picks)
        pages = [Page(k + 1, "") for k in range(per_doc // 10)]
        digest = f"synthetic{doc:055d}"
        library.store_indexed(
            IndexedDocument(
                digest,
                FileRecord(f"/synthetic/{doc}.pdf", digest, 1, 0.0),
                ReadResult("pdf", pages, f"Synthetic {doc}"),
                Chunks([Block(0, 0, len(block_text), 1, per_doc // 10, 8000, block_text)], passages),
                vectors,
                "en",
                embed_model,
            )
        )
        n += per_doc
        doc += 1


def main() -> int:
    from app.desk.logs import setup_logging

    setup_logging(folder=Path(tempfile.gettempdir()) / "docdesk-bench-logs")  # pypdf's warnings to the log
    from engine.retrieval.retrieve import HybridRetriever
    from ingest.embedders.sentence_transformer import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder()
    with tempfile.TemporaryDirectory(prefix="docdesk-search-") as tmp:
        started = time.perf_counter()
        library = build_library(Path(tmp), embedder)
        build_s = time.perf_counter() - started
        retriever = HybridRetriever(library, embedder)
        t = time.perf_counter()
        retriever.warm_up()  # loads or rebuilds vectors.faiss from SQLite
        index_s = time.perf_counter() - t
        latencies, parts = [], {"dense_ms": [], "keyword_ms": [], "fuse_ms": []}
        for _ in range(5):
            for query in QUERIES:
                t = time.perf_counter()
                result = retriever.search(query, k=10)
                latencies.append((time.perf_counter() - t) * 1000)
                for key in parts:
                    parts[key].append(result.timings[key])
        print(
            json.dumps(
                {
                    "passages": library.passage_count(),
                    "build_library_s": round(build_s, 1),
                    "faiss_build_s": round(index_s, 2),
                    "queries": len(latencies),
                    "median_ms": round(statistics.median(latencies), 1),
                    "p95_ms": round(sorted(latencies)[int(len(latencies) * 0.95) - 1], 1),
                    "median_parts_ms": {k: round(statistics.median(v), 1) for k, v in parts.items()},
                    "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 0),
                },
                indent=2,
            )
        )
        library.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
