"""Prompt-lookup (n-gram) speculation with and without, on DocDesk's own RAG prompts.

Answers copy from their sources, so a draft taken from the prompt (the tokens that followed the
last n-gram where it occurred before) is often what the model writes next: the model checks a
whole draft in one forward pass. This measures what that buys and what it costs when nothing
is accepted, side by side in one run, with greedy answers (so both runs must write the same
text: the run says whether they did).

    # the prompts: DocDesk's retrieval over the eval corpus, the questions of tests/eval/answers.json
    python tests/bench/bench_speculation.py write-prompts --out prompts.json
    # in process (llama-cpp-python's LlamaPromptLookupDecoding) or through llama-server
    python tests/bench/bench_speculation.py measure --prompts prompts.json --runtime llama_cpp \\
        --answer-tokens 256 --draft-tokens 8 --ngram 4 --out FILE
    python tests/bench/bench_speculation.py measure --prompts prompts.json --runtime llama_server \\
        --llama-server PATH --gpu-layers 999 --answer-tokens 256 --draft-tokens 8 --ngram 4 --out FILE

Default model: the bundled SmolLM2-135M-Instruct (real weights: its acceptance is meaningful). A
synthetic GGUF (tests/bench/synthetic_gguf.py) has random weights: nothing is accepted, so its run
is the cost of drafting for nothing, speed only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

# llama-server's line for each request it finished with a draft (common/speculative + server.cpp)
ACCEPTANCE_LINE = re.compile(r"draft acceptance(?: rate)? = [0-9.]+ \(\s*(\d+) accepted /\s*(\d+) generated\)")


def write_prompts(out: Path, limit: int | None) -> int:
    from engine.answer import Answerer, AnswerSettings
    from engine.backends.fake import FakeBackend
    from engine.retrieval.retrieve import HybridRetriever
    from tests.eval.calibrate_relevance import open_library

    library, embedder = open_library(None)
    # the fake backend counts tokens as the answer path does; nothing is generated here
    answerer = Answerer(HybridRetriever(library, embedder), FakeBackend(), AnswerSettings(temperature=0.0))
    questions = json.loads((ROOT / "tests/eval/answers.json").read_text(encoding="utf-8"))
    prompts = []
    for lang in ("en", "zh"):
        for item in questions[lang][:limit]:
            prepared = answerer.prepare(item["q"])
            if prepared.messages is not None:
                prompts.append({"lang": lang, "q": item["q"], "messages": prepared.messages})
    out.write_text(json.dumps(prompts, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{len(prompts)} prompts -> {out}")
    return 0


class CountingDraft:
    """LlamaPromptLookupDecoding, counting what it proposes (llama-cpp-python reports nothing)."""

    def __init__(self, ngram: int, draft_tokens: int) -> None:
        from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

        self.inner = LlamaPromptLookupDecoding(max_ngram_size=ngram, num_pred_tokens=draft_tokens)
        self.proposed = 0
        self.calls = 0

    def __call__(self, input_ids, /, **kwargs):
        draft = self.inner(input_ids, **kwargs)
        self.calls += 1
        self.proposed += len(draft)
        return draft


def in_process(args, prompts: list[dict], speculate: bool) -> dict:
    from engine.backends import ChatRequest
    from engine.backends.llama_cpp import LlamaCppBackend

    backend = LlamaCppBackend(
        args.model,
        context=args.context,
        gpu_layers=args.gpu_layers,
        threads=args.threads,
        speculation="ngram" if speculate else "off",
    )
    llm = backend._load()
    draft = CountingDraft(args.ngram, args.draft_tokens) if speculate else None
    if draft is not None:
        llm.draft_model = draft  # the setting's own draft model, counted
    evals = 0
    eval_inner = llm.eval

    def counting_eval(tokens):
        nonlocal evals
        evals += 1
        return eval_inner(tokens)

    llm.eval = counting_eval
    try:
        rows = [answer(backend, ChatRequest, item, args.answer_tokens) for item in prompts[:1]]  # warm-up
        evals = 0
        if draft is not None:
            draft.proposed = draft.calls = 0
        rows = [answer(backend, ChatRequest, item, args.answer_tokens) for item in prompts]
    finally:
        backend.close()
    summary = summarise(rows)
    tokens = sum(r["tokens"] for r in rows)
    # each eval after the prompt's yields one token of its own plus the drafted ones it confirmed
    summary["forward_passes"] = evals
    if draft is not None:
        summary["drafted"] = draft.proposed
        summary["accepted"] = max(tokens - (evals - len(rows)), 0)
    return summary


def answer(backend, request_type, item: dict, answer_tokens: int) -> dict:
    request = request_type(messages=item["messages"], max_tokens=answer_tokens, temperature=0.0, seed=1)
    started = time.perf_counter()
    text = "".join(backend.stream_chat(request))
    seconds = time.perf_counter() - started
    stats = request.stats
    decode_s = max(seconds - stats.ttft_ms / 1000, 1e-6)
    return {
        "q": item["q"],
        "tokens": stats.completion_tokens,
        "prompt_tokens": stats.prompt_tokens,
        "ttft_ms": round(stats.ttft_ms, 1),
        "seconds": round(seconds, 3),
        "decode_tok_s": round(max(stats.completion_tokens - 1, 0) / decode_s, 1),
        "text": text,
    }


def through_server(args, prompts: list[dict], speculate: bool, logs: Path) -> dict:
    from engine.backends import ChatRequest
    from engine.backends.llama_cpp import bundled_model_path
    from engine.backends.llama_server import LlamaServer, LlamaServerSettings

    extra = []
    if speculate:
        extra = [
            "--spec-type",
            "ngram-simple",
            "--spec-ngram-simple-size-n",
            str(args.ngram),
            "--spec-ngram-simple-size-m",
            str(args.draft_tokens),
        ]
    settings = LlamaServerSettings(
        model=Path(args.model) if args.model else bundled_model_path(),
        executable=args.llama_server,
        slots=1,
        context=args.context,
        gpu_layers=args.gpu_layers,
        flash_attention=True,
        kv_cache="f16",
        threads=args.threads,
        speculation="off",  # named here: the flags above are the measured configuration, or none
        extra_args=extra,
    )
    backend = LlamaServer(settings, logs).start()
    try:
        answer(backend, ChatRequest, prompts[0], args.answer_tokens)  # warm-up
        log = backend.log_path
        start = log.stat().st_size
        rows = [answer(backend, ChatRequest, item, args.answer_tokens) for item in prompts]
    finally:
        backend.close()
    summary = summarise(rows)
    if speculate:
        tail = log.read_text(encoding="utf-8", errors="replace")[start:]
        pairs = [(int(a), int(g)) for a, g in ACCEPTANCE_LINE.findall(tail)]
        summary["accepted"] = sum(a for a, _ in pairs)
        summary["drafted"] = sum(g for _, g in pairs)
    return summary


def summarise(rows: list[dict]) -> dict:
    tokens = sum(r["tokens"] for r in rows)
    seconds = sum(r["seconds"] for r in rows)
    # after the first token: what speculation changes (the prompt's reading is the same work)
    decode_tokens = sum(max(r["tokens"] - 1, 0) for r in rows)
    decode_s = sum(r["seconds"] - r["ttft_ms"] / 1000 for r in rows)
    return {
        "answers": len(rows),
        "tokens": tokens,
        "seconds": round(seconds, 2),
        "tok_s": round(tokens / seconds, 1),
        "decode_tok_s": round(decode_tokens / max(decode_s, 1e-6), 1),
        "decode_tok_s_median": statistics.median(r["decode_tok_s"] for r in rows),
        "ttft_ms_median": statistics.median(r["ttft_ms"] for r in rows),
        "rows": rows,
    }


def measure(args) -> int:
    prompts = json.loads(args.prompts.read_text(encoding="utf-8"))[: args.limit]
    logs = Path(tempfile.mkdtemp(prefix="docdesk-spec-"))
    runs = {}
    for name in args.order:
        speculate = name == "ngram"
        if args.runtime == "llama_cpp":
            runs[name] = in_process(args, prompts, speculate)
        else:
            runs[name] = through_server(args, prompts, speculate, logs)
        r = runs[name]
        extra = f", accepted {r['accepted']} of {r['drafted']} drafted" if speculate else ""
        print(
            f"{args.runtime} {name}: {r['tokens']} tokens in {r['seconds']} s = {r['tok_s']} tok/s, "
            f"{r['decode_tok_s']} after the first (per answer median {r['decode_tok_s_median']}, first token {r['ttft_ms_median']} ms){extra}",
            flush=True,
        )
    same = [a["text"] == b["text"] for a, b in zip(runs["off"]["rows"], runs["ngram"]["rows"], strict=True)]
    report = {
        "bench": "tests/bench/bench_speculation.py measure",
        "runtime": args.runtime,
        "model": str(args.model or "bundled SmolLM2-135M-Instruct Q4_1 (real weights)"),
        "weights": args.weights,
        "gpu_layers": args.gpu_layers,
        "threads": args.threads,
        "answer_tokens": args.answer_tokens,
        "ngram": args.ngram,
        "draft_tokens": args.draft_tokens,
        "greedy_answers_identical": f"{sum(same)} of {len(same)}",
        "decode_speedup": round(runs["ngram"]["decode_tok_s"] / runs["off"]["decode_tok_s"], 3),
        "first_token_ratio": round(runs["ngram"]["ttft_ms_median"] / max(runs["off"]["ttft_ms_median"], 1e-6), 3),
        "acceptance": round(runs["ngram"]["accepted"] / max(runs["ngram"]["drafted"], 1), 3),
        **runs,
    }
    print(
        f"decode speed-up {report['decode_speedup']}x, first token x{report['first_token_ratio']}, acceptance {report['acceptance']}, identical answers {report['greedy_answers_identical']}"
    )
    if args.out:
        for run in runs.values():
            for row in run["rows"]:
                row["text"] = row["text"][:200]
        args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    w = sub.add_parser("write-prompts")
    w.add_argument("--out", type=Path, required=True)
    w.add_argument("--limit", type=int, help="questions per language")
    m = sub.add_parser("measure")
    m.add_argument("--prompts", type=Path, required=True)
    m.add_argument("--runtime", choices=["llama_cpp", "llama_server"], required=True)
    m.add_argument("--model", help="a GGUF (default: the bundled SmolLM2)")
    m.add_argument("--weights", default="real", help="what the weights are, for the report")
    m.add_argument("--llama-server", help="with --runtime llama_server: the executable")
    m.add_argument("--context", type=int, default=8192)
    m.add_argument("--gpu-layers", type=int, default=0)
    m.add_argument("--threads", type=int)
    m.add_argument("--answer-tokens", type=int, required=True)
    m.add_argument("--draft-tokens", type=int, required=True, help="tokens per draft at most")
    m.add_argument("--ngram", type=int, required=True, help="the n-gram looked up in the prompt")
    m.add_argument("--limit", type=int, help="prompts at most")
    m.add_argument("--order", nargs=2, default=["off", "ngram"], choices=["off", "ngram"])
    m.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    return write_prompts(args.out, args.limit) if args.step == "write-prompts" else measure(args)


if __name__ == "__main__":
    sys.exit(main())
