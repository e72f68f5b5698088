"""Hybrid retrieval: FAISS dense candidates and FTS5 BM25 candidates, fused by reciprocal rank,
with a third vote for the passages that hold every word of the question. A search reads its
question as a Query (engine/retrieval/query.py; `HybridRetriever.query` makes one) and fills each
hit's coverage of it, which the relevance rule reads after."""

from __future__ import annotations

import dataclasses
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from engine.retrieval import bilingual_keywords, concepts
from engine.retrieval.coverage import WHOLE, text_coverages
from engine.retrieval.proximity import reorder_within_documents
from engine.retrieval.query import Query, make_query
from engine.retrieval.query_translation import Translator
from ingest.embedding import Embedder
from ingest.keywords import affordable_tokens
from ingest.store.library import Library, PassageRow
from ingest.store.vectors import VectorIndex

RRF_K = 60  # the constant of Cormack et al.; damps the weight of the very first ranks
CANDIDATES = 50
DEEPER = 6  # times CANDIDATES: the dense pool a Chinese question's two languages are drawn from


@dataclass
class SearchHit:
    passage: PassageRow
    score: float  # fused RRF score
    dense_rank: int | None = None
    keyword_rank: int | None = None
    dense_score: float | None = None
    coverage: float | None = None  # the share of the searched Query's keywords it holds (coverage.py)

    def as_dict(self) -> dict:
        p = self.passage
        return {
            "doc_id": p.doc_id,
            "title": p.title,
            "path": p.path,
            "page": p.page,
            "page_end": p.page_end,
            "page_synthetic": p.synthetic_pages,
            "passage_id": p.id,
            "text": p.text,
            "score": round(self.score, 6),
            "dense_score": None if self.dense_score is None else round(self.dense_score, 4),
        }


@dataclass
class SearchResult:
    query: str
    hits: list[SearchHit]
    timings: dict[str, float] = field(default_factory=dict)


