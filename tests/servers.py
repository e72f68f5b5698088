"""Command lines for the real servers the tests and benchmarks start on loopback."""

from __future__ import annotations

import sys

from engine.backends.llama_cpp import bundled_model_path


def llama_server_command(threads: int = 2, context: int = 2048) -> list[str]:
    """llama.cpp's own OpenAI-compatible server on the bundled model; `{port}` is filled in by the manager."""
    return [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(bundled_model_path()),
        "--host",
        "127.0.0.1",
        "--port",
        "{port}",
        "--n_ctx",
        str(context),
        "--n_threads",
        str(threads),
        "--model_alias",
        "smollm2",
    ]
