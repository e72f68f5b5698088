"""Passage embeddings on the CPU (models loaded lazily): sentence-transformers models, and the
default, MiniLM beside a multilingual model in one vector (`make_embedder`, ingest/embedders/)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ingest.embedders.sentence_transformer import BUNDLED_MODEL, DEFAULT_BATCH_SIZE, SentenceTransformerEmbedder

if TYPE_CHECKING:
    import numpy as np

# What an empty `[embedding] model` setting means: MiniLM and the multilingual Universal Sentence
# Encoder side by side in one vector, their cosines weighted 0.3 and 0.7. Chosen by
# tests/eval/eval_retrieval.py (the README's table): English and Chinese questions as good as or
# better than MiniLM alone at every budget, Chinese questions over English documents and the reverse
# found 2-3x as often, for ~1.3x MiniLM's embedding time.
DEFAULT_MODEL = "all-MiniLM-L6-v2*0.3+use-multilingual-v3*0.7"


class Embedder(Protocol):
    """What the library needs from an embedding model."""

    name: str
    max_tokens: int
    multilingual: bool

    @property
    def dim(self) -> int: ...

    def token_offsets(self, text: str) -> list[tuple[int, int]]: ...

    def encode(self, texts: list[str]) -> np.ndarray: ...


def encode_distinct(embedder: Embedder, texts: list[str], known: dict | None = None):
    """`embedder.encode(texts)`, each distinct text encoded once. A spreadsheet that repeats a
    row a thousand times gives thousands of passages but a few distinct ones (an ODS attack: 2,492
    passages, 301 distinct), and embedding is most of an add's time. `known` (text -> vector)
    carries what earlier calls for the same document encoded."""
    import numpy as np

    known = {} if known is None else known
    fresh = list(dict.fromkeys(t for t in texts if t not in known))
    encoded = embedder.encode(fresh) if fresh else None
    for text, vector in zip(fresh, encoded if encoded is not None else [], strict=True):
        known[text] = vector
    if encoded is not None and len(fresh) == len(texts):
        return encoded  # nothing repeated: the encoder's own array, not a copy
    if not texts:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    return np.stack([known[t] for t in texts])


def make_embedder(
    model: str | None = None, batch_size: int = DEFAULT_BATCH_SIZE, multilingual: bool = False, precision: str = "auto"
):
    """The embedder for an `[embedding] model` setting: empty for the default; a bundled model's
    name (all-MiniLM-L6-v2, use-multilingual-v3); bundled names side by side in one vector,
    "a*0.3+b*0.7" (the default's form) or "a+b" (equal weights); or the path of a local
    sentence-transformers folder (`multilingual`: whether it understands more than English).
    `precision` is the sentence-transformers models' ("auto", "fp32", "bf16")."""
    from ingest.embedders.multilingual import USE_MODEL, ConcatEmbedder, USEEmbedder, parse_concat

    model = model or DEFAULT_MODEL
    named = {
        USE_MODEL: USEEmbedder,
        BUNDLED_MODEL: lambda: SentenceTransformerEmbedder(None, batch_size, precision=precision),
    }
    concat = parse_concat(model)
    if concat is not None and all(name in named for name in concat[0]):
        return ConcatEmbedder([named[name]() for name in concat[0]], concat[1])
    if model in named:
        return named[model]()
    return SentenceTransformerEmbedder(model, batch_size, multilingual, precision)
