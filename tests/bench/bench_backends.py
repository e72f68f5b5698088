"""Backend overhead benchmark (run by `make bench`; numbers go in the closing note).

1. The bundled SmolLM2 through LlamaCppBackend against llama-cpp-python called directly
   with the same settings: time to first token and decode tokens/s.
2. The OpenAI client against `python -m llama_cpp.server` against raw streamed HTTP requests.
3. Concurrency: N concurrent stream_chat calls against a stand-in server that serves N at once.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

MAX_TOKENS = 128
RUNS = 6
PROMPTS = [f"Question {i}: explain in a few sentences why the sky looks blue." for i in range(RUNS)]


def _summary(samples: list[tuple[float, float]]) -> dict:
    ttft = [s[0] for s in samples]
    rate = [s[1] for s in samples]
    return {
        "ttft_ms_median": round(statistics.median(ttft), 1),
        "decode_tok_s_median": round(statistics.median(rate), 1),
    }


def bench_in_process() -> dict:
    from llama_cpp import Llama

    from engine.backends.base import ChatRequest
    from engine.backends.llama_cpp import LlamaCppBackend, bundled_model_path

    backend = LlamaCppBackend()
    backend.warm_up()
    direct = Llama(
        model_path=str(bundled_model_path()), n_ctx=backend.context_window, verbose=False, **backend.settings
    )
    ours, raw = [], []
    for prompt in PROMPTS:  # interleaved, so drift in the machine's speed hits both alike
        messages = [{"role": "user", "content": prompt}]
        request = ChatRequest(messages, max_tokens=MAX_TOKENS, temperature=0.0)
        for _ in backend.stream_chat(request):
            pass
        s = request.stats
        ours.append((s.ttft_ms, s.tokens_per_s))

        started = time.perf_counter()
        first = None
        count = 0
        for chunk in direct.create_chat_completion(messages, max_tokens=MAX_TOKENS, temperature=0.0, stream=True):
            delta = chunk["choices"][0]["delta"]
            if "content" in delta:
                count += 1
                if first is None:
                    first = time.perf_counter()
        end = time.perf_counter()
        raw.append(((first - started) * 1000, (count - 1) / (end - first)))
    backend.close()
    direct.close()
    a, b = _summary(ours), _summary(raw)
    return {
        "backend": a,
        "direct": b,
        "decode_ratio": round(a["decode_tok_s_median"] / b["decode_tok_s_median"], 3),
        "ttft_overhead_ms": round(a["ttft_ms_median"] - b["ttft_ms_median"], 1),
    }


def bench_http() -> dict:
    import httpx

    from engine.backends.base import ChatRequest
    from engine.backends.vllm_server import VllmServer, VllmSettings
    from tests.servers import llama_server_command

    command = llama_server_command(threads=1, context=8192)
    # One server thread: on two cores a 2-thread server and the client would fight for the CPU and the
    # comparison would measure that fight (a real server runs on its GPU, not on the client's cores).
    server = VllmServer(
        VllmSettings(model="", command=command, startup_timeout=120), Path("/tmp/docdesk-bench-logs")
    ).start()
    ours, raw = [], []
    try:
        # The server caches the last prompt: each side gets its own prompts, and the order alternates.
        for i, prompt in enumerate(PROMPTS):
            for side in (0, 1) if i % 2 == 0 else (1, 0):
                messages = [{"role": "user", "content": ("Ours. " if side == 0 else "Raw. ") + prompt}]
                if side == 0:
                    request = ChatRequest(messages, max_tokens=MAX_TOKENS, temperature=0.0)
                    for _ in server.stream_chat(request):
                        pass
                    ours.append((request.stats.ttft_ms, request.stats.tokens_per_s))
                    continue
                payload = {
                    "model": "smollm2",
                    "messages": messages,
                    "max_tokens": MAX_TOKENS,
                    "temperature": 0.0,
                    "stream": True,
                }
                started = time.perf_counter()
                first, count = None, 0
                with httpx.stream("POST", f"{server.url}/v1/chat/completions", json=payload, timeout=120) as response:
                    for line in response.iter_lines():
                        if line.startswith("data:") and '"content"' in line:
                            count += 1
                            first = first or time.perf_counter()
                end = time.perf_counter()
                raw.append(((first - started) * 1000, (count - 1) / (end - first)))
    finally:
        server.close()
    a, b = _summary(ours), _summary(raw)
    return {
        "openai_backend": a,
        "raw_http": b,
        "decode_ratio": round(a["decode_tok_s_median"] / b["decode_tok_s_median"], 3),
        "ttft_overhead_ms": round(a["ttft_ms_median"] - b["ttft_ms_median"], 1),
    }


def bench_concurrency(n: int = 4, delay: float = 0.5) -> dict:
    from engine.backends.base import ChatRequest
    from engine.backends.openai_http import OpenAIBackend
    from engine.backends.vllm_server import VllmServer, VllmSettings

    standin = ROOT / "tests" / "engine" / "standin_server.py"
    server = VllmServer(
        VllmSettings(model="", command=[sys.executable, str(standin), "{port}", str(delay), str(n)]),
        Path("/tmp/docdesk-bench-logs"),
    ).start()
    try:
        client = OpenAIBackend(server.url, model="standin", max_concurrency=n)

        def one(_):
            return "".join(client.stream_chat(ChatRequest([{"role": "user", "content": "x"}])))

        started = time.perf_counter()
        one(0)
        single = time.perf_counter() - started
        started = time.perf_counter()
        with ThreadPoolExecutor(n) as pool:
            list(pool.map(one, range(n)))
        together = time.perf_counter() - started
    finally:
        server.close()
    return {
        "requests": n,
        "server_delay_s": delay,
        "one_s": round(single, 3),
        f"{n}_concurrent_s": round(together, 3),
        "ratio": round(together / single, 2),
    }


def main() -> int:
    results = {"in_process": bench_in_process(), "http": bench_http(), "concurrency": bench_concurrency()}
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
