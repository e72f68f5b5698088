"""Keyword search for a Chinese question across Chinese and English passages alike.

FTS5 matches a Chinese question's character bigrams, so keyword search used to rank Chinese
passages only and a Chinese reader of English documents got only the dense channel's
cross-language matches. Here the question's concepts (engine/retrieval/concepts.py, in its Query)
are matched: each word by itself or by any of its dictionary English words. Every candidate
passage, of either language, is scored the same way, BM25-like: per concept the best of its forms
(idf times saturated term frequency), summed, with passage length counted in words on both sides
(a Chinese word taken as 1.5 characters) so neither language is favoured. Treating a word's
translations as one concept keeps a word with many senses from outweighing one with a single
sense (Pirkola's structured queries).
"""

from __future__ import annotations

import re

from engine.retrieval.query import Query, bm25_idf
from ingest.cjk import HAN_RANGES
from ingest.keywords import affordable_tokens, query_tokens
from ingest.language import mostly_chinese
from ingest.store.library import Library

_HAN = re.compile(f"[{HAN_RANGES}]")
_LATIN = re.compile(r"[a-z0-9]+")
CANDIDATES = 300  # of each kind (English forms, the question's own tokens) scored per question
AVERAGE_WORDS = 300  # the passage length BM25's length normalisation is relative to
K1, B = 1.2, 0.75
# A concept found through the dictionary is weaker evidence than the question's own words (a word's
# senses are many, and one matching word is not the question): its coverage counts half. Chosen on
# the calibration questions (tests/eval/calibrate_relevance.py): at 0.5, 59 of 60 questions asked
# across languages are kept and 19 of 24 unrelated declined; at 1.0, 60 and 15; without the
# dictionary's coverage, 54 and 20. Held-out unrelated: 17 of 18 declined at 0.5, 14 at 1.0.
CROSSING_DISCOUNT = 0.5


def _saturated(count: int, norm: float) -> float:
    return count * (K1 + 1) / (count + norm)


def _candidates(library: Library, query: Query, doc_ids: list[str] | None) -> tuple[dict, dict[str, float]]:
    """The passages worth scoring ({id: row}) and the IDF of each English form searched for."""
    forms = sorted({f for c in query.concepts for f in c.forms})
    having = {f: query.word(f).passages for f in forms}
    present = [f for f in forms if having.get(f)]
    if not doc_ids:  # a common word costs every passage it appears in (ingest.keywords.POSTING_BUDGET)
        present = affordable_tokens(present, having)
    own = [term.text for term in query.terms]
    if own and not doc_ids:
        own = affordable_tokens(own, query.passage_counts())
    candidates = [i for i, _ in library.keyword_search(present, CANDIDATES, doc_ids)]
    candidates += [i for i, _ in library.keyword_search(own, CANDIDATES, doc_ids)]
    # An English question's Chinese words: their bigrams find the Chinese passages that say them
    # (the words afforded by the passages the Query's lexicon already counted for each).
    chinese = list(dict.fromkeys(word for c in query.concepts for word in c.chinese))
    if chinese and not doc_ids:
        chinese = affordable_tokens(chinese, {word: query.word(word).passages for word in chinese})
    han = list(dict.fromkeys(t for word in chinese for t in query_tokens(word)))
    if han:
        candidates += [i for i, _ in library.keyword_search(han, CANDIDATES, doc_ids)]
    return library.passages(dict.fromkeys(candidates)), {f: query.word(f).idf for f in present}


def rank(library: Library, query: Query, k: int, doc_ids: list[str] | None = None) -> list[tuple[int, float]]:
    """(passage id, score) best first, Chinese and English passages scored alike."""
    found = query.concepts
    if not found:
        return []
    rows, form_idf = _candidates(library, query, doc_ids)
    han_idf = {word: query.word(word).idf for c in found for word in c.han_words}
    scored = []
    for passage_id, row in rows.items():
        lower = row.text.lower()
        latin = _LATIN.findall(lower)
        length = len(latin) + len(_HAN.findall(row.text)) / 1.5
        norm = K1 * (1 - B + B * length / AVERAGE_WORDS)
        counts: dict[str, int] = {}
        for word in latin:
            if word in form_idf:
                counts[word] = counts.get(word, 0) + 1
        score = 0.0
        for concept in found:
            best = 0.0
            for word in concept.han_words:
                if n := lower.count(word):
                    best = max(best, han_idf[word] * _saturated(n, norm))
            for form in concept.forms & counts.keys():
                best = max(best, form_idf[form] * _saturated(counts[form], norm))
            score += concept.weight * best
        if score > 0:
            scored.append((passage_id, score))
    scored.sort(key=lambda pair: -pair[1])
    return scored[:k]


def concept_weights(query: Query) -> list[float]:
    """Each of the question's concepts weighed by the IDF of its commonest word or English form."""
    weights = []
    for concept in query.concepts:
        counts = [query.word(f).passages for f in concept.forms]
        counts += [query.word(word).passages for word in concept.han_words]
        weights.append(concept.weight * bm25_idf(query.total, max(counts, default=0)))
    return weights


def concepts_held(query: Query, text: str) -> frozenset[int]:
    """The indices of the question's concepts that `text` says, in either language (Concept.held_in)."""
    lower = text.lower()
    latin = set(_LATIN.findall(lower))
    return frozenset(i for i, c in enumerate(query.concepts) if c.held_in(lower, latin))


def coverages(query: Query, texts: list[str]) -> list[float]:
    """For each text, the IDF-weighted share of the question's concepts it holds, in either language
    (Concept.held_in), at CROSSING_DISCOUNT: the keyword evidence of the "nothing relevant" rule
    (engine/retrieval/relevance.py) for words said in the other language."""
    if not query.concepts:
        return [0.0] * len(texts)
    weights = concept_weights(query)
    whole = sum(weights) or 1.0
    return [CROSSING_DISCOUNT * sum(weights[i] for i in concepts_held(query, text)) / whole for text in texts]


def alternate_languages(library: Library, ranked: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """A dense ranking for a Chinese question with its Chinese and English passages taking turns,
    each language in its own order. The embedder's similarities across languages run lower than
    within one (and its English-only half clusters Chinese text), so without this the English
    passages that answer a Chinese question sit below Chinese ones that do not. Measured on the
    eval library (README, "Choosing the embedder"): Chinese questions over English chapters found
    0.90 within 1,500 tokens against 0.84, Chinese over Chinese unchanged at 1,500. English
    questions keep their plain ranking: alternating cost them 0.97 -> 0.93."""
    rows = library.passages([i for i, _ in ranked])
    han = [pair for pair in ranked if pair[0] in rows and mostly_chinese(rows[pair[0]].text)]
    latin = [pair for pair in ranked if pair[0] in rows and not mostly_chinese(rows[pair[0]].text)]
    turns = [pair for couple in zip(han, latin, strict=False) for pair in couple]
    shorter = min(len(han), len(latin))
    return turns + han[shorter:] + latin[shorter:]
