"""A passage trimmed to the sentences that answer: its best window of consecutive sentences.

A passage is ~200-400 tokens, a Chinese one more for the same text, and the sentence that answers
is often one of several. Where a source no longer fits the context whole (engine/retrieval/
context.py), it goes as the window of its passage, within the room left, that holds the most of
the question's terms (IDF-weighted, as coverage.py weighs them; a Chinese question's concepts in
either language too), with the sentences around it. No model is asked: the question's terms
decide, and where no sentence holds any of them the passage is left whole (its dense match is
all there is, and it is the whole passage's).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from engine.retrieval.coverage import TermScorer
from engine.retrieval.query import Query

# Sentence ends: Latin . ! ? (and a closing quote or bracket) before a space, a CJK full stop,
# ! ? or ; with its closing quotes, or a blank line. A single line break stays inside: a PDF
# breaks lines anywhere.
_SENTENCE_END = re.compile(
    r"[.!?][\"')\]\u201d\u2019]*\s+|[\u3002\uff01\uff1f\uff1b\u2026]+[\u201d\u2019\u300d\u300f\uff09)]*\s*|\n\s*\n"
)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of `text`, its trailing space included, covering the text."""
    spans, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        if match.end() > start:
            spans.append((start, match.end()))
            start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans or [(0, len(text))]


def best_window(query: Query | None, text: str, count_tokens: Callable[[str], int], limit: int) -> tuple[int, int]:
    """The character span of `text`'s best window of whole sentences within `limit` tokens: the
    fewest sentences holding the most of the question (the earlier of equals), grown by the
    sentences after and before it up to `limit`. The whole text when it fits, or when no sentence
    holds a word of the question (the passage's dense match is then all there is, and it is the
    passage's); a single sentence longer than `limit` stands alone."""
    if count_tokens(text) <= limit or query is None or not (query.terms or query.concepts):
        return 0, len(text)
    spans = sentence_spans(text)
    costs = [count_tokens(text[a:b]) for a, b in spans]
    scorer = TermScorer.of(query)
    held = [scorer.held(text[a:b]) for a, b in spans]
    best, best_span = (0.0, 0, 0), None  # (score, -tokens, -first), the largest wins
    for first in range(len(spans)):
        terms: set[str] = set()
        found: set[int] = set()
        used = 0
        for last in range(first, len(spans)):
            if last > first and used + costs[last] > limit:
                break
            used += costs[last]
            terms |= held[last][0]
            found |= held[last][1]
            key = (scorer.score(terms, found), -used, -first)
            if key[0] > 0 and key > best:
                best, best_span = key, (first, last)
    if best_span is None:
        return 0, len(text)
    first, last = best_span
    used = sum(costs[first : last + 1])
    while True:  # the sentences around it, after first, while they fit
        after = last + 1 < len(spans) and used + costs[last + 1] <= limit
        if after:
            last += 1
            used += costs[last]
        before = first > 0 and used + costs[first - 1] <= limit
        if before:
            first -= 1
            used += costs[first]
        if not (after or before):
            return spans[first][0], spans[last][1]
