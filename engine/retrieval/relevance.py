"""Is there anything in the library that answers this question? Decided before the model is asked.

A dense score alone cannot tell: with all-MiniLM-L6-v2, questions about nothing in the library
reach cosine 0.49 while real ones start at 0.18 (tests/eval/calibrate_relevance.py). What
separates them is keyword evidence: an IDF-weighted share of the question's terms found together
in one retrieved passage. The dense score then moves the bar, as much as the dense channel is
trusted for this query (little for Chinese with an English-only model).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.retrieval.coverage import text_coverages
from engine.retrieval.retrieve import SearchHit
from ingest.store.library import Library

# Calibrated on the eval library (see the module docstring); the closing rule is
#   coverage - COVERAGE_BAR + dense_weight * (dense - DENSE_BAR) >= 0
COVERAGE_BAR = 0.15
DENSE_BAR = 0.40
# The dense bar of an embedder whose cosines lie elsewhere, by the name the library records.
# MiniLM + USE in one vector (the default): 0.28 keeps all 53 real questions and 59 of 60 asked
# across languages (a Chinese question's words found in English through the dictionary count,
# engine/bilingual_keywords.coverages), declines 19 of 24 calibration and 17 of 18 held-out
# unrelated ones. Before that coverage: 53, 56, 20, 17 (MiniLM at 0.40: 53, 51, 17, 17; the default
# at 0.40: 51, 40, 22, 17). calibrate_relevance.py --model.
DENSE_BARS = {"all-MiniLM-L6-v2*0.3+use-multilingual-v3*0.7": 0.28}
TOP_PASSAGES = 5  # coverage is the best over this many hits


@dataclass
class Relevance:
    relevant: bool
    coverage: float  # 0..1, IDF-weighted share of query terms in the best passage
    dense: float  # best cosine among the hits
    dense_weight: float
    margin: float  # > 0: relevant; the distance from the bar
    hit_margins: list[float] = field(default_factory=list)  # the same rule for each hit alone

    def as_dict(self) -> dict:
        fields = ("relevant", "coverage", "dense", "dense_weight", "margin")
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in ((k, getattr(self, k)) for k in fields)}


def keyword_coverages(library: Library, query: str, hits: list[SearchHit]) -> list[float]:
    """For each hit, the IDF-weighted share of the query's terms that its passage contains."""
    return text_coverages(library, query, [h.passage.text for h in hits])


def margin(coverage: float, dense: float, dense_weight: float, dense_bar: float = DENSE_BAR) -> float:
    return coverage - COVERAGE_BAR + dense_weight * (dense - dense_bar)


def judge(library: Library, query: str, hits: list[SearchHit], dense_weight: float) -> Relevance:
    coverages = keyword_coverages(library, query, hits)
    coverage = max(coverages[:TOP_PASSAGES], default=0.0)
    dense = max((h.dense_score for h in hits if h.dense_score is not None), default=0.0)
    bar = DENSE_BARS.get(library.meta("embedding_model") or "", DENSE_BAR)
    best = margin(coverage, dense, dense_weight, bar)
    per_hit = [margin(c, h.dense_score or 0.0, dense_weight, bar) for c, h in zip(coverages, hits, strict=True)]
    return Relevance(bool(hits) and best >= 0, coverage, dense, dense_weight, best, per_hit)
