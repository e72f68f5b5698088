"""Start `vllm serve` as a child process, then talk to it as an OpenAI-compatible backend.

The manager owns the whole process group: the server is started in its own session and
stopped with SIGTERM, then SIGKILL, so no GPU-holding worker outlives DocDesk.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import BackendUnavailable, ServerError
from .openai_http import OpenAIBackend

log = logging.getLogger(__name__)


@dataclass
class VllmSettings:
    model: str
    port: int | None = None  # None: a free port
    dtype: str | None = None  # None: "half" on GPUs without bf16, else vLLM's "auto"
    max_model_len: int = 8192
    gpu_memory_utilization: float = 0.90
    max_num_seqs: int = 16
    max_num_batched_tokens: int | None = None
    quantization: str | None = None
    prefix_caching: bool = True
    extra_args: list[str] = field(default_factory=list)
    startup_timeout: float = 600.0
    command: list[str] | None = None  # overrides the whole command line (tests, custom launchers)
    executable: str | None = None  # a `vllm` program to run as `vllm serve MODEL ...` (another environment)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def port_in_use(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _launcher(settings: VllmSettings) -> list[str]:
    """How to start vLLM: its module in this Python, or a `vllm` executable (the packaged DocDesk
    does not bundle vLLM, so it needs one installed beside it or a server started by hand)."""
    frozen = getattr(sys, "frozen", False)
    if not frozen and not settings.executable and _vllm_importable():
        return [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", settings.model]
    executable = os.path.expanduser(settings.executable) if settings.executable else shutil.which("vllm")
    if executable:
        return [executable, "serve", settings.model]
    if frozen:
        raise BackendUnavailable(
            "vLLM is not part of the DocDesk application: install it in its own environment "
            "(python -m venv ~/vllm && ~/vllm/bin/pip install vllm) and set [llm] vllm = { executable = "
            '"~/vllm/bin/vllm" } in config.toml, or run `vllm serve MODEL` yourself and choose the '
            "OpenAI-compatible backend with its URL"
        )
    raise BackendUnavailable(
        "vLLM is not installed: pip install 'docdesk[vllm]' (it needs an NVIDIA GPU), "
        "or use the llama_cpp backend with a GGUF file"
    )


def build_command(settings: VllmSettings, port: int, has_bf16: bool) -> list[str]:
    """The `vllm serve` command line, with DocDesk's safe defaults."""
    dtype = settings.dtype or ("auto" if has_bf16 else "half")
    command = [
        *_launcher(settings),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--dtype",
        dtype,
        "--max-model-len",
        str(settings.max_model_len),
        "--gpu-memory-utilization",
        str(settings.gpu_memory_utilization),
        "--max-num-seqs",
        str(settings.max_num_seqs),
    ]
    if settings.max_num_batched_tokens:
        command += ["--max-num-batched-tokens", str(settings.max_num_batched_tokens)]
    if settings.prefix_caching:
        command.append("--enable-prefix-caching")
    if settings.quantization:
        command += ["--quantization", settings.quantization]
    return command + list(settings.extra_args)


def _vllm_importable() -> bool:
    import importlib.util

    return importlib.util.find_spec("vllm") is not None


class VllmServer(OpenAIBackend):
    """A vLLM (or any OpenAI-compatible) server process that DocDesk starts and stops."""

    name = "vllm"

    def __init__(
        self, settings: VllmSettings, log_dir: Path, has_bf16: bool = True, max_concurrency: int | None = None
    ):
        port = settings.port or free_port()
        if settings.port and port_in_use(port):
            raise BackendUnavailable(
                f"port {port} is already taken: pick another port or leave it empty for a free one"
            )
        self.settings = settings
        self.port = port
        command = settings.command or build_command(settings, port, has_bf16)
        self.command = [part.replace("{port}", str(port)) for part in command]
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = log_dir / f"vllm-{port}.log"
        super().__init__(
            f"http://127.0.0.1:{port}",
            model=None if settings.command else settings.model,
            max_concurrency=max_concurrency or settings.max_num_seqs,
            context_window=settings.max_model_len,
        )
        self.on_stream_error = self._explain
        self._process: subprocess.Popen | None = None

    def start(self) -> VllmServer:
        log.info("starting %s", " ".join(self.command))
        self._log_file = self.log_path.open("ab")
        self._process = subprocess.Popen(
            self.command,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: stopped as a whole
        )
        self._wait_healthy()
        return self

    def _wait_healthy(self) -> None:
        import httpx

        deadline = time.monotonic() + self.settings.startup_timeout
        with httpx.Client(timeout=2.0) as probe:
            while time.monotonic() < deadline:
                if self._process.poll() is not None:
                    raise ServerError(
                        f"the server exited during start-up (code {self._process.returncode}); last log lines:\n{self.tail()}"
                    )
                for path in ("/health", "/v1/models"):
                    try:
                        if probe.get(f"{self.url}{path}").status_code == 200:
                            return
                    except httpx.HTTPError:
                        pass
                time.sleep(0.25)
        self.close()
        raise ServerError(
            f"the server did not become healthy within {self.settings.startup_timeout:.0f} s; last log lines:\n{self.tail()}"
        )

    def tail(self, lines: int = 20) -> str:
        try:
            with self.log_path.open("rb") as handle:
                return b"".join(deque(handle, maxlen=lines)).decode("utf-8", "replace").rstrip()
        except OSError:
            return "(no log)"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def _explain(self, error: Exception) -> Exception:
        if self._process is not None:
            try:
                self._process.wait(timeout=1.0)  # a dying server may need a moment to be reaped
            except subprocess.TimeoutExpired:
                pass
        if not self.running:
            code = self._process.returncode if self._process else None
            return ServerError(f"{error}: the server process died (exit code {code}); last log lines:\n{self.tail()}")
        return error

    def close(self) -> None:
        super().close()
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            self._signal_group(process, signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._signal_group(process, signal.SIGKILL)
                process.wait(timeout=15)
        self._signal_group(process, signal.SIGKILL)  # workers it left behind in its group
        self._log_file.close()

    @staticmethod
    def _signal_group(process: subprocess.Popen, sig: int) -> None:
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
