"""A small library in five languages with a stand-in embedder (no model is loaded), for the tests
of a question's way: its language, its Query and its stages (test_question_language.py,
test_question_stages.py)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from engine.retrieval.retrieve import HybridRetriever
from ingest.cjk import CJK_RANGES
from ingest.pipeline import Ingestor
from ingest.store.library import Library

_TOKEN = re.compile(rf"[{CJK_RANGES}]|\w+")

DOCUMENTS = {
    "austria-en.md": "# Austria\n\nThe official language of Austria is German (德语 in Chinese). Vienna is its capital.",
    "austria-zh.md": "# 奥地利\n\n奥地利的官方语言是德语。维也纳是奥地利的首都。",
    "austria-ja.md": "# オーストリア\n\nオーストリアの公用語はドイツ語です。首都はウィーンです。",
    "austria-ko.md": "# 오스트리아\n\n오스트리아의 공용어는 독일어입니다. 수도는 빈입니다.",
    "austria-de.md": "# Österreich\n\nDie Amtssprache von Österreich ist Deutsch. Die Hauptstadt ist Wien.",
}


class WordHashEmbedder:
    """A stand-in embedder: each word (each CJK character) hashed into one of 256 dimensions, the
    counts normalised. Texts that share words are near; enough to retrieve by, with no model."""

    name = "word-hash-256"
    max_tokens = 256
    multilingual = True
    dim = 256

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in _TOKEN.finditer(text)]

    def encode(self, texts: list[str]):
        import numpy as np

        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in _TOKEN.findall(text.lower()):
                vectors[row, hashlib.blake2b(token.encode(), digest_size=2).digest()[0]] += 1.0
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-9)


def languages_retriever(folder: Path) -> HybridRetriever:
    """DOCUMENTS written to `folder` and added to a library there (read in process)."""
    for name, text in DOCUMENTS.items():
        (folder / name).write_text(text, encoding="utf-8")
    library = Library(folder / "library")
    embedder = WordHashEmbedder()
    report = Ingestor(library, embedder, read_in_subprocess=False).add([folder / name for name in DOCUMENTS])
    assert not report.failed
    return HybridRetriever(library, embedder)
