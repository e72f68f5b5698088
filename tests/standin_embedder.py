"""A stand-in embedder for the tests that do not judge retrieval quality: words (and each CJK
character) hashed into a fixed-size vector, so a passage's cosine with a question grows with the
words they share. It satisfies ingest.embedding.Embedder, is deterministic across processes, loads
nothing and embeds thousands of passages a second, so stores, `serve` and the façade are tested
through their real code paths without the minutes the bundled models cost on two cores
(Haystack tests its stores with random embeddings in the same spirit).

Tests that judge meaning (a paraphrase found, the relevance bar) keep the real model, marked `models`.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

NAME = "docdesk-test-hashing-256"
DIM = 256
MAX_TOKENS = 254  # as the bundled all-MiniLM-L6-v2: 256 positions less [CLS] and [SEP]
_CJK = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff"
# One token per CJK character (as BERT's tokenizer cuts them), per run of other letters and
# digits, and per punctuation mark.
_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+|[^\w\s]")


class HashingEmbedder:
    max_tokens = MAX_TOKENS
    multilingual = False  # as the session's real embedder: retrieval trusts it little for CJK

    def __init__(self, name: str = NAME, dim: int = DIM) -> None:
        self.name = name
        self._dim = dim
        self.encoded = 0  # texts embedded so far: a test can see that nothing was embedded again

    @property
    def dim(self) -> int:
        return self._dim

    def warm_up(self) -> None:
        """Nothing to load."""

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        return [match.span() for match in _TOKEN.finditer(text)]

    def _bucket(self, token: str) -> tuple[int, float]:
        digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        return value % self._dim, 1.0 if value >> 63 else -1.0

    def encode(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        matrix = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for match in _TOKEN.finditer(text):
                token = match.group().lower()
                if token.isalnum():  # punctuation carries no meaning here
                    column, sign = self._bucket(token)
                    matrix[row, column] += sign
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        self.encoded += len(texts)
        return matrix / np.where(norms > 0, norms, 1.0)  # a text of no words stays the zero vector
