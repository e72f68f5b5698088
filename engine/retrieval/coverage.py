"""How much of a question a passage holds: the IDF-weighted share of the question's keywords it
contains (a word's crude stem will do, so "encrypted" finds "encryption"). Computed once per hit,
by search (engine/retrieval/retrieve.py, which gives a vote to the passages holding every word)
and kept on the hit for the "nothing relevant" rule (engine/retrieval/relevance.py).
"""

from __future__ import annotations

from engine.retrieval import bilingual_keywords
from engine.retrieval.query import Query
from ingest.keywords import index_tokens

WHOLE = 0.999  # a share at least this high holds every word


def stem(token: str) -> str:
    # Crude but language-neutral for Latin script: "encrypted" ~ "encryption", "passages" ~ "passage".
    return token[: max(4, len(token) - 3)] if len(token) >= 6 and token.isascii() else token


def text_coverages(query: Query, texts: list[str]) -> list[float]:
    """For each text, the IDF-weighted share of the query's terms that it contains; for a question
    with Chinese words also its concepts found in either language through the dictionary, at a
    discount (bilingual_keywords.coverages), whichever is higher. The weights are the Query's:
    no count is read from the library here."""
    if not query.terms:
        return [0.0] * len(texts)
    weights = {term.text: term.idf for term in query.terms}
    whole = sum(weights.values()) or 1.0
    coverages = []
    for text in texts:
        tokens = set(index_tokens(text).split())
        stems = {stem(t) for t in tokens}
        coverages.append(sum(w for t, w in weights.items() if t in tokens or stem(t) in stems) / whole)
    if query.concepts:  # a Chinese question's words said in English count too
        crossing = bilingual_keywords.coverages(query, texts)
        coverages = [max(pair) for pair in zip(coverages, crossing, strict=True)]
    return coverages
