"""How much of a question a passage holds: the IDF-weighted share of the question's keywords it
contains (a word's crude stem will do, so "encrypted" finds "encryption"). Two users: the
"nothing relevant" rule (engine/retrieval/relevance.py) and the vote that search gives a passage holding
every word of the question (engine/retrieval/retrieve.py).
"""

from __future__ import annotations

import math

from engine.retrieval import bilingual_keywords
from ingest.keywords import index_tokens, query_tokens
from ingest.store.library import Library

WHOLE = 0.999  # a share at least this high holds every word


def _stem(token: str) -> str:
    # Crude but language-neutral for Latin script: "encrypted" ~ "encryption", "passages" ~ "passage".
    return token[: max(4, len(token) - 3)] if len(token) >= 6 and token.isascii() else token


def text_coverages(library: Library, query: str, texts: list[str]) -> list[float]:
    """For each text, the IDF-weighted share of the query's terms that it contains; for a Chinese
    question also its words found in English through the dictionary, at a discount
    (bilingual_keywords.coverages), whichever is higher."""
    terms = query_tokens(query)
    if not terms:
        return [0.0] * len(texts)
    total, counts = library.keyword_document_counts(terms)
    # BM25's IDF: a term in every passage weighs ~0, one in none weighs most.
    weights = {t: math.log((total - counts[t] + 0.5) / (counts[t] + 0.5) + 1) for t in terms}
    whole = sum(weights.values()) or 1.0
    coverages = []
    for text in texts:
        tokens = set(index_tokens(text).split())
        stems = {_stem(t) for t in tokens}
        coverages.append(sum(w for t, w in weights.items() if t in tokens or _stem(t) in stems) / whole)
    if bilingual_keywords.wanted(query):  # a Chinese question's words said in English count too
        crossing = bilingual_keywords.coverages(library, query, texts)
        coverages = [max(pair) for pair in zip(coverages, crossing, strict=True)]
    return coverages
