"""The same ingest in LlamaIndex, for the README's side-by-side figure (not part of `make bench`:
LlamaIndex is not a DocDesk dependency).

    python tests/bench/bench_llamaindex.py      # a Python with llama-index-core,
                                                # llama-index-readers-file, llama-index-embeddings-huggingface

What a LlamaIndex user writes for "index this folder": SimpleDirectoryReader over
`tests/data/corpus/pdf-samples` (its default readers: pypdf for PDFs), then
VectorStoreIndex.from_documents with its default SentenceSplitter, embedding with the same bundled
all-MiniLM-L6-v2 on the CPU through sentence-transformers (LlamaIndex's HuggingFaceEmbedding, in
fp32, its default). The model is loaded before the clock starts, as in bench_ingest.py; best of 2.
Prints one JSON line.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
CORPUS = ROOT / "tests" / "data" / "corpus" / "pdf-samples"


def main() -> int:
    import llama_index.core
    from llama_index.core import SimpleDirectoryReader, VectorStoreIndex
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    from ingest.embedders.sentence_transformer import bundled_model_path

    embed_model = HuggingFaceEmbedding(model_name=str(bundled_model_path()), device="cpu")
    embed_model.get_text_embedding("warm up")
    walls, nodes, documents = [], 0, 0
    for _ in range(2):
        started = time.perf_counter()
        docs = SimpleDirectoryReader(str(CORPUS), recursive=True).load_data()
        index = VectorStoreIndex.from_documents(docs, embed_model=embed_model)
        walls.append(time.perf_counter() - started)
        documents, nodes = len(docs), len(index.docstore.docs)
    print(
        json.dumps(
            {
                "llama_index_core": llama_index.core.__version__,
                "documents": documents,  # LlamaIndex makes one per PDF page
                "nodes": nodes,
                "wall_s": round(min(walls), 2),
                "all_walls_s": [round(w, 2) for w in walls],
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
