"""The configured model as reranker: each of the top passages is judged by the model's probability
that the answer to "does this passage help answer the question?" is yes, read from the first
token's log-probabilities (OpenAI-compatible `logprobs`: llama-server, vLLM), several at once where
the backend has parallel slots; the top passages are then reordered by it.

No cross-encoder ships its weights on PyPI, so the reranker is the model DocDesk already runs.
`[answers] rerank` is "auto", "on" or "off". "auto" reranks where the model runs on a GPU behind a
server that gives log-probabilities, while it stays cheap there: it stops after two rerankings in
a row took over AUTO_BUDGET_MS. Measured (tests/bench/bench_query_translation.py through
tests/bench/gpu_run.sh, tests/bench/results/gpu-h100-retrieval-synthetic.json): a 32B-shaped
Q4_K_M GGUF (random weights, speed only) on one H100, 8 passages in 8 slots of llama-server:
603 ms, against 510 ms to the answer's first token and 3.8 s for a 240-token answer (0.16 of the
answer). A card with a third of the H100's prompt speed (a V100 with a 27B model) would take
~2 s, over the budget: there "auto" stops after two questions, and "on" keeps it.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from engine.backends import Backend
from engine.prompts import judge_messages
from engine.retrieval.retrieve import SearchHit

TOP = 8  # the passages judged: those that can reach the context


def available(backend: Backend) -> bool:
    """Whether the backend declares log-probabilities: its yes_probability is the judge."""
    return backend.capabilities.logprobs


AUTO_BUDGET_MS = 1000.0  # what "auto" lets a reranking add before the answer's first token
AUTO_STRIKES = 2  # rerankings in a row over the budget after which "auto" stops, per backend
WORK = "rerank"  # its name among the backend's slow streaks (a new backend starts afresh)


def wanted(mode: str, backend: Backend) -> bool:
    if mode == "off" or not available(backend):
        return False
    if mode == "on":
        return True
    return backend.capabilities.gpu_offload and backend.slow_streaks.count(WORK) < AUTO_STRIKES


def _record(backend: Backend, ms: float) -> None:
    backend.slow_streaks.record(WORK, ms > AUTO_BUDGET_MS)


def rerank(
    backend: Backend, question: str, hits: list[SearchHit], cancel: threading.Event | None = None
) -> tuple[list[SearchHit], float]:
    """`hits` with the first TOP reordered by the model's judgement (ties keep the search's order),
    and the milliseconds it took."""
    started = time.perf_counter()
    head, tail = hits[:TOP], hits[TOP:]
    if len(head) < 2:
        return hits, 0.0

    def judge(hit: SearchHit) -> float:
        if cancel is not None and cancel.is_set():
            return 0.5
        return backend.yes_probability(judge_messages(question, hit.passage.text))

    workers = max(1, min(backend.max_concurrency, len(head)))
    with ThreadPoolExecutor(workers, thread_name_prefix="docdesk-rerank") as pool:
        scores = list(pool.map(judge, head))
    order = sorted(range(len(head)), key=lambda i: (-scores[i], i))
    ms = (time.perf_counter() - started) * 1000
    if cancel is None or not cancel.is_set():
        _record(backend, ms)
    return [head[i] for i in order] + tail, ms
