"""The bundled MiniLM in PyTorch fp32 against the same model under bfloat16 autocast and with its
weights in bfloat16 (what DocDesk runs on a CPU with bf16 hardware), on the passages of
`tests/data/corpus/pdf-samples`, at DocDesk's batch size.

    python tests/bench/bench_embedders.py

On a CPU with AMX (or AVX-512 BF16) the matrix products run in bf16 hardware; elsewhere bf16 is
emulated and slower, so any use of it must check the CPU first. Cosine is each passage's bf16
vector against its fp32 one (1.0: the same direction); `cosine_*` are the bf16 weights'.
Prints one JSON line.
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
    from ingest.embedders.sentence_transformer import SentenceTransformerEmbedder
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library

    with tempfile.TemporaryDirectory() as folder:
        library = Library(Path(folder))
        Ingestor(library, SentenceTransformerEmbedder()).add([ROOT / "tests" / "data" / "corpus" / "pdf-samples"])
        texts = [row[0] for row in library.conn.execute("SELECT text FROM passages ORDER BY rowid")]
        library.close()
    return texts


def main() -> None:
    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer

    from ingest.embedders.sentence_transformer import bundled_model_path

    texts = corpus_passages()
    path = str(bundled_model_path())

    def timed_encode(model, batch_size: int = 8):
        model.encode(texts[:16], batch_size=batch_size)  # warm
        started = time.perf_counter()
        vectors = np.asarray(model.encode(texts, batch_size=batch_size, normalize_embeddings=True), np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)  # as DocDesk's embedder does
        return time.perf_counter() - started, vectors

    model = SentenceTransformer(path, device="cpu")
    fp32_s, fp32 = timed_encode(model)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        autocast_s, autocast = timed_encode(model)
    bf16_s, bf16 = timed_encode(SentenceTransformer(path, device="cpu").to(torch.bfloat16))
    autocast_cosine = (autocast * fp32).sum(axis=1)
    cosine = (bf16 * fp32).sum(axis=1)
    flags = Path("/proc/cpuinfo").read_text().split() if Path("/proc/cpuinfo").exists() else []
    print(
        json.dumps(
            {
                "passages": len(texts),
                "threads": torch.get_num_threads(),
                "cpu_amx": "amx_bf16" in flags,
                "cpu_avx512_bf16": "avx512_bf16" in flags,
                "batch_size": 8,
                "fp32_s": round(fp32_s, 2),
                "bf16_autocast_s": round(autocast_s, 2),
                "bf16_weights_s": round(bf16_s, 2),
                "speedup_autocast": round(fp32_s / autocast_s, 2),
                "speedup_bf16_weights": round(fp32_s / bf16_s, 2),
                "autocast_cosine_min": round(float(autocast_cosine.min()), 5),
                "cosine_min": round(float(cosine.min()), 5),
                "cosine_mean": round(float(cosine.mean()), 5),
            }
        )
    )


if __name__ == "__main__":
    main()
