"""A local OpenAI-compatible server process that DocDesk starts, watches and stops.

One owner for the process: it is started in its own session on 127.0.0.1 and a port of its
own, its output goes to a log beside the library, DocDesk waits until it answers, reports its
last log lines when it dies, and stops its whole process group (SIGTERM, then SIGKILL) so no
GPU-holding worker outlives DocDesk. Once running it is an OpenAI-compatible backend. Used by
the vLLM and the llama.cpp server backends.
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import socket
import subprocess
import time
import weakref
from collections import deque
from pathlib import Path

from engine.backends.openai_http import OpenAIBackend
from engine.errors import BackendUnavailable, ServerError

log = logging.getLogger(__name__)
_RUNNING: weakref.WeakSet = weakref.WeakSet()  # servers still up when Python exits are stopped then


@atexit.register
def _stop_all() -> None:
    for server in list(_RUNNING):
        server.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def port_in_use(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def choose_port(port: int | None) -> int:
    """The configured port if it is free (a clear error if not), else any free one."""
    if port and port_in_use(port):
        raise BackendUnavailable(f"port {port} is already taken: pick another port or leave it empty for a free one")
    return port or free_port()


class ManagedServer(OpenAIBackend):
    """A server process DocDesk starts (`start()`) and stops (`close()`)."""

    def __init__(
        self,
        command: list[str],
        port: int,
        log_path: Path,
        startup_timeout: float,
        model: str | None,
        max_concurrency: int,
        context_window: int | None,
    ) -> None:
        self.port = port
        self.command = [part.replace("{port}", str(port)) for part in command]
        self.startup_timeout = startup_timeout
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path = log_path
        super().__init__(
            f"http://127.0.0.1:{port}", model=model, max_concurrency=max_concurrency, context_window=context_window
        )
        self.on_stream_error = self._explain
        self._process: subprocess.Popen | None = None

    def start(self):
        log.info("starting %s", " ".join(self.command))
        self._log_file = self.log_path.open("ab")
        self._process = subprocess.Popen(
            self.command,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: stopped as a whole
        )
        _RUNNING.add(self)
        self._wait_healthy()
        return self

    def _wait_healthy(self) -> None:
        import httpx

        deadline = time.monotonic() + self.startup_timeout
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
            f"the server did not become healthy within {self.startup_timeout:.0f} s; last log lines:\n{self.tail()}"
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
        _RUNNING.discard(self)
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
        # SIGKILL is delivered, not awaited: vLLM's engine core still held the GPU when a real
        # vLLM's close() returned (tests/bench/results/gpu-h100-vllm-contract.txt). Back only
        # once nothing of the group runs, so a model started next finds the memory free.
        _wait_group_gone(process.pid, timeout=10.0)
        self._log_file.close()

    @staticmethod
    def _signal_group(process: subprocess.Popen, sig: int) -> None:
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def group_members(pgid: int) -> list[int]:
    """The running processes of group `pgid` (zombies waiting for a parent to reap them, as
    under a container's init, hold nothing and do not count); empty without /proc."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone while we looked
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(stat.parent.name))
    return members


def group_alive(pgid: int) -> bool:
    return bool(group_members(pgid))


def _wait_group_gone(pgid: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while group_alive(pgid):
        if time.monotonic() > deadline:
            log.warning("processes of group %d still run %.0f s after SIGKILL", pgid, timeout)
            return
        time.sleep(0.05)
