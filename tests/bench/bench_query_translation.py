"""What translating a question and reranking its passages add to an answer, through llama.cpp's
server (plumbing only).

    python tests/bench/bench_query_translation.py [--model FILE.gguf] [--threads N]

Starts `llama-server` (DocDesk's llama_server backend; `make llama-server` builds it) with the
given GGUF (default: the bundled SmolLM2-135M, whose translations are noise: it measures time
only), then for each question of tests/eval/questions_zh.json times the translation into English
(uncached) and the judging of 8 passages (engine/rerank.py, in the server's slots) beside the
answer's own first token and total, and prints the ratios. Writes
tests/bench/results/query-translation-<host>.json.
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


def main() -> int:
    from engine import query_translation, rerank
    from engine.backends import ChatRequest, LlmSettings, create_backend
    from engine.generate import complete

    parser = argparse.ArgumentParser()
    parser.add_argument("--model", help="a GGUF file (default: the bundled model)")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--gpu-layers", type=int, default=-1)
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--slots", type=int, default=4, help="llama-server's parallel slots (judgements at once)")
    args = parser.parse_args()
    questions = [q["q"] for q in json.loads((ROOT / "tests/eval/questions_zh.json").read_text())]
    questions = questions[: args.questions]
    settings = LlmSettings(
        backend="llama_server",
        model=args.model,
        context=8192,
        slots=args.slots,
        threads=args.threads,
        gpu_layers=args.gpu_layers,
    )
    backend = create_backend(settings, log_dir=Path("/tmp"))
    rows = []
    try:
        backend.warm_up()
        for question in questions:
            query_translation._cache.clear()
            started = time.perf_counter()
            translated = query_translation.translate(backend, question, "en", threading.Event())
            translate_ms = (time.perf_counter() - started) * 1000
            passages = [
                p for p in (ROOT / "assets/samples/docdesk-guide-zh.md").read_text().split("\n\n") if len(p) > 40
            ]
            started = time.perf_counter()
            with ThreadPoolExecutor(args.slots) as pool:
                asked = [rerank.judge_messages(question, p) for p in passages[:8]]
                list(pool.map(backend.yes_probability, asked))
            rerank_ms = (time.perf_counter() - started) * 1000
            # The answer it would add to: a 1,200-token context and up to 256 tokens, as on a CPU.
            context = "资料：" + "DocDesk 在本地运行，读取 PDF 与 Word 文件。" * 60
            request = ChatRequest([{"role": "user", "content": context + "\n问题：" + question}], max_tokens=256)
            complete(backend, request)
            rows.append(
                {
                    "question": question,
                    "translation": translated,
                    "translate_ms": round(translate_ms, 1),
                    "rerank_ms": round(rerank_ms, 1),
                    "answer_ttft_ms": round(request.stats.ttft_ms, 1),
                    "answer_total_ms": round(request.stats.total_ms, 1),
                }
            )
            print(
                f"{translate_ms:7.0f} ms translate  {rerank_ms:7.0f} ms rerank 8  "
                f"{request.stats.total_ms:7.0f} ms answer   {question[:30]}"
            )
    finally:
        backend.close()
    median = statistics.median
    summary = {
        "model": str(args.model or "bundled SmolLM2-135M-Instruct Q4_1 (time only: its translations are noise)"),
        "host": platform.node(),
        "questions": len(rows),
        "translate_ms_median": median(r["translate_ms"] for r in rows),
        "rerank_ms_median": median(r["rerank_ms"] for r in rows),
        "answer_total_ms_median": median(r["answer_total_ms"] for r in rows),
        "answer_ttft_ms_median": median(r["answer_ttft_ms"] for r in rows),
    }
    summary["added_to_answer"] = round(summary["translate_ms_median"] / summary["answer_total_ms_median"], 3)
    summary["added_to_first_token"] = round(summary["translate_ms_median"] / summary["answer_ttft_ms_median"], 3)
    summary["rerank_added_to_answer"] = round(summary["rerank_ms_median"] / summary["answer_total_ms_median"], 3)
    summary["rerank_added_to_first_token"] = round(summary["rerank_ms_median"] / summary["answer_ttft_ms_median"], 3)
    print(json.dumps(summary, ensure_ascii=False, indent=1))
    out = ROOT / "tests" / "bench" / "results" / f"query-translation-{'gpu' if args.gpu_layers else 'cpu'}.json"
    out.write_text(json.dumps({"summary": summary, "rows": rows}, ensure_ascii=False, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
