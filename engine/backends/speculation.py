"""Prompt-lookup (n-gram) speculation: a draft copied from the prompt, checked in one pass.

An answer quotes its sources, so the tokens that followed the answer's last few tokens where they
occur in the prompt are often what the model writes next. The model checks such a draft in one
forward pass and keeps the part it agrees with: the text is the same as without (greedy answers
are identical), only the passes are fewer. No second model is loaded.

One setting, [llm] speculation: "ngram" or "off"; None leaves it to the backend's measured default
(DEFAULTS below, from tests/bench/bench_speculation.py; the README has the figures). Each runtime
gets it in its own words: llama-cpp-python's LlamaPromptLookupDecoding in process, llama-server's
--spec-type ngram-simple, vLLM's ngram speculative config.
"""

from __future__ import annotations

import json

MODES = ("ngram", "off")
NGRAM = 4  # the n-gram looked up in the prompt (llama-server: size-n; vLLM: prompt_lookup_max)
DRAFT_TOKENS = 8  # tokens per draft at most (llama-server: size-m; vLLM: num_speculative_tokens)

# What None means, per backend and where it runs, as measured with the bundled model's real weights
# on DocDesk's RAG prompts (tests/bench/bench_speculation.py; README "Prompt-lookup speculation"):
# in process on a CPU 0.67x (llama-cpp-python drafts from any 1-gram match and keeps every logit);
# llama-server on a CPU 1.26x (its ngram-simple drafts only on a 4-gram match, 79% accepted).
# Not measured: a GPU (off there until it is).
DEFAULTS = {
    ("llama_cpp", False): "off",
    ("llama_cpp", True): "off",
    ("llama_server", False): "ngram",
    ("llama_server", True): "off",
    ("vllm", True): "off",
}


def chosen(backend: str, setting: str | None, on_gpu: bool) -> str:
    """ "ngram" or "off": the setting, or where it is None the measured default for `backend`
    running on a GPU or not."""
    if setting is None:
        return DEFAULTS.get((backend, on_gpu), "off")
    if setting not in MODES:
        raise ValueError(f"unknown speculation {setting!r}: use one of {', '.join(MODES)}")
    return setting


def llama_cpp_draft(mode: str):
    """llama-cpp-python's draft model for `mode` (None: no speculation)."""
    if mode != "ngram":
        return None
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    return LlamaPromptLookupDecoding(max_ngram_size=NGRAM, num_pred_tokens=DRAFT_TOKENS)


def llama_cpp_arguments(mode: str) -> dict:
    """What Llama() is given for `mode`: the draft model, and every position's logits, which the
    draft is checked against (llama-cpp-python 0.3.36 sizes its logits array from logits_all, not
    from the draft model: without it the first draft fails with a broadcast error)."""
    return {"draft_model": llama_cpp_draft(mode), "logits_all": True} if mode == "ngram" else {}


def llama_server_flags(mode: str) -> list[str]:
    if mode != "ngram":
        return []
    return [
        "--spec-type",
        "ngram-simple",
        "--spec-ngram-simple-size-n",
        str(NGRAM),
        "--spec-ngram-simple-size-m",
        str(DRAFT_TOKENS),
    ]


def vllm_flags(mode: str) -> list[str]:
    if mode != "ngram":
        return []
    config = {
        "method": "ngram",
        "num_speculative_tokens": DRAFT_TOKENS,
        "prompt_lookup_max": NGRAM,
        "prompt_lookup_min": 2,
    }
    return ["--speculative-config", json.dumps(config)]
