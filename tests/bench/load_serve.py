"""Many editors at once against `docdesk serve`: N concurrent clients for a bounded time, each
asking, reading its stream to `data: [DONE]`, and asking again; a 429 is honoured by waiting
its Retry-After. The server runs in its own process, so its memory is measured alone.

    python tests/bench/load_serve.py --library LIB [--clients 50] [--seconds 30]
        [--fake-delay 0.01 --slots 8 | --config config.toml] [--queue 64] [--out result.json]

--fake-delay serves the fake backend (a token every that many seconds, `--slots` at once): what
is measured is DocDesk's server, not a model. --config serves whatever backend that config.toml
names, e.g. llama.cpp. Prints the JSON it writes; tests/app/test_serve_load.py asserts on it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

QUESTIONS = [
    "Which Python version does DocDesk need?",
    "How do I add documents to the library?",
    "What does DocDesk do when a PDF is encrypted?",
    "How are answers cited?",
    "DocDesk 需要哪个版本的 Python？",
]


@dataclass
class LoadResult:
    clients: int
    seconds: float
    requests: int = 0
    completed: int = 0  # 200, every chunk parsed, the closing chunk with sources, then [DONE]
    busy: int = 0  # 429 answers
    retry_after_s: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # anything else: the load test fails on one
    most_streams_at_once: int = 0  # as the clients saw them: a stream counts until read, after its slot moved on
    ttft_ms: list[float] = field(default_factory=list)
    rss_mb: list[float] = field(default_factory=list)  # the server's, once a second

    def summary(self) -> dict:
        def pct(values: list[float], p: float) -> float | None:
            ordered = sorted(values)
            return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))], 1) if ordered else None

        third = max(1, len(self.rss_mb) // 3)
        return {
            "clients": self.clients,
            "seconds": self.seconds,
            "requests": self.requests,
            "completed": self.completed,
            "answers_per_s": round(self.completed / self.seconds, 2),
            "busy_429": self.busy,
            "retry_after_s": sorted(set(self.retry_after_s)),
            "errors": self.errors[:10],
            "error_count": len(self.errors),
            "most_streams_at_once": self.most_streams_at_once,
            "ttft_ms_p50": pct(self.ttft_ms, 0.5),
            "ttft_ms_p95": pct(self.ttft_ms, 0.95),
            "rss_mb_after_first_third": round(self.rss_mb[third - 1], 1) if self.rss_mb else None,
            "rss_mb_end": round(self.rss_mb[-1], 1) if self.rss_mb else None,
            "rss_mb_max": round(max(self.rss_mb), 1) if self.rss_mb else None,
        }


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


# -- the server ---------------------------------------------------------------------------------------
def _serve_fake(library: str, delay: float, slots: int, queue: int, standin: bool = False) -> None:
    """In the server process: `docdesk serve` on the library with the fake backend (and, with
    `standin`, the tests' stand-in embedder, for a library it embedded: no model loads)."""
    from app.desk.serve_settings import ServeSettings
    from app.desk.services import DocDesk
    from app.desk.settings import Settings
    from app.serve.runner import serve_until_stopped
    from engine.backends.fake import FakeBackend

    words = " ".join("word" + chr(97 + i % 26) + chr(97 + i // 26 % 26) for i in range(60))
    backend = FakeBackend(f"From the guide [1]: {words}.", token_delay=delay, max_concurrency=slots)
    embedder = None
    if standin:
        from tests.standin_embedder import HashingEmbedder

        embedder = HashingEmbedder()
    desk = DocDesk(Settings(library=Path(library)), backend=backend, embedder=embedder)
    try:
        serve_until_stopped(desk, ServeSettings(port=0, queue=queue))
    finally:
        desk.close()


def _serve_config_standin(library: str, config: str, queue: int) -> None:
    """In the server process: `docdesk serve` on the library with the backend `config` names and
    the tests' stand-in embedder (for a library it embedded: no embedding model needed, as on a
    GPU machine that has only the kit)."""
    from app.desk.serve_settings import ServeSettings
    from app.desk.services import DocDesk
    from app.desk.settings import load_settings
    from app.serve.runner import serve_until_stopped
    from tests.standin_embedder import HashingEmbedder

    desk = DocDesk(load_settings(Path(config), library), embedder=HashingEmbedder())
    try:
        serve_until_stopped(desk, ServeSettings(port=0, queue=queue))
    finally:
        desk.close()


class Server:
    """`docdesk serve` in a child process; `url` once it listens."""

    def __init__(
        self,
        library: Path,
        *,
        config: Path | None = None,
        fake_delay: float | None = None,
        slots: int = 8,
        queue: int = 64,
        standin_embedder: bool = False,
    ):
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        if fake_delay is not None or standin_embedder:
            if fake_delay is not None:
                call = f"_serve_fake({str(library)!r}, {fake_delay}, {slots}, {queue}, {standin_embedder})"
            else:
                call = f"_serve_config_standin({str(library)!r}, {str(config)!r}, {queue})"
            code = (
                f"import sys; sys.path.insert(0, {str(ROOT)!r}); from tests.bench import load_serve; load_serve.{call}"
            )
            command = [sys.executable, "-c", code]
        else:
            command = [
                sys.executable,
                "-m",
                "app",
                "--library",
                str(library),
                "serve",
                "--port",
                "0",
                "--queue",
                str(queue),
            ]
            env["DOCDESK_CONFIG"] = str(config)
        self.log: list[str] = []
        self._reader: threading.Thread | None = None  # drains stderr into `log` once the server listens
        self.process = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
        self.url = self._wait_for_url()

    def _wait_for_url(self, timeout: float = 300) -> str:
        deadline = time.monotonic() + timeout
        lines = []
        while time.monotonic() < deadline:
            line = self.process.stderr.readline()
            if not line and self.process.poll() is not None:
                break
            lines.append(line)
            found = re.search(r"at (http://\S+/v1)", line)
            if found:
                self._drain()
                return found.group(1)
        self.stop()
        raise RuntimeError("docdesk serve did not start:\n" + "".join(lines[-20:]))

    def _drain(self) -> None:
        self._reader = threading.Thread(target=lambda: self.log.extend(self.process.stderr), daemon=True)
        self._reader.start()

    def most_answers_at_once(self) -> int | None:
        """The server's own count, from its closing line (after stop()): the client cannot tell,
        it sees a stream open until it has read it, after the server has handed the slot on."""
        for line in self.log:
            found = re.search(r"at most (\d+) at once", line)
            if found:
                return int(found.group(1))
        return None

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(2)  # Ctrl-C
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
        code = self.process.wait()
        if self._reader is not None:
            self._reader.join(10)
        return code


# -- the clients ----------------------------------------------------------------------------------------
async def _client(http, url: str, n: int, end: float, result: LoadResult, open_streams: list[int]) -> None:
    i = n
    while time.monotonic() < end:
        body = {
            "model": "docdesk",
            "stream": True,
            "messages": [{"role": "user", "content": QUESTIONS[i % len(QUESTIONS)]}],
        }
        i += 1
        result.requests += 1
        started = time.monotonic()
        try:
            async with http.stream("POST", f"{url}/chat/completions", json=body) as response:
                if response.status_code == 429:
                    result.busy += 1
                    wait = int(response.headers["retry-after"])
                    result.retry_after_s.append(wait)
                    await asyncio.sleep(min(wait, max(0.0, end - time.monotonic())))
                    continue
                if response.status_code != 200:
                    result.errors.append(f"{response.status_code}: {(await response.aread())[:200]!r}")
                    continue
                open_streams[0] += 1
                result.most_streams_at_once = max(result.most_streams_at_once, open_streams[0])
                try:
                    done = await _read_stream(response, started, result)
                finally:
                    open_streams[0] -= 1
                if done:
                    result.completed += 1
        except Exception as exc:  # a transport error is an error of the server under test
            result.errors.append(f"{type(exc).__name__}: {exc}")


async def _read_stream(response, started: float, result: LoadResult) -> bool:
    first, sources, done = None, False, False
    async for line in response.aiter_lines():
        if not line:
            continue
        if done or not line.startswith("data: "):
            result.errors.append(f"unexpected line {line[:80]!r}")
            return False
        if line == "data: [DONE]":
            done = True
            continue
        chunk = json.loads(line[6:])
        if "error" in chunk:
            result.errors.append(f"error event: {chunk['error'].get('message', '')[:200]}")
            return False
        delta = chunk["choices"][0]["delta"] if chunk["choices"] else {}
        if delta.get("content") and first is None:
            first = time.monotonic()
            result.ttft_ms.append((first - started) * 1000)
        sources = sources or "sources" in chunk
    if not (done and sources):
        result.errors.append(f"stream ended early (sources: {sources}, [DONE]: {done})")
    return done and sources


async def _load(url: str, clients: int, seconds: float, pid: int | None) -> LoadResult:
    import httpx

    result = LoadResult(clients, seconds)
    end = time.monotonic() + seconds
    open_streams = [0]

    async def sample() -> None:
        while time.monotonic() < end:
            if pid:
                result.rss_mb.append(rss_mb(pid))
            await asyncio.sleep(1)

    limits = httpx.Limits(max_connections=clients + 5, max_keepalive_connections=clients + 5)
    timeout = httpx.Timeout(connect=10, read=300, write=10, pool=60)
    async with httpx.AsyncClient(limits=limits, timeout=timeout) as http:
        await asyncio.gather(sample(), *(_client(http, url, n, end, result, open_streams) for n in range(clients)))
    return result


def run_load(url: str, clients: int, seconds: float, pid: int | None = None) -> LoadResult:
    return asyncio.run(_load(url, clients, seconds, pid))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", type=Path, required=True)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--fake-delay", type=float, help="serve the fake backend, a token every this many seconds")
    parser.add_argument("--slots", type=int, default=8, help="the fake backend's max_concurrency")
    parser.add_argument("--config", type=Path, help="serve the backend this config.toml names")
    parser.add_argument("--queue", type=int, default=64)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    server = Server(args.library, config=args.config, fake_delay=args.fake_delay, slots=args.slots, queue=args.queue)
    try:
        result = run_load(server.url, args.clients, args.seconds, server.process.pid)
    finally:
        code = server.stop()
    report = {
        **result.summary(),
        "server_most_answers_at_once": server.most_answers_at_once(),
        "server_exit": code,
        "backend": "fake" if args.fake_delay is not None else str(args.config),
    }
    text = json.dumps(report, indent=2, ensure_ascii=False)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
