"""Attacks on the front doors (issue 32, items 3 and 4): ids and paths that are not what DocDesk
expects (`~nosuchuser`, 100,000 characters, LIKE and GLOB characters) through the CLI, `serve` and
MCP; a 50 MB JSON-RPC line; 1,100 connections that never finish their headers under a 1,024
open-file limit; `Origin: null`. Each through the real process, with the fake model."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import httpx

from tests.reliability.harness import NOTES, Lab, attack, documents, expect
from tests.reliability.service_clients import HOSTILE_REFS, McpPipe, Served, ask_body, fake_model, limit_files, rss_mb


def _one_document(lab: Lab) -> tuple[Path, str]:
    """A library holding one document (kettle.md): where a LIKE pattern matches exactly it."""
    library = lab.library()
    for name in NOTES:
        if name != "kettle.md":
            lab.docdesk(library, "remove", str(lab.shared.base / "template-notes" / name)).expect_clean(0)
    (kept,) = documents(lab, library)
    return library, kept["doc_id"]


@attack(
    "32: ids that are not ids, from the command line",
    "remove, ask --doc, summarize: one line 'no document …' and exit 2; add: one line and exit 1; "
    "never a traceback, and a LIKE pattern never removes a document",
)
def cli_refs(lab: Lab) -> str:
    library, doc_id = _one_document(lab)
    fake_model(lab)
    for label, ref in HOSTILE_REFS.items():
        run = lab.docdesk(library, "remove", ref)
        run.expect_clean(2)
        expect(
            run.error.startswith("docdesk: no document") and len(run.error) < 300, f"remove {label}: {run.error[:200]}"
        )
    for label in ("~nosuchuser", "100,000 characters"):
        ref = HOSTILE_REFS[label]
        for args in (("ask", "--doc", ref, "kettle?"), ("summarize", ref)):
            run = lab.docdesk(library, *args)
            run.expect_clean(2)
            expect(len(run.error) < 300, f"{args[0]} {label}: a line of {len(run.error)} characters")
        added = lab.docdesk(library, "add", ref)
        added.expect_clean(1)
        expect(len(added.json["failed"]) == 1, f"add {label}: {added.stdout[:200]}")
    expect([d["doc_id"] for d in documents(lab, library)] == [doc_id], "a document was removed")
    return (
        f"{len(HOSTILE_REFS)} refs × remove, 2 × ask/summarize/add: exit 2 (add 1), one line each, "
        "no traceback; the one document kept"
    )


def _post(url: str, body: dict | str, **headers) -> httpx.Response:
    content = body if isinstance(body, str) else None
    return httpx.post(
        f"{url}/chat/completions", json=None if content else body, content=content, headers=headers, timeout=30
    )


@attack(
    "32: ids that are not ids in serve's doc_ids; Origin: null",
    "404 document_not_found (400 past 1,000 ids) as OpenAI error objects, no traceback in the log; "
    "Origin: null with a text/plain body: 403; a real request still answered",
)
def serve_refs(lab: Lab) -> str:
    library, doc_id = _one_document(lab)
    served = Served(lab, library)
    try:
        for label, ref in HOSTILE_REFS.items():
            reply = _post(served.url, ask_body(doc_ids=[ref]))
            error = reply.json().get("error", {})
            expect(
                reply.status_code == 404 and error.get("code") == "document_not_found",
                f"{label}: {reply.status_code} {reply.text[:160]}",
            )
            expect(len(error["message"]) < 300, f"{label}: a message of {len(error['message'])} characters")
        many = _post(served.url, ask_body(doc_ids=[doc_id] * 1001))
        expect(many.status_code == 400, f"1,001 doc_ids: {many.status_code}")
        null = _post(
            served.url,
            '{"model": "docdesk", "messages": [{"role": "user", "content": "kettle?"}]}',
            Origin="null",
            **{"Content-Type": "text/plain"},
        )
        expect(null.status_code == 403, f"Origin: null: {null.status_code} {null.text[:120]}")
        real = _post(served.url, ask_body(doc_ids=[doc_id[:8]]))
        expect(real.status_code == 200 and "Fake reply" in real.text, f"a real request: {real.status_code}")
    finally:
        stopped = served.stop()
    stopped.expect_clean(0)
    expect("Traceback" not in stopped.stderr, f"a traceback in serve's log: {stopped.stderr[-300:]}")
    return f"{len(HOSTILE_REFS)} refs: 404 with one-line messages; 1,001 ids: 400; Origin: null: 403; real: 200; serve exit 0"


def _half_open(host: str, port: int, count: int) -> list[socket.socket]:
    """`count` connections that send the start of a request head and never finish it."""
    held = []
    for _ in range(count):
        sock = socket.create_connection((host, port), timeout=5)
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        held.append(sock)
    return held


def _closed_by_server(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


@attack(
    "32: 1,100 half-open connections under a 1,024 open-file limit",
    "a real request is answered within a second while they are held; each is closed within its head deadline (10 s)",
    slow=True,
    connections=1100,
    files=1024,
)
@attack(
    "32: 600 half-open connections under a 512 open-file limit",
    "a real request is answered within a second while they are held; each is closed within its head deadline (10 s)",
    connections=600,
    files=512,
)
def starved(lab: Lab, connections: int, files: int) -> str:
    library = lab.library()
    served = Served(lab, library, prefix=limit_files(files))
    held: list[socket.socket] = []
    try:
        opening = time.monotonic()
        held = _half_open(served.host, int(served.port), connections)
        began = time.monotonic()  # the last one opened: its deadline is 10 s from about now
        real = _post(served.url, ask_body())
        answered_s = time.monotonic() - began
        expect(real.status_code == 200, f"the real request: {real.status_code} {real.text[:120]}")
        expect(answered_s < 1.0, f"the real request took {answered_s:.2f} s")
        time.sleep(max(0.0, began + 12 - time.monotonic()))  # the head deadline, and a margin
        still_open = sum(not _closed_by_server(sock) for sock in held)
        expect(
            still_open == 0,
            f"{still_open} of {connections} half-open connections still open 12 s after the last opened",
        )
    finally:
        for sock in held:
            sock.close()
        stopped = served.stop()
    stopped.expect_clean(0)
    expect("Too many open files" not in stopped.stderr, "the server ran out of open files")
    return f"{connections} half-open opened in {began - opening:.1f} s; real request 200 in {answered_s * 1000:.0f} ms beside them; all closed within 12 s of the last; serve exit 0"


@attack(
    "32: ids that are not ids in MCP's get_page, ask and search_documents",
    "a tool error with DocDesk's one-line message ('no document …'), never 'LIKE or GLOB pattern too complex'",
)
def mcp_refs(lab: Lab) -> str:
    library, _ = _one_document(lab)
    mcp = McpPipe(lab, library)
    try:
        for label, ref in HOSTILE_REFS.items():
            for name, arguments in (
                ("get_page", {"document": ref, "page": 1}),
                ("ask", {"question": "kettle?", "doc_ids": [ref]}),
                ("search_documents", {"query": "kettle", "doc_ids": [ref]}),
            ):
                result = mcp.tool(name, **arguments)
                text = result["content"][0]["text"]
                expect(
                    result.get("isError") and "no document" in text and len(text) < 300, f"{name} {label}: {text[:200]}"
                )
    finally:
        run = mcp.close()
    run.expect_clean(0)
    return f"{len(HOSTILE_REFS)} refs × 3 tools: tool errors 'no document …' in one line; mcp exit 0"


@attack(
    "32: a 50 MB JSON-RPC line to MCP",
    "refused with a JSON-RPC error for its id within seconds; memory returned (RSS after within 50 MB of before); the next call answered",
    slow=True,
    megabytes=50,
)
@attack(
    "32: a 5 MB JSON-RPC line to MCP",
    "refused with a JSON-RPC error for its id within seconds; memory returned (RSS after within 50 MB of before); the next call answered",
    megabytes=5,
)
def mcp_huge_line(lab: Lab, megabytes: int) -> str:
    import json

    library = lab.library()
    mcp = McpPipe(lab, library)
    try:
        mcp.tool("search_documents", query="kettle")  # the embedder loaded: memory as it serves
        before = rss_mb(mcp.pid)
        words = "word " * (megabytes * 1_000_000 // 5)
        for first in (True, False):  # the id first, as SDKs write it, and last
            head = {"jsonrpc": "2.0", "id": 77} if first else {"jsonrpc": "2.0"}
            message = head | {
                "method": "tools/call",
                "params": {"name": "search_documents", "arguments": {"query": words}},
            }
            message |= {} if first else {"id": 77}
            began = time.monotonic()
            mcp.send_line(json.dumps(message).encode())
            reply = mcp.receive()
            took = time.monotonic() - began
            expect(reply.get("id") == 77 and reply.get("error", {}).get("code") == -32600, f"reply: {str(reply)[:200]}")
            expect(took < 30, f"refused after {took:.0f} s")
        after = rss_mb(mcp.pid)
        expect(after - before < 50, f"RSS {before:.0f} MB → {after:.0f} MB")
        listed = mcp.tool("list_documents")
        expect(not listed.get("isError"), "the next call failed")
    finally:
        run = mcp.close()
    run.expect_clean(0)
    return f"{megabytes} MB line (id first, then last): -32600 in {took:.1f} s; RSS {before:.0f} → {after:.0f} MB; next call answered"
