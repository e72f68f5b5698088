"""Ingest benchmark (run by `make bench`; numbers go in the closing note, never in a timed test).

1. Ingest tests/data/corpus/pdf-samples into a fresh library: wall time and time per stage.
2. The embed stage against SentenceTransformer.encode (fp32 PyTorch) called directly on the same
   passages at its best batch size; `embed_speedup_vs_torch` is DocDesk's embedder (bfloat16 on
   a CPU that has it) against that.
3. Re-adding the unchanged 117-page book through the CLI (a fresh process, as a user runs it).
4. `docdesk list` on a library of 1,000 documents.
"""

from __future__ import annotations

import json
import os
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
CORPUS = ROOT / "tests" / "data" / "corpus" / "pdf-samples"
BOOK = CORPUS / "009-pdflatex-geotopo" / "GeoTopo-komprimiert.pdf"


def cli(library: Path, *args: str) -> float:
    env = dict(os.environ, DOCDESK_HOME=str(library))
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "app", *args], env=env, check=False, capture_output=True)
    return time.perf_counter() - started


def bench_corpus(work: Path, repeats: int = 2) -> dict:
    """Best of `repeats` for both sides: this VM's speed drifts by 20-30% from minute to minute."""
    from ingest.embedders.sentence_transformer import SentenceTransformerEmbedder
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library

    embedder = SentenceTransformerEmbedder()
    started = time.perf_counter()
    embedder.warm_up()
    load_s = time.perf_counter() - started
    runs = []
    for attempt in range(repeats):
        library = Library(work / f"corpus-{attempt}")
        started = time.perf_counter()
        report = Ingestor(library, embedder).add([CORPUS])
        runs.append((time.perf_counter() - started, report))
        passages = [r[0] for r in library.conn.execute("SELECT text FROM passages ORDER BY id")]
        library.close()
    wall, report = min(runs, key=lambda run: run[0])
    timings = report.timings
    # For comparison: reading inline, one stage after the other (no reader process).
    library = Library(work / "corpus-serial")
    started = time.perf_counter()
    serial = Ingestor(library, embedder, read_in_subprocess=False).add([CORPUS])
    serial_wall = time.perf_counter() - started
    library.close()

    # The same passages through sentence-transformers directly, in fp32 PyTorch (what
    # SentenceTransformer.encode does by default), at each batch size; and DocDesk's embedder.
    # A model of its own: DocDesk's holds bfloat16 weights on a CPU that has bf16 hardware.
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(embedder.path), device="cpu", local_files_only=True)
    reference.max_seq_length = embedder.model.max_seq_length
    direct: dict[int, float] = {}
    docdesk_s = float("inf")
    for _ in range(repeats):
        for batch in (8, 16, 32):
            t = time.perf_counter()
            reference.encode(passages, batch_size=batch, normalize_embeddings=True, show_progress_bar=False)
            direct[batch] = min(direct.get(batch, float("inf")), time.perf_counter() - t)
        t = time.perf_counter()
        embedder.encode(passages)
        docdesk_s = min(docdesk_s, time.perf_counter() - t)
    best_batch = min(direct, key=direct.get)
    return {
        "files_added": len(report.added),
        "files_failed": len(report.failed),
        "passages": len(passages),
        "model_load_s": round(load_s, 2),
        "wall_s": round(wall, 2),
        "all_walls_s": [round(w, 2) for w, _ in runs],
        "stages_s": {k: round(v, 2) for k, v in timings.items()},
        "direct_encode_s": {b: round(s, 2) for b, s in direct.items()},
        "best_direct_batch": best_batch,
        "embed_precision": embedder.precision,
        "docdesk_encode_s": round(docdesk_s, 2),
        "embed_speedup_vs_torch": round(direct[best_batch] / docdesk_s, 2),
        "embed_throughput_vs_direct": round(direct[best_batch] / timings["embed"], 3),
        "wall_vs_embed_stage": round(wall / timings["embed"], 3),
        "wall_vs_direct_encode": round(wall / direct[best_batch], 3),
        "serial": {
            "wall_s": round(serial_wall, 2),
            "stages_s": {k: round(v, 2) for k, v in serial.timings.items()},
            "embed_throughput_vs_direct": round(direct[best_batch] / serial.timings["embed"], 3),
            "wall_vs_direct_encode": round(serial_wall / direct[best_batch], 3),
        },
    }


def bench_readd(work: Path) -> dict:
    library = work / "book"
    cli(library, "add", str(BOOK))
    runs = [cli(library, "add", str(BOOK)) for _ in range(5)]
    return {"readd_unchanged_book_s": {"median": round(statistics.median(runs), 3), "max": round(max(runs), 3)}}


def bench_list_1000(work: Path) -> dict:
    import numpy as np

    from ingest.records import Block, Chunks, Page, Passage, ReadResult
    from ingest.store.library import FileRecord, IndexedDocument, Library

    folder = work / "thousand"
    library = Library(folder)
    rng = np.random.default_rng(0)
    for n in range(1000):
        text = f"Document {n} talks about topic {n % 37} in some detail. " * 20
        pages = [Page(1, text)]
        chunks = Chunks(
            [Block(0, 0, len(text), 1, 1, 300, text)],
            [Passage(0, i, 0, len(text), 1, 1, text) for i in range(3)],
        )
        vectors = rng.standard_normal((3, 384)).astype(np.float32)
        digest = f"{n:064x}"
        library.store_indexed(
            IndexedDocument(
                digest,
                FileRecord(f"/docs/{n}.txt", digest, len(text), 0.0),
                ReadResult("text", pages, f"Doc {n}"),
                chunks,
                vectors,
                "en",
                "all-MiniLM-L6-v2",
            )
        )
    library.close()
    runs = [cli(folder, "list", "--json") for _ in range(5)]
    return {"list_1000_docs_s": {"median": round(statistics.median(runs), 3), "max": round(max(runs), 3)}}


def main() -> int:
    from app.desk.logs import setup_logging

    setup_logging(folder=Path(tempfile.gettempdir()) / "docdesk-bench-logs")  # pypdf's warnings to the log
    with tempfile.TemporaryDirectory(prefix="docdesk-bench-") as tmp:
        work = Path(tmp)
        results = {**bench_corpus(work), **bench_readd(work), **bench_list_1000(work)}
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
