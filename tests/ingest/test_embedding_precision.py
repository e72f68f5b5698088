"""bfloat16 embeddings (on a CPU that multiplies bf16 in hardware) point where fp32 ones do."""

from __future__ import annotations

import numpy as np
import pytest

from ingest.embedders.sentence_transformer import SentenceTransformerEmbedder

pytestmark = pytest.mark.models

TEXTS = [
    "Ein topologischer Raum heißt kompakt, wenn jede offene Überdeckung eine endliche Teilüberdeckung hat.",
    "显卡驱动版本应当与 CUDA 版本匹配，否则推理框架会报错。",
    "Here's to the crazy ones, the misfits, the rebels, the troublemakers.",
]


def test_the_precision_can_be_forced_and_bf16_vectors_match_fp32_ones():
    full = SentenceTransformerEmbedder(precision="fp32")  # [embedding] precision, DOCDESK_EMBED_PRECISION
    assert full.precision == "fp32"
    reference = full.encode(TEXTS)
    half = SentenceTransformerEmbedder(precision="bf16")
    assert half.precision == "bf16"
    vectors = half.encode(TEXTS)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert (vectors * reference).sum(axis=1).min() > 0.999
