"""What `docdesk serve` adds to an answer's time to first token, against the engine called directly.

    python tests/bench/bench_serve.py [--rounds 20] [--backend fake llama_cpp] [--out result.json]

One process, one library (the two sample guides), one backend: each round asks the same question
twice, once through the engine (`answer_call`: what `docdesk ask` runs) and once through the
endpoint with the official `openai` client streaming over loopback HTTP, in alternating order
(ABBA); llama.cpp's prompt cache is emptied before each call, so each reads its whole prompt. The first token is the first non-empty text piece;
for the endpoint it is the first content chunk the client parses. `fake` is the fake backend
(no model: only retrieval and DocDesk's own overhead); `llama_cpp` is the bundled SmolLM2-135M
on the CPU. Prints the JSON it writes.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

QUESTIONS = [
    "Which Python version does DocDesk need?",
    "How do I add documents to the library?",
    "How are answers cited?",
    "What does DocDesk do with an encrypted PDF?",
    "DocDesk 需要哪个版本的 Python？",
]


def first_token_direct(desk, question: str) -> tuple[float, float]:
    """The façade's own answer, as serve's answer thread calls it (no HTTP in between)."""
    from app.desk.answering import final_answer

    started = time.perf_counter()
    first: list[float] = []

    def on_text(piece: str) -> None:
        if piece and not first:
            first.append(time.perf_counter())

    events = desk.answer(question, None, save_chat=False, cancel=threading.Event(), title=f"served: {question[:60]}")
    final_answer(events, on_text, lambda piece: None, lambda: None)
    return (first[0] - started) * 1000, (time.perf_counter() - started) * 1000


def first_token_endpoint(api, question: str) -> tuple[float, float]:
    started = time.perf_counter()
    first = None
    for chunk in api.chat.completions.create(model="docdesk", messages=[{"role": "user", "content": question}], stream=True):
        if first is None and chunk.choices and chunk.choices[0].delta.content:
            first = time.perf_counter()
    return (first - started) * 1000, (time.perf_counter() - started) * 1000


def forget_prompt(backend) -> None:
    """In-process llama.cpp reuses the KV cache of a prompt it has just read: the second of two
    identical questions would skip reading it. Each measured call reads its prompt in full."""
    if hasattr(backend, "_load"):
        backend._load().reset()


def stats(values: list[float]) -> dict:
    ordered = sorted(values)
    return {
        "median": round(statistics.median(ordered), 1),
        "p90": round(ordered[int(0.9 * (len(ordered) - 1))], 1),
        "min": round(ordered[0], 1),
    }


def bench(backend_name: str, library: Path, rounds: int) -> dict:
    import openai

    from app.desk.serve_settings import ServeSettings
    from app.desk.services import DocDesk
    from app.desk.settings import Settings
    from app.serve.runner import BackgroundServer

    settings = Settings(library=library)
    if backend_name == "fake":
        from engine.backends.fake import FakeBackend

        backend = FakeBackend("From the guide [1]: DocDesk needs Python 3.11 or newer.")
    else:
        from engine.backends.llama_cpp import LlamaCppBackend

        backend = LlamaCppBackend()
    desk = DocDesk(settings, backend=backend)
    backend.warm_up()
    desk.embedder.warm_up()
    server = BackgroundServer(desk, ServeSettings(port=0))
    api = openai.OpenAI(base_url=server.start(), api_key="unused", max_retries=0)
    direct, endpoint, direct_total, endpoint_total = [], [], [], []
    try:
        first_token_direct(desk, QUESTIONS[0])  # warm both paths once
        first_token_endpoint(api, QUESTIONS[0])
        for i in range(rounds):
            question = QUESTIONS[i % len(QUESTIONS)]
            order = ("direct", "endpoint") if i % 2 == 0 else ("endpoint", "direct")
            for path in order:
                forget_prompt(backend)
                if path == "direct":
                    ttft, total = first_token_direct(desk, question)
                    direct.append(ttft)
                    direct_total.append(total)
                else:
                    ttft, total = first_token_endpoint(api, question)
                    endpoint.append(ttft)
                    endpoint_total.append(total)
    finally:
        server.stop()
        desk.close()
    added = [e - d for e, d in zip(endpoint, direct, strict=True)]
    return {
        "backend": backend_name if backend_name == "fake" else "llama_cpp (bundled SmolLM2-135M Q4_1, CPU)",
        "rounds": rounds,
        "ttft_ms_engine": stats(direct),
        "ttft_ms_endpoint": stats(endpoint),
        "ttft_ms_added_median": round(statistics.median(added), 1),
        "total_ms_engine": stats(direct_total),
        "total_ms_endpoint": stats(endpoint_total),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--backend", nargs="+", default=["fake", "llama_cpp"], choices=["fake", "llama_cpp"])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if "llama_cpp" in args.backend:  # llama.cpp's libraries before numpy's (engine/backends/llama_cpp.py)
        from engine.backends.llama_cpp import load_native_library

        load_native_library()
    from ingest.embedders.sentence_transformer import SentenceTransformerEmbedder
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library

    with tempfile.TemporaryDirectory() as folder:
        library = Library(Path(folder))
        samples = ROOT / "assets" / "samples"
        Ingestor(library, SentenceTransformerEmbedder()).add([samples / "docdesk-guide.pdf", samples / "docdesk-guide-zh.pdf"])
        library.close()
        results = [bench(name, Path(folder), args.rounds) for name in args.backend]
    report = {"machine": f"{platform.processor() or platform.machine()}, {__import__('os').cpu_count()} cores", "results": results}
    text = json.dumps(report, indent=2, ensure_ascii=False)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
