"""The service attacks' clients (issue 32): `docdesk serve` and `docdesk mcp` started as real
processes under the suite's meter (measure.py), with the fake model, spoken to as editors do: HTTP
on a loopback port, JSON-RPC lines on a pipe. Each run is a row's time and peak memory."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.reliability.harness import CLI_ROOT, MEASURE, Lab, Run, expect

# What a user may type where DocDesk expects a document, each once (issue 32's "ids that crash").
HOSTILE_REFS = {
    "~nosuchuser": "~nosuchuser",
    "100,000 characters": "a" * 100_000,
    "LIKE %": "%" * 8,
    "LIKE _": "_" * 8,
    "GLOB *": "*" * 8,
    "GLOB [": "[" * 8,
}


def fake_model(lab: Lab) -> None:
    """The fake model for every `docdesk` this lab runs (Lab.env's DOCDESK_CONFIG)."""
    (lab.work / "no-config.toml").write_text('[llm]\nbackend = "fake"\n', encoding="utf-8")


def limit_files(most: int) -> tuple[str, ...]:
    """A command prefix that runs the rest with at most `most` open files (soft and hard)."""
    code = (
        f"import os, resource, sys; resource.setrlimit(resource.RLIMIT_NOFILE, ({most}, {most})); "
        "os.execv(sys.argv[1], sys.argv[1:])"
    )
    return (sys.executable, "-c", code)


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Served:
    """`docdesk serve --port 0` (fake model) in the background; `url` once it listens."""

    def __init__(self, lab: Lab, library: Path, prefix: tuple[str, ...] = ()) -> None:
        fake_model(lab)
        self.running = lab.start(library, "serve", "--port", "0", prefix=prefix)
        self.url = self._wait_for_url()
        self.host, self.port = re.match(r"http://([^:/]+):(\d+)", self.url).groups()

    def _wait_for_url(self, timeout: float = 300) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = re.search(r"at (http://\S+/v1)", self.stderr())
            if found:
                return found.group(1)
            expect(self.running.alive(), f"serve did not start: {self.stderr()[-300:]}")
            time.sleep(0.1)
        raise AssertionError("serve did not listen within 5 minutes")

    def stderr(self) -> str:
        return Path(f"{self.running.report}.err").read_text(errors="replace")

    def stop(self) -> Run:
        os.kill(self.running.cli_pid(), signal.SIGINT)
        return self.running.finish(60)


def ask_body(question: str = "What does the kettle do?", **extension) -> dict:
    body = {"model": "docdesk", "messages": [{"role": "user", "content": question}]}
    return body | ({"docdesk": extension} if extension else {})


class McpPipe:
    """`docdesk mcp` under the meter, spoken to in raw JSON-RPC lines (so a line of any size can be sent)."""

    def __init__(self, lab: Lab, library: Path) -> None:
        fake_model(lab)
        self.lab = lab
        self.report = lab.work / f"run-{next(lab.counter)}"
        self.err = open(f"{self.report}.err", "w+")
        command = [sys.executable, str(MEASURE), str(self.report), sys.executable, "-m", "app", "mcp"]
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            command,
            cwd=CLI_ROOT,
            env=lab.env(library),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.err,
            start_new_session=True,
        )
        lab.cleanups.append(self._kill)
        self.next_id = 1
        init = self.request(
            "initialize", protocolVersion="2025-06-18", capabilities={}, clientInfo={"name": "attack", "version": "1"}
        )
        expect("result" in init, f"mcp did not initialize: {init}")
        self.send_line(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode())

    @property
    def pid(self) -> int:
        return int(Path(f"{self.report}.pid").read_text())

    def send_line(self, line: bytes) -> None:
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def receive(self) -> dict:
        line = self.process.stdout.readline()
        expect(line, f"mcp closed its stdout: {Path(f'{self.report}.err').read_text()[-300:]}")
        return json.loads(line)

    def request(self, method: str, **params) -> dict:
        self.next_id += 1
        self.send_line(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}).encode())
        return self.receive()

    def tool(self, name: str, **arguments) -> dict:
        reply = self.request("tools/call", name=name, arguments=arguments)
        expect("result" in reply, f"{name}: no result: {str(reply)[:200]}")
        return reply["result"]

    def close(self) -> Run:
        self.process.stdin.close()
        self.process.wait(60)
        meter = json.loads(Path(self.report).read_text())
        self.err.seek(0)
        run = Run(("mcp",), meter["rc"], "", self.err.read(), meter["seconds"], meter["peak_kb"] / 1024)
        self.err.close()
        self.lab.runs.append(run)
        return run

    def _kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
