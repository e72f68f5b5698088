"""Cost of choosing one token: llama.cpp's sampler chain as llama-cpp-python builds it (repetition
penalty over the whole vocabulary first) against DocDesk's (top-k first), on the same logits.

    python tests/bench/bench_sampling.py [--vocab-from ggml-vocab-qwen2.gguf]

The model is a tiny synthetic one (tests/bench/synthetic_gguf.py, random weights) whose only real
part is the vocabulary: sampling cost grows with the vocabulary (49k for the bundled SmolLM2,
152k for Qwen2.5), not with the model. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SAMPLES = 500


def per_token_ms(llm, sampler, tokens: list[int]) -> float:
    for token in tokens[-64:]:
        sampler.accept(token)  # a penalty window as full as in a long answer
    started = time.perf_counter()
    for _ in range(SAMPLES):
        sampler.sample(llm._ctx, -1)
    return (time.perf_counter() - started) / SAMPLES * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vocab-from", type=Path, help="a GGUF whose vocabulary to use (default: the bundled model's)")
    args = parser.parse_args(argv)

    from llama_cpp import Llama

    from engine.backends.llama_cpp import bundled_model_path
    from engine.backends.llama_sampling import TOP_K, sampler_factory
    from tests.bench.synthetic_gguf import SHAPES, write

    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp) / "tiny.gguf", SHAPES["qwen2-tiny"], args.vocab_from or bundled_model_path())
        llm = Llama(model_path=str(path), n_ctx=512, verbose=False)
        tokens = llm.tokenize(b"A prompt whose tokens fill the repetition penalty's window. " * 6, add_bos=False)
        llm.eval(tokens)
        settings = {"top_k": TOP_K, "temp": 0.0, "repeat_penalty": 1.1}
        upstream = per_token_ms(llm, Llama._init_sampler(llm, **settings), tokens)
        ours = per_token_ms(llm, sampler_factory(llm)(**settings), tokens)
        print(
            json.dumps(
                {
                    "vocabulary": llm.n_vocab(),
                    "greedy_penalty_first_ms": round(upstream, 3),
                    "greedy_top_k_first_ms": round(ours, 3),
                    "saved_ms_per_token": round(upstream - ours, 3),
                }
            )
        )
        llm.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
