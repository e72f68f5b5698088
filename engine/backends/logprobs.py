"""What a model's first token says of yes or no, from the top log-probabilities an OpenAI-compatible
server returns: the reranker's judgement (engine/retrieval/rerank.py) is read from it."""

from __future__ import annotations

import math

YES = ("yes", "是", "是的")
NO = ("no", "否", "不", "不是")


def yes_share(top_logprobs) -> float:
    """P(yes) / (P(yes) + P(no)) from the first token's top log-probabilities; 0.5 when neither is
    there or the server sent something else than a list of {token, logprob}."""
    if not isinstance(top_logprobs, list):
        return 0.5
    yes = no = 0.0
    for entry in top_logprobs:
        if not isinstance(entry, dict):
            continue
        token = str(entry.get("token", "")).strip().lower()
        logprob = entry.get("logprob")  # llama-server writes -inf as null
        finite = isinstance(logprob, (int, float)) and math.isfinite(logprob)
        p = math.exp(min(float(logprob), 0.0)) if finite else 0.0  # a log-probability is never above 0
        if token in YES:
            yes += p
        elif token in NO:
            no += p
    return yes / (yes + no) if yes + no > 0 else 0.5
