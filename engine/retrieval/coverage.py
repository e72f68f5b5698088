"""How much of a question a passage holds: the IDF-weighted share of the question's keywords it
contains (a word's crude stem will do, so "encrypted" finds "encryption"). Computed once per hit,
by search (engine/retrieval/retrieve.py, which gives a vote to the passages holding every word)
and kept on the hit for the "nothing relevant" rule (engine/retrieval/relevance.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.retrieval import bilingual_keywords
from engine.retrieval.query import Query
from ingest.keywords import index_tokens

WHOLE = 0.999  # a share at least this high holds every word


def stem(token: str) -> str:
    # Crude but language-neutral for Latin script: "encrypted" ~ "encryption", "passages" ~ "passage".
    return token[: max(4, len(token) - 3)] if len(token) >= 6 and token.isascii() else token


@dataclass(frozen=True)
class TermScorer:
    """The question's terms and concepts with their weights; what a text holds of them and the
    share that is. Search's coverage (below), a passage's best window (trimming.py) and the order
    inside a document (proximity.py) all weigh a text with it."""

    weights: dict[str, float]
    concept_weights: list[float]
    query: Query

    @classmethod
    def of(cls, query: Query) -> TermScorer:
        return cls({t.text: t.idf for t in query.terms}, bilingual_keywords.concept_weights(query), query)

    def held(self, text: str) -> tuple[frozenset[str], frozenset[int]]:
        """The question's terms in `text` (a word's crude stem will do) and its concepts there."""
        tokens = set(index_tokens(text).split())
        stems = {stem(t) for t in tokens}
        terms = frozenset(t for t in self.weights if t in tokens or stem(t) in stems)
        concepts = bilingual_keywords.concepts_held(self.query, text) if self.concept_weights else frozenset()
        return terms, concepts

    def score(self, terms: set[str], concepts: set[int]) -> float:
        """The IDF-weighted share of the terms; the concepts' at CROSSING_DISCOUNT where higher."""
        share = sum(self.weights[t] for t in terms) / (sum(self.weights.values()) or 1.0)
        if self.concept_weights:
            crossing = sum(self.concept_weights[i] for i in concepts) / (sum(self.concept_weights) or 1.0)
            share = max(share, bilingual_keywords.CROSSING_DISCOUNT * crossing)
        return share


def text_coverages(query: Query, texts: list[str]) -> list[float]:
    """For each text, the IDF-weighted share of the query's terms that it contains; for a question
    with Chinese words also its concepts found in either language through the dictionary, at a
    discount (bilingual_keywords.coverages), whichever is higher. The weights are the Query's:
    no count is read from the library here."""
    if not query.terms:
        return [0.0] * len(texts)
    scorer = TermScorer.of(query)
    return [scorer.score(*scorer.held(text)) for text in texts]
