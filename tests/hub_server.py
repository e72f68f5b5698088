"""A local stand-in for the Hugging Face Hub, as far as DocDesk and huggingface_hub talk to it.

It speaks the Hub's own routes: `POST /api/models/{repo}/paths-info/{revision}` (each file's size and
LFS sha256, as `HfApi.get_paths_info` reads them) and `/{repo}/resolve/{revision}/{file}`, which
answers, as the Hub does for LFS files, with a redirect to another host (`localhost` instead of
`127.0.0.1`, the CDN) carrying `X-Repo-Commit`, `X-Linked-Etag` and `X-Linked-Size`; the CDN serves
the bytes with ranges. The files are real GGUF files on disk. Every request is logged (method,
path, Range header, bytes sent) so tests can say what was fetched; `bytes_per_second` slows the
CDN down, so that a download can be killed in the middle.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass
class HubFile:
    path: Path
    sha256: str = ""  # what the Hub's LFS metadata says; "" = the file's real hash
    declared_size: int | None = None  # what the metadata says; None = the real size


@dataclass
class Logged:
    method: str
    path: str
    range: str | None
    sent: int = 0


@dataclass
class FakeHub:
    files: dict[tuple[str, str], HubFile] = field(default_factory=dict)
    bytes_per_second: float | None = None
    chunk_bytes: int = 64 * 1024  # what each write sends: 1 with a low bytes_per_second makes a trickle
    log: list[Logged] = field(default_factory=list)

    def add(self, repo: str, filename: str, path: Path, sha256: str = "", declared_size: int | None = None) -> None:
        self.files[(repo, filename)] = HubFile(Path(path), sha256 or sha256_of(path), declared_size)

    def start(self) -> FakeHub:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                hub._paths_info(self)

            def do_GET(self) -> None:  # noqa: N802
                hub._resolve(self, body=True)

            def do_HEAD(self) -> None:  # noqa: N802
                hub._resolve(self, body=False)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def requests_for(self, filename: str, method: str = "GET") -> list[Logged]:
        return [r for r in self.log if r.method == method and r.path.endswith("/" + filename)]

    # -- routes ------------------------------------------------------------------------------
    def _paths_info(self, handler) -> None:
        parts = urllib.parse.urlparse(handler.path).path.strip("/").split("/")
        self.log.append(Logged("POST", handler.path, None))
        if len(parts) < 6 or parts[:2] != ["api", "models"] or parts[4] != "paths-info":
            return self._send(handler, 404, b"{}")
        repo = f"{parts[2]}/{parts[3]}"
        length = int(handler.headers.get("Content-Length") or 0)
        form = urllib.parse.parse_qs(handler.rfile.read(length).decode())
        found = []
        for name in form.get("paths", []):
            entry = self.files.get((repo, name))
            if entry is None:
                continue
            size = entry.declared_size if entry.declared_size is not None else entry.path.stat().st_size
            found.append(
                {
                    "type": "file",
                    "oid": hashlib.sha1(entry.sha256.encode()).hexdigest(),
                    "size": size,
                    "path": name,
                    "lfs": {"oid": entry.sha256, "size": size, "pointerSize": 134},
                }
            )
        if not found and not any(r == repo for r, _ in self.files):
            return self._send(handler, 404, b'{"error": "Repository not found"}', {"X-Error-Code": "RepoNotFound"})
        self._send(handler, 200, json.dumps(found).encode(), {"Content-Type": "application/json"})

    def _resolve(self, handler, body: bool) -> None:
        path = urllib.parse.unquote(urllib.parse.urlparse(handler.path).path)
        parts = path.strip("/").split("/")
        logged = Logged(handler.command, path, handler.headers.get("Range"))
        self.log.append(logged)
        if parts[0] == "cdn" and len(parts) >= 4:
            entry = self.files.get((f"{parts[1]}/{parts[2]}", "/".join(parts[3:])))
            if entry is None:
                return self._send(handler, 404, b"not found")
            return self._serve(handler, entry, body, logged)
        if len(parts) >= 5 and parts[2] == "resolve":
            repo, name = f"{parts[0]}/{parts[1]}", "/".join(parts[4:])
            entry = self.files.get((repo, name))
            if entry is None:
                code = "EntryNotFound" if any(r == repo for r, _ in self.files) else "RepoNotFound"
                return self._send(handler, 404, b"not found", {"X-Error-Code": code})
            size = entry.declared_size if entry.declared_size is not None else entry.path.stat().st_size
            headers = {
                "Location": f"http://localhost:{self.port}/cdn/{repo}/{urllib.parse.quote(name)}",
                "X-Repo-Commit": COMMIT,
                "X-Linked-Etag": f'"{entry.sha256}"',
                "X-Linked-Size": str(size),
                "ETag": f'"{entry.sha256}"',
            }
            return self._send(handler, 302, b"", headers, body=body)
        self._send(handler, 404, b"not found")

    def _serve(self, handler, entry: HubFile, body: bool, logged: Logged) -> None:
        size = entry.path.stat().st_size
        start, end = 0, size - 1
        wanted = handler.headers.get("Range")
        if wanted and wanted.startswith("bytes="):
            first, _, last = wanted[6:].partition("-")
            start = int(first or 0)
            end = min(int(last), size - 1) if last else size - 1
            if start >= size:
                return self._send(handler, 416, b"", {"Content-Range": f"bytes */{size}"})
        handler.send_response(206 if wanted else 200)
        handler.send_header("Content-Length", str(end - start + 1))
        handler.send_header("Accept-Ranges", "bytes")
        handler.send_header("ETag", f'"{entry.sha256}"')
        if wanted:
            handler.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        handler.end_headers()
        if not body:
            return
        try:
            with entry.path.open("rb") as source:
                source.seek(start)
                left = end - start + 1
                while left > 0:
                    chunk = source.read(min(left, self.chunk_bytes))
                    handler.wfile.write(chunk)
                    left -= len(chunk)
                    logged.sent += len(chunk)
                    if self.bytes_per_second:
                        time.sleep(len(chunk) / self.bytes_per_second)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (killed, cancelled)

    def _send(self, handler, status: int, payload: bytes, headers: dict | None = None, body: bool = True) -> None:
        handler.send_response(status)
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        if body and payload:
            handler.wfile.write(payload)
