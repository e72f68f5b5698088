"""A stand-in OpenAI-compatible server for measuring DocDesk's own scheduling.

It is not a model: each request streams a fixed reply after a fixed delay, and it
serves up to `slots` requests at once (like vLLM's continuous batching). Run it as
`python tests/engine/standin_server.py PORT DELAY SLOTS`.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REPLY = ["This", " is", " a", " stand-in", " reply", "."]


def make_handler(delay: float, slots: threading.BoundedSemaphore):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # quiet
            pass

        def _json(self, payload: dict, status: int = 200) -> None:
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path in ("/health", "/v1/models"):
                self._json({"object": "list", "data": [{"id": "standin", "max_model_len": 4096}]})
            else:
                self._json({"error": {"message": "not found"}}, 404)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            request = json.loads(self.rfile.read(length) or b"{}")
            if request.get("model") != "standin":
                self._json({"error": {"message": f"The model `{request.get('model')}` does not exist."}}, 404)
                return
            with slots:
                time.sleep(delay)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for i, piece in enumerate(REPLY):
                    chunk = {
                        "choices": [
                            {
                                "index": 0,
                                "delta": {"content": piece},
                                "finish_reason": "stop" if i == len(REPLY) - 1 else None,
                            }
                        ]
                    }
                    self._chunk(f"data: {json.dumps(chunk)}\n\n")
                self._chunk("data: [DONE]\n\n")
                self._chunk("")

        def _chunk(self, text: str) -> None:
            data = text.encode()
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    return Handler


def serve(port: int, delay: float, slots: int) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", port), make_handler(delay, threading.BoundedSemaphore(slots)))
    server.daemon_threads = True
    return server


if __name__ == "__main__":
    port, delay, slots = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    serve(port, delay, slots).serve_forever()
