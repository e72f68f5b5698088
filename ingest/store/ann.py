"""Which FAISS index a library of a given size gets, and the few operations both kinds share.

Measured on real corpus embeddings with perturbed copies (tests/bench/bench_scale.py, and the
probe whose figures the README gives): exact search over 200,000 passages takes 28 ms a query
on two cores and 135 ms over 1,000,000, while an IVF index answers in under a millisecond with
recall@10 of 0.998 against exact search. HNSW built as fast but found only 40-53% of the exact
top 10 on the same data (near-duplicate passages defeat its greedy graph walk), and it cannot
remove a vector, which every re-indexed document needs. So: exact below APPROXIMATE_FROM
passages, IVF above it.

The IVF lists hold 8-bit scalar-quantized residuals (a quarter of the memory and file size of
float vectors); the best candidates are then scored exactly against the float embeddings in
SQLite (VectorIndex.search), which gives back what quantizing cost in recall.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

APPROXIMATE_FROM = 50_000  # exact search costs ~7 ms here on two cores: past it, IVF pays off
EXACT_BELOW = APPROXIMATE_FROM // 2  # a library shrunk this far goes back to exact search
NPROBE = 48  # lists visited per query: recall@10 >= 0.99 from 50k to 1M passages (bench_scale)
RERANK = 200  # candidates scored exactly: a query asks for at most 50
TRAINING_SAMPLE_PER_LIST = 48  # FAISS warns below 39; more buys no recall and costs minutes
MAX_ITERATIONS = 12  # k-means iterations: recall is flat from ~10 on


def lists_for(count: int) -> int:
    """IVF lists for `count` passages: about 4·√n (FAISS's guideline), at least 64."""
    return max(64, int(4 * math.sqrt(count)))


def wants_approximate(count: int, index=None) -> bool:
    """Whether a library of `count` passages should search an IVF index (with hysteresis: one
    that has one keeps it until it shrinks below EXACT_BELOW, so it does not flip back and forth)."""
    if index is not None and is_approximate(index):
        return count >= EXACT_BELOW
    return count >= APPROXIMATE_FROM


def is_approximate(index) -> bool:
    import faiss

    return isinstance(index, faiss.IndexIVF)


def outgrown(index, count: int) -> bool:
    """An IVF index trained for far fewer passages (or far more) than it now holds: its lists
    are too long (or too short), so it is trained again (in the background)."""
    if not is_approximate(index):
        return wants_approximate(count)
    return not (lists_for(count) / 2 <= index.nlist <= lists_for(count) * 2) or not wants_approximate(count, index)


def new_exact(dim: int):
    import faiss

    return faiss.IndexIDMap2(faiss.IndexFlatIP(dim))


def new_approximate(sample: np.ndarray, count: int):
    """An empty IVF index trained on `sample` for a library of about `count` passages."""
    import faiss

    dim = sample.shape[1]
    nlist = min(lists_for(count), max(1, len(sample) // 8))
    quantizer = faiss.IndexFlatIP(dim)
    index = faiss.IndexIVFScalarQuantizer(
        quantizer, dim, nlist, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT, True
    )
    index.cp.niter = MAX_ITERATIONS
    index.train(sample)
    index.nprobe = min(NPROBE, nlist)
    return index


def sample_size(count: int) -> int:
    return min(count, lists_for(count) * TRAINING_SAMPLE_PER_LIST)


def ids_of(index) -> np.ndarray:
    """The passage ids an index holds, sorted."""
    import faiss
    import numpy as np

    if index.ntotal == 0:
        return np.zeros(0, dtype=np.int64)
    if not is_approximate(index):
        return np.sort(faiss.vector_to_array(index.id_map))
    lists = index.invlists
    parts = []
    for number in range(index.nlist):
        size = lists.list_size(number)
        if size:
            parts.append(faiss.rev_swig_ptr(lists.get_ids(number), size).copy())
    return np.sort(np.concatenate(parts))


def prepare_loaded(index) -> None:
    """Search parameters are not all kept in the file: set them on an index just read."""
    if is_approximate(index):
        index.nprobe = min(NPROBE, index.nlist)
