"""Running llama.cpp in a child process, so that a native crash fails one test with its signal
instead of killing the whole pytest run."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class ChildResult:
    returncode: int
    output: dict
    stderr: str

    @property
    def crash(self) -> str:
        """'' for a clean exit, else what happened ('SIGSEGV', 'exit 1')."""
        if self.returncode < 0:
            return signal.Signals(-self.returncode).name
        return f"exit {self.returncode}" if self.returncode else ""

    def describe(self) -> str:
        return f"the child process died with {self.crash}:\n{self.stderr[-3000:]}"


def run_child(code: str, timeout: float = 600) -> ChildResult:
    """Run Python code in a child; its last stdout line, if JSON, comes back as `output`."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    lines = done.stdout.strip().splitlines()
    try:
        output = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        output = {}
    return ChildResult(done.returncode, output, done.stderr)


def completion_code(model: str = "", max_tokens: int = 16, read_first: bool = False, **backend: object) -> str:
    """A child that (optionally reads the GGUF header, then) loads a model and streams a reply."""
    return f"""
        import json, time
        from engine.backends.base import ChatRequest
        from engine.backends.llama_cpp import LlamaCppBackend
        from engine.models.gguf_info import read_gguf
        model = {model!r} or None
        if {read_first!r}:
            read_gguf(model)
        started = time.perf_counter()
        backend = LlamaCppBackend(model, **{backend!r})
        request = ChatRequest([{{"role": "user", "content": "Say hello."}}], max_tokens={max_tokens}, temperature=0.0)
        text = "".join(backend.stream_chat(request))
        backend.close()
        print(json.dumps({{"text": text, "tokens": request.stats.completion_tokens,
                          "seconds": time.perf_counter() - started}}))
    """
