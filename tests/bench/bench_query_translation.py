"""What translating a question and reranking its passages add to an answer, through llama.cpp's
server (plumbing only).

    python tests/bench/bench_query_translation.py [--model FILE.gguf] [--llama-server EXE] \
        [--slots 4] [--gpu-layers -1] [--context 8192] [--kv-cache f16|q8_0] [--flash-attention on|off] \
        [--threads N] [--questions 10] [--answer-tokens 256] [--note TEXT] [--out FILE.json]

Starts `llama-server` (DocDesk's llama_server backend; `make llama-server` builds it) with the
given GGUF (default: the bundled SmolLM2-135M, whose translations are noise: it measures time
only), then for each question of tests/eval/questions_zh.json times the translation into English
(uncached; with the tokens it generated against its cap) and the judging of 8 passages
(engine/retrieval/rerank.py, in the server's slots) beside the answer's own first token and total, and
prints the ratios. One question is asked first and not counted (the server's first requests).
The answer's context starts differently for each question, so no answer reuses another's cached
prompt. Writes --out, else tests/bench/results/query-translation-<cpu|gpu>.json.

A model with random weights (tests/bench/synthetic_gguf.py: speed only) may write a translation
up to its token cap (no stop token or newline comes): its translation time is then an upper bound;
`translate_tokens` and `translate_max_tokens` say how far each one ran.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

RERANKED = 8  # passages judged per question (engine/rerank.TOP)


def main() -> int:
    from engine.backends import ChatRequest, LlmSettings, create_backend
    from engine.generation.generate import complete
    from engine.models.doctor import detect_gpus
    from engine.prompts import judge_messages
    from engine.retrieval import query_translation

    parser = argparse.ArgumentParser()
    parser.add_argument("--model", help="a GGUF file (default: the bundled model)")
    parser.add_argument("--llama-server", help="the executable (default: as DocDesk finds it)")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--gpu-layers", type=int, default=-1)
    parser.add_argument("--context", type=int, default=8192, help="tokens per slot")
    parser.add_argument("--kv-cache", choices=["f16", "q8_0"], help="default: the doctor's plan")
    parser.add_argument("--flash-attention", choices=["on", "off"], help="default: on where a GPU is")
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--slots", type=int, default=4, help="llama-server's parallel slots (judgements at once)")
    parser.add_argument("--answer-tokens", type=int, default=256, help="the answer's max_tokens")
    parser.add_argument("--note", default="", help="written into the summary (say 'random weights, speed only')")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    questions = [q["q"] for q in json.loads((ROOT / "tests/eval/questions_zh.json").read_text())]
    questions = questions[: args.questions]
    passages = [p for p in (ROOT / "assets/samples/docdesk-guide-zh.md").read_text().split("\n\n") if len(p) > 40]
    settings = LlmSettings(
        backend="llama_server",
        model=args.model,
        llama_server=args.llama_server,
        context=args.context,
        slots=args.slots,
        threads=args.threads,
        gpu_layers=args.gpu_layers,
        kv_cache=args.kv_cache,
        flash_attention=None if args.flash_attention is None else args.flash_attention == "on",
    )

    # translate() keeps its request to itself: the last one is kept here for its token count.
    translation_requests: list = []
    plain_complete = query_translation.complete

    def recording_complete(backend, request, *a, **kw):
        translation_requests.append(request)
        return plain_complete(backend, request, *a, **kw)

    query_translation.complete = recording_complete

    def ask(index: int, question: str) -> dict:
        translator = query_translation.Translator()  # nothing cached: the model translates
        started = time.perf_counter()
        translated = translator.translate(backend, question, "en", threading.Event())
        translate_ms = (time.perf_counter() - started) * 1000
        asked = translation_requests[-1]
        started = time.perf_counter()
        with ThreadPoolExecutor(args.slots) as pool:
            judged = [judge_messages(question, p) for p in passages[:RERANKED]]
            list(pool.map(backend.yes_probability, judged))
        rerank_ms = (time.perf_counter() - started) * 1000
        # The answer it would add to: a 1,200-token context and up to --answer-tokens tokens. It
        # starts with the question's number, so the server's slots reuse no earlier answer's prompt.
        context = f"（{index}）资料：" + "DocDesk 在本地运行，读取 PDF 与 Word 文件。" * 60
        request = ChatRequest(
            [{"role": "user", "content": context + "\n问题：" + question}], max_tokens=args.answer_tokens
        )
        complete(backend, request)
        return {
            "question": question,
            "translation": translated,
            "translate_ms": round(translate_ms, 1),
            "translate_tokens": asked.stats.completion_tokens,
            "translate_max_tokens": asked.max_tokens,
            "translate_finish": asked.stats.finish_reason,
            "rerank_ms": round(rerank_ms, 1),
            "answer_prompt_tokens": request.stats.prompt_tokens,
            "answer_tokens": request.stats.completion_tokens,
            "answer_ttft_ms": round(request.stats.ttft_ms, 1),
            "answer_total_ms": round(request.stats.total_ms, 1),
        }

    started = time.perf_counter()
    backend = create_backend(settings, log_dir=Path("/tmp"))  # the server started and healthy: the model loaded
    rows = []
    try:
        backend.warm_up()
        load_s = time.perf_counter() - started
        ask(0, "这个文件讲什么？")  # not counted: the server's first requests
        for index, question in enumerate(questions, 1):
            row = ask(index, question)
            rows.append(row)
            print(
                f"{row['translate_ms']:7.0f} ms translate ({row['translate_tokens']}/{row['translate_max_tokens']} tok)  "
                f"{row['rerank_ms']:7.0f} ms rerank {RERANKED}  {row['answer_ttft_ms']:7.0f} ms first token  "
                f"{row['answer_total_ms']:7.0f} ms answer ({row['answer_tokens']} tok)   {question[:30]}",
                flush=True,
            )
        command = list(getattr(backend, "command", []))
        plan = getattr(backend, "plan", None)
    finally:
        backend.close()

    def median(values) -> float:
        return round(statistics.median(values), 1)

    gpus = detect_gpus()
    summary = {
        "model": str(args.model or "bundled SmolLM2-135M-Instruct Q4_1 (time only: its translations are noise)"),
        "note": args.note,
        "host": platform.node(),
        "gpu": gpus[0].name if gpus and args.gpu_layers != 0 else None,
        "server_command": " ".join(command),
        "plan": vars(plan) if plan is not None else None,
        "load_s": round(load_s, 2),
        "questions": len(rows),
        "rerank_passages": RERANKED,
        "translate_ms_median": median(r["translate_ms"] for r in rows),
        "translate_tokens_median": median(r["translate_tokens"] for r in rows),
        "translate_max_tokens_median": median(r["translate_max_tokens"] for r in rows),
        "translations_at_cap": sum(r["translate_tokens"] >= r["translate_max_tokens"] for r in rows),
        "rerank_ms_median": median(r["rerank_ms"] for r in rows),
        "answer_total_ms_median": median(r["answer_total_ms"] for r in rows),
        "answer_ttft_ms_median": median(r["answer_ttft_ms"] for r in rows),
        "answer_tokens_median": median(r["answer_tokens"] for r in rows),
    }
    summary["added_to_answer"] = round(summary["translate_ms_median"] / summary["answer_total_ms_median"], 3)
    summary["added_to_first_token"] = round(summary["translate_ms_median"] / summary["answer_ttft_ms_median"], 3)
    summary["rerank_added_to_answer"] = round(summary["rerank_ms_median"] / summary["answer_total_ms_median"], 3)
    summary["rerank_added_to_first_token"] = round(summary["rerank_ms_median"] / summary["answer_ttft_ms_median"], 3)
    print(json.dumps(summary, ensure_ascii=False, indent=1))
    out = (
        args.out
        or ROOT / "tests" / "bench" / "results" / f"query-translation-{'gpu' if args.gpu_layers else 'cpu'}.json"
    )
    out.write_text(json.dumps({"summary": summary, "rows": rows}, ensure_ascii=False, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
