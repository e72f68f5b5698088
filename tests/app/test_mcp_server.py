"""`docdesk mcp` as an editor runs it: the real server in a child process over stdio, driven by the
official MCP SDK's client, with a real library and retrieval and the fake model (whose replies say
which request they answer). One server serves the module's tests, as one serves an editor's session.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from anyio.from_thread import start_blocking_portal
from mcp import Client
from mcp.client.stdio import StdioServerParameters

pytestmark = pytest.mark.models  # the server embeds queries with the bundled model

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "assets" / "samples" / "docdesk-guide.pdf"
TOOLS = {"search_documents", "ask", "list_documents", "summarize_document", "get_page"}
# `docdesk mcp` whose fake model is slow: 400 different words (no loop to cut short), 50 ms each.
SLOW_MODEL_SERVER = """
import sys
from engine.backends import registry
from engine.backends.fake import FakeBackend
words = " ".join("word" + chr(97 + i % 26) + chr(97 + i // 26) for i in range(400))
registry._BUILDERS["fake"] = lambda settings, **_: FakeBackend(words, token_delay=0.05)
from app.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.fixture(scope="module")
def child_env(tmp_path_factory) -> dict[str, str]:
    """The parent's environment (PYTHONPATH carries the loopback-only socket guard) with the fake model."""
    home = tmp_path_factory.mktemp("mcp-config")
    config = home / "config.toml"
    config.write_text('[llm]\nbackend = "fake"\n', encoding="utf-8")
    return dict(os.environ, DOCDESK_CONFIG=str(config), DOCDESK_LOG_DIR=str(home / "logs"), HF_HUB_OFFLINE="1")


@pytest.fixture(scope="module")
def library(tmp_path_factory, child_env) -> Path:
    lib = tmp_path_factory.mktemp("mcp-library")
    added = subprocess.run(
        [sys.executable, "-m", "app", "--library", str(lib), "add", str(GUIDE)],
        cwd=ROOT,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert added.returncode == 0, added.stderr
    return lib


def server_command(library: Path) -> list[str]:
    return [sys.executable, "-m", "app", "--library", str(library), "mcp"]


class Session:
    """A connected SDK client, called from synchronous tests through an anyio portal."""

    def __init__(self, portal, client: Client) -> None:
        self.portal, self.client = portal, client

    def call(self, tool: str, **arguments):
        return self.portal.call(self.client.call_tool, tool, arguments)

    def ok(self, tool: str, **arguments) -> dict:
        result = self.call(tool, **arguments)
        assert not result.is_error, result.content
        assert json.loads(result.content[0].text) == result.structured_content  # the text form, for older clients
        return result.structured_content

    def error(self, tool: str, **arguments) -> str:
        result = self.call(tool, **arguments)
        assert result.is_error and result.structured_content is None
        return result.content[0].text


@contextmanager
def connect(args: list[str], env: dict[str, str]) -> Iterator[Session]:
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=ROOT)
    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(Client(params, read_timeout_seconds=120)) as client:
            yield Session(portal, client)


@pytest.fixture(scope="module")
def mcp(library, child_env):
    with connect(server_command(library)[1:], child_env) as session:
        yield session


def test_lists_exactly_the_five_tools_with_typed_inputs(mcp):
    tools = {t.name: t for t in mcp.portal.call(mcp.client.list_tools).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and tool.input_schema["type"] == "object" and tool.output_schema
        assert tool.annotations.read_only_hint is True  # nothing writes the library: editors may auto-run them
    search = tools["search_documents"].input_schema
    assert search["required"] == ["query"] and search["properties"]["k"]["default"] == 5
    assert search["properties"]["doc_ids"]["anyOf"][0] == {"items": {"type": "string"}, "type": "array"}
    assert tools["ask"].input_schema["required"] == ["question"]
    assert tools["list_documents"].input_schema["properties"] == {}
    summarize = tools["summarize_document"].input_schema
    assert summarize["required"] == ["document"] and summarize["properties"]["style"]["enum"] == ["brief", "detailed"]
    assert "ctx" not in summarize["properties"]  # the SDK's Context is injected, not asked for
    assert tools["get_page"].input_schema["required"] == ["document", "page"]
    assert mcp.client.server_info.name == "docdesk"


def test_search_finds_the_python_version_with_title_path_and_page(mcp):
    found = mcp.ok("search_documents", query="Which Python version does DocDesk need?", k=3)
    passages = found["passages"]
    assert 1 <= len(passages) <= 3 and [p["n"] for p in passages] == list(range(1, len(passages) + 1))
    top = passages[0]
    assert "3.11" in top["text"]
    assert top["title"] == "DocDesk User Guide" and top["path"] == str(GUIDE)
    assert top["page"] == 1 and top["page_end"] >= top["page"] and top["page_label"].startswith("p")
    assert top["score"] > 0 and len(top["doc_id"]) == 64

    # Restricted by an id prefix; an unknown id is an error, not an empty result.
    only = mcp.ok("search_documents", query="Python", doc_ids=[top["doc_id"][:12]])
    assert {p["doc_id"] for p in only["passages"]} == {top["doc_id"]}
    assert "no document 'feedfacefeed'" in mcp.error("search_documents", query="Python", doc_ids=["feedfacefeed"])
    assert "greater than or equal to 1" in mcp.error("search_documents", query="Python", k=0)


def test_ask_gives_a_cited_answer_and_its_sources(mcp):
    asked = mcp.ok("ask", question="Which Python version does DocDesk need?")
    assert asked["answer"].startswith("Fake reply to:") and asked["relevant"] is True
    assert asked["sources"]
    for source in asked["sources"]:
        assert set(source) >= {"n", "title", "path", "page", "cited", "text"}
        assert source["title"] == "DocDesk User Guide" and source["path"] == str(GUIDE) and source["page"] >= 1
    assert "3.11" in asked["sources"][0]["text"]

    declined = mcp.ok("ask", question="Who painted the Mona Lisa?")
    assert declined["relevant"] is False and declined["sources"] == [] and "nothing" in declined["answer"]


def test_asks_are_not_saved_as_chats(mcp, library, child_env):
    mcp.ok("ask", question="How do I add a folder?")
    chats = subprocess.run(
        [sys.executable, "-m", "app", "--library", str(library), "chats", "--json"],
        cwd=ROOT,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert chats.returncode == 0, chats.stderr
    assert json.loads(chats.stdout)["chats"] == []


def test_list_documents_lists_the_guide(mcp):
    docs = mcp.ok("list_documents")["documents"]
    assert [(d["title"], d["path"], d["pages"], d["status"], d["format"]) for d in docs] == [
        ("DocDesk User Guide", str(GUIDE), 7, "indexed", "pdf")
    ]


def test_get_page_reads_a_page_and_names_the_valid_range(mcp):
    doc_id = mcp.ok("list_documents")["documents"][0]["doc_id"]
    page = mcp.ok("get_page", document=doc_id, page=1)
    assert "Python 3.11" in page["text"].replace("\n", " ")
    assert (page["title"], page["path"], page["page"], page["pages"], page["page_label"]) == (
        "DocDesk User Guide",
        str(GUIDE),
        1,
        7,
        "p. 1",
    )
    assert page["ocr_confidence"] is None
    by_path = mcp.ok("get_page", document=str(GUIDE), page=7)
    assert by_path["page"] == 7 and by_path["text"] != page["text"]

    message = mcp.error("get_page", document=doc_id[:10], page=99)
    assert "no page 99" in message and "1–7" in message and "\n" not in message
    assert "no document 'missing.pdf'" in mcp.error("get_page", document="missing.pdf", page=1)
    assert mcp.ok("get_page", document=doc_id, page=2)["page"] == 2  # the server still answers


def test_summarize_document(mcp):
    summary = mcp.ok("summarize_document", document=str(GUIDE))
    assert "## Overview" in summary["summary"] and summary["title"] == "DocDesk User Guide"
    assert (summary["style"], summary["language"]) == ("brief", "en")
    detailed = mcp.ok("summarize_document", document=summary["doc_id"][:8], style="detailed", language="de")
    assert (detailed["style"], detailed["language"]) == ("detailed", "de")

    assert "no document 'nope.pdf'" in mcp.error("summarize_document", document="nope.pdf")
    assert "brief" in mcp.error("summarize_document", document=str(GUIDE), style="short")


def test_stdout_carries_only_protocol_messages(library, child_env, tmp_path):
    """What editors speak today (the 2025-06-18 handshake), byte by byte: every line the server
    writes to stdout is a JSON-RPC message, through the embedder's loading and a tool error; the
    logs go to stderr, and the server exits cleanly when its stdin closes."""
    with open(tmp_path / "stderr.txt", "w+", encoding="utf-8") as stderr:
        proc = subprocess.Popen(
            server_command(library),
            cwd=ROOT,
            env=child_env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            encoding="utf-8",
        )
        lines: queue.Queue[str] = queue.Queue()
        reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True)
        reader.start()

        def request(n: int, method: str, params: dict) -> dict:
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": n, "method": method, "params": params}) + "\n")
            proc.stdin.flush()
            message = json.loads(lines.get(timeout=120))
            assert message["jsonrpc"] == "2.0" and message["id"] == n, message
            return message

        try:
            client = {"name": "raw-test", "version": "0"}
            init = request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client})
            assert init["result"]["protocolVersion"] == "2025-06-18"
            assert init["result"]["serverInfo"]["name"] == "docdesk" and "tools" in init["result"]["capabilities"]
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
            listed = request(2, "tools/list", {})
            assert {t["name"] for t in listed["result"]["tools"]} == TOOLS
            found = request(3, "tools/call", {"name": "search_documents", "arguments": {"query": "Python version"}})
            assert "3.11" in found["result"]["structuredContent"]["passages"][0]["text"]
            failed = request(4, "tools/call", {"name": "get_page", "arguments": {"document": "nope", "page": 1}})
            assert failed["result"]["isError"] is True
            proc.stdin.close()
            assert proc.wait(timeout=30) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        reader.join(timeout=10)
        assert lines.empty()  # nothing after the answers: no stray output at shutdown
        stderr.seek(0)
        assert "Traceback" not in stderr.read()


def test_a_cancelled_ask_stops_the_model_and_the_server_goes_on(library, child_env):
    with connect(["-c", SLOW_MODEL_SERVER, "--library", str(library), "mcp"], child_env) as slow:
        slow.ok("search_documents", query="warm up the embedder")

        async def ask_and_give_up() -> bool:
            with anyio.move_on_after(1.5) as scope:  # the SDK sends notifications/cancelled
                await slow.client.call_tool("ask", {"question": "How does DocDesk search?"})
            return scope.cancelled_caught

        assert slow.portal.call(ask_and_give_up)  # uncancelled, its 400 tokens take 20 s
        started = time.perf_counter()
        assert slow.ok("list_documents")["documents"]  # library reads never wait for the model
        # The model's lane is free once the cancelled answer stopped at its next token. (This
        # question matches nothing, so it needs no model, but it queues behind any answer.)
        declined = slow.ok("ask", question="Who painted the Mona Lisa?")
        assert declined["relevant"] is False and time.perf_counter() - started < 5
