"""Choosing tokens in llama.cpp's own sampler chain, and turning tokens back into bytes."""

from __future__ import annotations

import ctypes

# Sampling as llama-cpp-python's create_completion did it, so answers stay what they were.
TOP_K, TOP_P, MIN_P = 40, 0.95, 0.05


class TokenPieces:
    """A token's bytes, through one reused buffer (special tokens render as nothing)."""

    def __init__(self, native, vocab) -> None:
        self.native, self.vocab = native, vocab
        self.buffer = ctypes.create_string_buffer(64)

    def __call__(self, token: int) -> bytes:
        n = self.native.llama_token_to_piece(self.vocab, token, self.buffer, len(self.buffer), 0, False)
        if n < 0:  # a longer piece than the buffer: grow it once
            self.buffer = ctypes.create_string_buffer(-n)
            n = self.native.llama_token_to_piece(self.vocab, token, self.buffer, len(self.buffer), 0, False)
        return self.buffer.raw[:n]


def sampler_factory(llm):
    """llama.cpp's sampler chain with top-k first, for `Llama.generate` to use.

    llama-cpp-python puts the repetition penalty first, over the whole vocabulary: 1.5 ms per
    token for a 152k-token vocabulary on this project's CPU (0.25 ms with top-k first; see
    tests/bench/bench_sampling.py), a tenth of a 32B model's decode step on a fast GPU. Penalties
    only lower logits, so after top-k the greedy choice is the same unless all 40 best tokens
    were penalized below the 41st; with temperature, the candidates are the 40 best before the
    penalty instead of after it.
    """
    import llama_cpp._internals as internals

    def build(
        top_k: int = TOP_K,
        top_p: float = TOP_P,
        min_p: float = MIN_P,
        temp: float = 0.8,
        repeat_penalty: float = 1.0,
        frequency_penalty: float = 0.0,
        presence_penalty: float = 0.0,
        **_unused,
    ):
        sampler = internals.LlamaSampler()
        sampler.add_top_k(top_k)
        sampler.add_penalties(
            n_vocab=llm.n_vocab(),
            penalty_last_n=llm.last_n_tokens_size,
            penalty_repeat=repeat_penalty,
            penalty_freq=frequency_penalty,
            penalty_present=presence_penalty,
        )
        if temp <= 0.0:
            sampler.add_greedy()
        else:
            sampler.add_top_p(top_p, 1)
            sampler.add_min_p(min_p, 1)
            sampler.add_temp(temp)
            sampler.add_dist(llm._seed)
        return sampler

    return build
