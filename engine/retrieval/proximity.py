"""Ranking inside a document, without a model: the question's terms close together.

Fusion ranks a document's passages by their dense and keyword matches, each over the whole
passage; the passage that answers is often the document's second or third. Here each hit is
scored by the most of the question (IDF-weighted, a Chinese question's concepts in either
language too: coverage.TermScorer) that a run of SENTENCES consecutive sentences of it holds,
and the hits of each document trade places among the slots that document already holds, the
closest first (ties keep their first order; on the `tune` splits this beat fusing the two orders
by reciprocal rank). Documents keep their places; only which of a document's passages comes first
changes. A document in the other script than the question's keeps its order: the dictionary's
words are too loose for it (zh→en lost 0.02 within 500 tokens on `tune`). Switched on by
HybridRetriever.order_within_documents (off by default until the whole suite has run with it);
tests/eval/eval_heldout.py measures it beside the fused
order. The model reranker
(engine/retrieval/rerank.py) stays for GPUs.
"""

from __future__ import annotations

from engine.retrieval.coverage import TermScorer
from engine.retrieval.query import Query
from engine.retrieval.trimming import sentence_spans
from ingest.language import cjk_share

SENTENCES = 2  # a run this long counts as "close together"


def closeness(scorer: TermScorer, text: str) -> float:
    """The best share of the question held by SENTENCES consecutive sentences of `text`."""
    held = [scorer.held(text[a:b]) for a, b in sentence_spans(text)]
    best = 0.0
    for first in range(len(held)):
        terms: set[str] = set()
        found: set[int] = set()
        for terms_of, concepts_of in held[first : first + SENTENCES]:
            terms |= terms_of
            found |= concepts_of
        best = max(best, scorer.score(terms, found))
    return best


def reorder_within_documents(query: Query, hits: list, text_of=lambda hit: hit.passage.text) -> list:
    """`hits` with each document's hits reordered among that document's own slots."""
    if not (query.terms or query.concepts) or len(hits) < 2:
        return hits
    scorer = TermScorer.of(query)
    chinese = query.cjk_share > 0.3
    by_doc: dict[str, list[int]] = {}
    for slot, hit in enumerate(hits):
        by_doc.setdefault(hit.passage.doc_id, []).append(slot)
    ordered = list(hits)
    for slots in by_doc.values():
        if len(slots) < 2:
            continue
        if (cjk_share(text_of(hits[slots[0]])) > 0.3) != chinese:
            continue  # the question's words said in the other language: too loose to reorder by
        near = {slot: closeness(scorer, text_of(hits[slot])) for slot in slots}
        by_near = sorted(slots, key=lambda s: (-near[s], s))
        for slot, source in zip(slots, by_near, strict=True):
            ordered[slot] = hits[source]
    return ordered
