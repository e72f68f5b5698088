"""Issue 16's first probe: the bundled MiniLM in PyTorch fp32 (what DocDesk runs today) against
the same model under bfloat16 autocast, on the passages of `shared/corpus/pdf-samples`.

    python tests/bench/bench_embedders.py

On a CPU with AMX (or AVX-512 BF16) the matrix products run in bf16 hardware; elsewhere bf16 is
emulated and slower, so any use of it must check the CPU first. Cosine is each passage's bf16
vector against its fp32 one (1.0: the same direction). Prints one JSON line.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def corpus_passages() -> list[str]:
    from ingest.embedding import SentenceTransformerEmbedder
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library

    with tempfile.TemporaryDirectory() as folder:
        library = Library(Path(folder))
        Ingestor(library, SentenceTransformerEmbedder()).add([ROOT.parent / "shared" / "corpus" / "pdf-samples"])
        texts = [row[0] for row in library.conn.execute("SELECT text FROM passages ORDER BY rowid")]
        library.close()
    return texts


def main() -> None:
    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer

    from ingest.embedding import bundled_model_path

    texts = corpus_passages()
    model = SentenceTransformer(str(bundled_model_path()), device="cpu")
    model.encode(texts[:16])  # warm
    started = time.perf_counter()
    fp32 = model.encode(texts, batch_size=32, normalize_embeddings=True)
    fp32_s = time.perf_counter() - started
    with torch.autocast("cpu", dtype=torch.bfloat16):
        model.encode(texts[:16])
        started = time.perf_counter()
        bf16 = np.asarray(model.encode(texts, batch_size=32, normalize_embeddings=True), dtype=np.float32)
        bf16_s = time.perf_counter() - started
    cosine = (bf16 * fp32).sum(axis=1)
    flags = Path("/proc/cpuinfo").read_text().split() if Path("/proc/cpuinfo").exists() else []
    print(
        json.dumps(
            {
                "passages": len(texts),
                "threads": torch.get_num_threads(),
                "cpu_amx": "amx_bf16" in flags,
                "cpu_avx512_bf16": "avx512_bf16" in flags,
                "fp32_s": round(fp32_s, 2),
                "bf16_autocast_s": round(bf16_s, 2),
                "speedup": round(fp32_s / bf16_s, 2),
                "cosine_min": round(float(cosine.min()), 5),
                "cosine_mean": round(float(cosine.mean()), 5),
            }
        )
    )


if __name__ == "__main__":
    main()
