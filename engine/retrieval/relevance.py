"""Is there anything in the library that answers this question? Decided before the model is asked.

A dense score alone cannot tell: with all-MiniLM-L6-v2, questions about nothing in the library
reach cosine 0.49 while real ones start at 0.18 (tests/eval/calibrate_relevance.py). What
separates them is keyword evidence: an IDF-weighted share of the question's terms found together
in one retrieved passage (each hit's coverage, filled by search). The dense score then moves the
bar, as much as the dense channel is trusted for this query (little for Chinese with an
English-only model).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.retrieval.query import Query
from engine.retrieval.retrieve import SearchHit
from ingest.embedding import DEFAULT_MODEL

# Calibrated on the eval library (see the module docstring); the closing rule is
#   coverage - COVERAGE_BAR + dense_weight * (dense - DENSE_BAR) >= 0
COVERAGE_BAR = 0.15
DENSE_BAR = 0.40
# The dense bar of an embedder whose cosines lie elsewhere, keyed by the embedder's name (which the
# library records beside its vectors). The default (MiniLM + USE in one vector, ingest.embedding's
# DEFAULT_MODEL): 0.28 keeps all 53 real questions and 59 of 60 asked across languages (a Chinese
# question's words found in English through the dictionary count, bilingual_keywords.coverages),
# declines 19 of 24 calibration and 17 of 18 held-out unrelated ones. Before that coverage: 53, 56,
# 20, 17 (MiniLM at 0.40: 53, 51, 17, 17; the default at 0.40: 51, 40, 22, 17).
# calibrate_relevance.py --model; recalibrate when DEFAULT_MODEL changes.
DENSE_BARS = {DEFAULT_MODEL: 0.28}
TOP_PASSAGES = 5  # coverage is the best over this many hits


def dense_bar(embedder_name: str) -> float:
    """The dense bar for the embedder of that name (DENSE_BAR for one not calibrated)."""
    return DENSE_BARS.get(embedder_name, DENSE_BAR)


@dataclass(frozen=True)
class Relevance:
    """The rule's verdict and the evidence for it, as the rule left it (an answer that goes on
    regardless, for a page named or whole documents, says so beside it: PreparedAnswer.override)."""

    relevant: bool
    coverage: float  # 0..1, IDF-weighted share of query terms in the best passage
    dense: float  # best cosine among the hits
    dense_weight: float
    margin: float  # > 0: relevant; the distance from the bar
    hit_margins: tuple[float, ...] = ()  # the same rule for each hit alone
    dense_bar: float = DENSE_BAR

    def as_dict(self) -> dict:
        fields = ("relevant", "coverage", "dense", "dense_weight", "margin", "dense_bar")
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in ((k, getattr(self, k)) for k in fields)}


def margin(coverage: float, dense: float, dense_weight: float, dense_bar: float = DENSE_BAR) -> float:
    return coverage - COVERAGE_BAR + dense_weight * (dense - dense_bar)


def judge(query: Query, hits: list[SearchHit], bar: float = DENSE_BAR) -> Relevance:
    """The verdict on hits searched for `query` (their coverage is of it: HybridRetriever.search
    fills it, HybridRetriever.covered for hits another phrasing found)."""
    if any(h.coverage is None for h in hits):
        raise ValueError("every hit needs its coverage of the query: search with it, or HybridRetriever.covered")
    coverages = [h.coverage or 0.0 for h in hits]
    coverage = max(coverages[:TOP_PASSAGES], default=0.0)
    dense = max((h.dense_score for h in hits if h.dense_score is not None), default=0.0)
    best = margin(coverage, dense, query.dense_weight, bar)
    per_hit = tuple(
        margin(c, h.dense_score or 0.0, query.dense_weight, bar) for c, h in zip(coverages, hits, strict=True)
    )
    return Relevance(bool(hits) and best >= 0, coverage, dense, query.dense_weight, best, per_hit, bar)