def reciprocal_rank_fusion(
    rankings: list[list[int]], weights: list[float] | None = None, k: int = RRF_K
) -> dict[int, float]:
    weights = weights or [1.0] * len(rankings)
    fused: dict[int, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, item in enumerate(ranking):
            fused[item] = fused.get(item, 0.0) + weight / (k + rank + 1)
    return fused


def timed(timings: dict[str, float], name: str, work, *args):
    """work(*args), its wall time in ms stored under `name`."""
    started = time.perf_counter()
    try:
        return work(*args)
    finally:
        timings[name] = (time.perf_counter() - started) * 1000


class HybridRetriever:
    def __init__(
        self, library: Library, embedder: Embedder, vectors: VectorIndex | None = None, cross_language: bool = True
    ) -> None:
        self.library = library
        self.embedder = embedder
        # A Chinese question's keywords also find English passages (engine/retrieval/bilingual_keywords.py).
        self.cross_language = cross_language
        # Each document's hits reordered, the question's words closest together first
        # (engine/retrieval/proximity.py; tune split, Chinese within 300/500 tokens: 0.78/0.84 -> 0.86/0.90).
        self.order_within_documents = False  # not yet the default: the whole suite has not run with it
        # The library's dense index: the façade hands its own, shared with the ingestor.
        self.vectors = vectors if vectors is not None else VectorIndex(library, embedder)
        self._keyword_worker: ThreadPoolExecutor | None = None  # made at the first search
        # The question in the library's other languages, as the model translated it (kept here: the
        # façade holds its retriever for as long as it runs).
        self.translator = Translator()

    def _keyword_pool(self) -> ThreadPoolExecutor:
        # The keyword side runs beside the query embedding and FAISS: SQLite, torch and FAISS all
        # release the GIL, so the search takes the longer of the two rather than their sum.
        if self._keyword_worker is None:
            self._keyword_worker = ThreadPoolExecutor(max_workers=4, thread_name_prefix="keyword-search")
        return self._keyword_worker

    def query(self, text: str, asked: str | None = None) -> Query:
        """The Query for `text` over this library, read as this retriever's embedder needs."""
        multilingual = getattr(self.embedder, "multilingual", False)
        return make_query(self.library, text, asked, multilingual, self.cross_language)

    def keyword_candidates(
        self, query: Query | str, k: int, doc_ids: list[str] | None = None
    ) -> list[tuple[int, float]]:
        """(passage id, bm25) best first. Across the whole library a query keeps only the words it
        can afford to rank (ingest.keywords.POSTING_BUDGET); within a few documents, all of them.
        A Chinese question is matched in Chinese and, through a dictionary, in English."""
        query = self.query(query) if isinstance(query, str) else query
        if query.crossing:
            return bilingual_keywords.rank(self.library, query, k, doc_ids)
        tokens = [term.text for term in query.terms]
        if tokens and not doc_ids:
            tokens = affordable_tokens(tokens, query.passage_counts())
        return self.library.keyword_search(tokens, k, doc_ids)

    def warm_up(self) -> None:
        self.embedder.encode(["warm up"])
        self.vectors.index()
        if self.cross_language and "zh" in self.library.document_languages():
            # the dictionary (~0.5 s) before the first Chinese question, its reverse (~1 s) before the first English one
            concepts.warm_up(english=True)

    def _dense(self, query: str, k: int, doc_ids: list[str] | None) -> list[tuple[int, float]]:
        vector = self.embedder.encode([query])[0]
        if not doc_ids:
            return self.vectors.search(vector, k)
        # Restricted to a few documents: score their passages directly, exactly.
        ids, blobs = self.library.doc_embeddings(doc_ids, self.embedder.name)
        if not ids:
            return []
        import numpy as np  # lazy: see engine.backends.llama_cpp.load_native_library

        matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(ids), -1)
        scores = matrix @ vector
        order = np.argsort(-scores)[:k]
        return [(ids[i], float(scores[i])) for i in order]

    def covered(self, query: Query, hits: list[SearchHit]) -> list[SearchHit]:
        """The hits with their coverage of `query` (hits found by another phrasing of the question
        hold their coverage of that one)."""
        shares = text_coverages(query, [h.passage.text for h in hits])
        return [dataclasses.replace(h, coverage=share) for h, share in zip(hits, shares, strict=True)]

    def search(
        self, query: Query | str, k: int = 10, doc_ids: list[str] | None = None, candidates: int = CANDIDATES
    ) -> SearchResult:
        """The best `k` passages for the query (a string is made a Query first), each with its coverage."""
        query = self.query(query) if isinstance(query, str) else query
        timings: dict[str, float] = {}
        wanted = max(k, candidates)
        keyword_job = self._keyword_pool().submit(
            timed, timings, "keyword_ms", self.keyword_candidates, query, wanted, doc_ids
        )
        alternating = query.alternating
        # A Chinese question's dense ranking alternates languages: drawn from a deeper pool, so the
        # English passages are there to alternate with (bilingual_keywords.alternate_languages).
        dense = timed(timings, "dense_ms", self._dense, query.text, wanted * (DEEPER if alternating else 1), doc_ids)
        if alternating:
            dense = bilingual_keywords.alternate_languages(self.library, dense)[:wanted]
        keyword = keyword_job.result()
        t = time.perf_counter()
        rankings = [[i for i, _ in dense], [i for i, _ in keyword]]
        weights = [query.dense_weight, 1.0]
        first = reciprocal_rank_fusion(rankings, weights)
        order = sorted(first, key=first.__getitem__, reverse=True)
        rows = self.library.passages(order)
        # A third vote for the passages that hold every word of the question, in the order of the
        # first two: where the dense channel strays (the multilingual model matches "vectors.faiss"
        # to passages about Rust's Vec), the passage that says all of it still leads. Eval library
        # (README, "Choosing the embedder"): English answers within 500 tokens 0.97, was 0.87.
        shares = text_coverages(query, [rows[i].text if i in rows else "" for i in order])
        coverage = dict(zip(order, shares, strict=True))  # kept on the hits: the relevance rule reads it
        whole = [i for i in order if coverage[i] >= WHOLE]
        fused = reciprocal_rank_fusion([*rankings, whole], [*weights, 1.0])
        best = sorted(fused, key=fused.__getitem__, reverse=True)[:k]
        dense_rank = {i: r for r, (i, _) in enumerate(dense)}
        dense_score = dict(dense)
        keyword_rank = {i: r for r, (i, _) in enumerate(keyword)}
        hits = [
            SearchHit(rows[i], fused[i], dense_rank.get(i), keyword_rank.get(i), dense_score.get(i), coverage[i])
            for i in best
            if i in rows
        ]
        if self.order_within_documents:
            hits = reorder_within_documents(query, hits)
        timings["fuse_ms"] = (time.perf_counter() - t) * 1000
        return SearchResult(query.text, hits, timings)
