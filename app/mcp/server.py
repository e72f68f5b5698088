"""`docdesk mcp`: the library as a Model Context Protocol server on stdin/stdout, for editors and agents.

Built on the official SDK's high-level `MCPServer` (mcp 2.x; FastMCP in 1.x): each tool is a typed
method whose signature is its input schema and whose TypedDict result is its output schema. Five
tools: search_documents, ask, list_documents, summarize_document, get_page.

The DocDesk calls block (SQLite, the embedder, the model), so each runs on a worker thread while the
event loop keeps reading stdin. As in the window (app/gui/tasks.py), the model works on one request
at a time and library reads queue on their own lane, so a quick search is not stuck behind a long
summary. A cancelled request (or a client that goes away) sets the `cancel` event the engine checks
between tokens. While the SDK serves, fd 1 points at stderr: only protocol messages reach stdout.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Literal, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field
from typing_extensions import TypedDict  # pydantic needs it for TypedDicts nested in results below 3.12

from app import __version__
from app.desk.answering import final_answer
from app.desk.errors import explain
from app.desk.refs import MAX_DOC_IDS, shown_ref
from app.mcp.stdio import INVALID_REQUEST, BoundedLines, stdin_claimed, too_large
from engine.prompts import SUMMARY_STYLE_NAMES, summary_styles_help
from ingest.readers.registry import supported_formats_text
from ingest.records import page_label

T = TypeVar("T")
R = TypeVar("R")


def instructions() -> str:
    """What an editor's model is told about DocDesk; the formats come from the format table."""
    return f"""\
DocDesk is the user's local, private document library ({supported_formats_text()}; scans read by
OCR). Nothing leaves the machine. search_documents finds passages quickly, with no model; ask has
DocDesk's local model answer from them, citing [n]; get_page reads a whole page; summarize_document
summarizes one document (slow on a CPU). Ids come from list_documents or from search results. Cite
what you use as "title, page"."""


# Tools that only read: editors may run them without asking each time. The summary cache they
# fill is a cache, and asks are not saved as chats (see DocDeskTools.ask).
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

DocRefs = Annotated[
    list[str] | None,
    Field(
        description="Only these documents: ids from list_documents (an id prefix of 8+ characters or the path also works)"
    ),
]
DocRef = Annotated[str, Field(description="The document: its id from list_documents, an id prefix, or its file path")]


class _Quoted(TypedDict):
    """A passage of a document; `page_label` is how to cite its pages ("p. 3", "pp. 3–4")."""

    n: int
    doc_id: str
    title: str
    path: str
    page: int
    page_end: int
    page_label: str
    text: str


class Passage(_Quoted):
    """A passage search found; `score` ranks them, best first."""

    score: float


class SearchResults(TypedDict):
    query: str
    passages: list[Passage]


class Source(_Quoted):
    """A passage the answer was given; `cited`: the answer cites it as [n]."""

    cited: bool


class CitedAnswer(TypedDict):
    """`relevant` is false when nothing in the library matched: the answer says so, no model was asked."""

    answer: str
    sources: list[Source]
    relevant: bool


class Document(TypedDict):
    """`status` is "indexed" when searchable; otherwise `reason` says why not."""

    doc_id: str
    title: str
    path: str
    format: str
    pages: int
    passages: int
    status: str
    reason: str
    language: str
    ocr_pages: int


class Documents(TypedDict):
    documents: list[Document]


class DocumentSummary(TypedDict):
    """`summary` is Markdown: an overview, then key points with their pages."""

    doc_id: str
    title: str
    style: str
    language: str
    summary: str


class PageText(TypedDict):
    """One page's text; `ocr_confidence` is set when it was read from the page image."""

    doc_id: str
    title: str
    path: str
    page: int
    page_label: str
    pages: int
    text: str
    ocr_confidence: float | None


def _only(record: type[R], values: dict[str, Any], **more: Any) -> R:
    """A result with exactly its TypedDict's keys: the SDK validates the structured result (dropping
    extra keys) but writes the text form for older clients from what the tool returned."""
    values = {**values, **more}
    return record(**{key: values[key] for key in record.__annotations__})  # type: ignore[call-arg]


@contextmanager
def _as_tool_errors(desk) -> Iterator[None]:
    """What a user can cause (an unknown document, a damaged or full library, a model that fails to
    load) comes back as a tool error with DocDesk's one-line message, the CLI's wording. Anything
    else is a bug: the SDK logs its traceback to stderr and tells the client only that the tool failed."""
    try:
        yield
    except ToolError:
        raise
    except Exception as exc:
        explained = explain(exc, desk.settings.library)
        if explained is None:
            raise
        raise ToolError(explained[0]) from exc


async def _set_when_done(cancel: threading.Event) -> None:
    try:
        await anyio.sleep_forever()
    finally:  # cancelled: the request was, the client went away, or the work is finished
        cancel.set()


def _outcome(work: Callable[[threading.Event], T], cancel: threading.Event) -> tuple[T | None, Exception | None]:
    # Returned, not raised: an error raised in a task group would reach the SDK as an ExceptionGroup.
    try:
        return work(cancel), None
    except Exception as exc:
        return None, exc


class DocDeskTools:
    """The tools over one DocDesk façade. The docstrings of the public methods are what the client's
    model reads to choose a tool, and their signatures are the input schemas."""

    def __init__(self, desk) -> None:
        self.desk = desk
        self._engine = anyio.CapacityLimiter(1)  # the model: asks and summaries, one at a time
        self._store = anyio.CapacityLimiter(1)  # library reads and searches

    async def _off_loop(self, lane: anyio.CapacityLimiter, work: Callable[[threading.Event], T]) -> T:
        """work(cancel) on a worker thread in its lane. The thread is waited for, never abandoned, even
        when the request is cancelled: it stops at the next token and leaves the library consistent."""
        cancel = threading.Event()
        with _as_tool_errors(self.desk):
            async with anyio.create_task_group() as watcher:
                watcher.start_soon(_set_when_done, cancel)
                try:
                    result, error = await anyio.to_thread.run_sync(_outcome, work, cancel, limiter=lane)
                finally:
                    watcher.cancel_scope.cancel()
            if error is not None:
                raise error
            return result

    def _document(self, ref: str):
        doc = self.desk.library.resolve(ref)
        if doc is None:
            raise ToolError(f"no document {shown_ref(ref)} in the library: list_documents gives the ids")
        return doc

    def _doc_ids(self, refs: list[str] | None) -> list[str] | None:
        if refs and len(refs) > MAX_DOC_IDS:
            raise ToolError(f"doc_ids names {len(refs):,} documents: at most {MAX_DOC_IDS:,} at once")
        return [self._document(ref).id for ref in refs] if refs else None

    async def search_documents(
        self,
        query: Annotated[str, Field(description="What to look for: words, a phrase or a question")],
        k: Annotated[int, Field(ge=1, le=50, description="How many passages to return")] = 5,
        doc_ids: DocRefs = None,
    ) -> SearchResults:
        """Search the user's document library: keyword and semantic search combined, no model involved,
        so it is fast. Returns the best passages first, each with its document's title, path and pages.
        Use it to find where something is written and to read the passages yourself."""

        def search(_cancel: threading.Event) -> SearchResults:
            result = self.desk.search(query, k, self._doc_ids(doc_ids))
            passages = []
            for n, hit in enumerate(result.hits, 1):
                p = hit.passage
                label = page_label(p.page, p.page_end, p.synthetic_pages)
                passages.append(_only(Passage, hit.as_dict(), n=n, page_label=label))
            return SearchResults(query=query, passages=passages)

        return await self._off_loop(self._store, search)

    async def ask(
        self,
        question: Annotated[str, Field(description="The question, in the user's words (English or Chinese)")],
        doc_ids: DocRefs = None,
    ) -> CitedAnswer:
        """Answer a question from the user's documents with DocDesk's local model: it finds passages
        and writes a short answer that cites them as [n], n being a source's `n`. Each call stands
        alone (no memory of earlier calls). Slower than search_documents: a local model writes it."""

        def answer(cancel: threading.Event) -> CitedAnswer:
            # Not saved as a chat, unlike `docdesk ask`: an agent asks many one-off questions that
            # would bury the user's own chats in the window, the editor keeps the transcript itself,
            # and so no tool writes the user's library (they are read-only, and a read-only library
            # serves the same).
            events = self.desk.answer(question, self._doc_ids(doc_ids), save_chat=False, cancel=cancel)
            reply = final_answer(events)
            sources = [_only(Source, s.to_json()) for s in reply.given]
            return CitedAnswer(answer=reply.text, sources=sources, relevant=reply.relevant)

        return await self._off_loop(self._engine, answer)

    async def list_documents(self) -> Documents:
        """List the documents in the library: id, title, path, format, pages, and status ("indexed"
        when searchable). The ids are what doc_ids, summarize_document and get_page take."""
        return await self._off_loop(self._store, self._documents)

    def _documents(self, _cancel: threading.Event) -> Documents:
        return Documents(documents=[_only(Document, d.as_dict()) for d in self.desk.documents()])

    async def summarize_document(
        self,
        document: DocRef,
        ctx: Context,
        style: Annotated[Literal[SUMMARY_STYLE_NAMES], Field(description=summary_styles_help())] = "brief",
        language: Annotated[
            str | None, Field(description="Write in this language (en, zh, de, ...); default: the document's")
        ] = None,
    ) -> DocumentSummary:
        """Summarize one whole document with DocDesk's local model: an overview and key points, each
        with the pages it covers. Can take minutes for a long document on a CPU (progress is reported);
        finished parts are cached, so asking again is quick."""
        doc = await self._off_loop(self._store, lambda _c: self._document(document))
        report = _progress_reporter(ctx)

        def summarize(cancel: threading.Event) -> DocumentSummary:
            with self.desk.doing("summarizing", document=doc.title or doc.path):
                summary = self.desk.summarizer().summarize(doc.id, style, language, report, cancel)
            return _only(DocumentSummary, summary.as_dict())

        return await self._off_loop(self._engine, summarize)

    async def get_page(
        self, document: DocRef, page: Annotated[int, Field(description="The page number, from 1")]
    ) -> PageText:
        """Read the whole text of one page of a document, e.g. around a passage search_documents found.
        Formats without pages (Markdown, Word, HTML) have pages of about 3,000 characters."""

        def read(_cancel: threading.Event) -> PageText:
            doc = self._document(document)
            pages = self.desk.pages(doc.id)
            found = next((p for p in pages if p.number == page), None)
            if found is None:
                name = doc.title or doc.path
                if not pages:
                    raise ToolError(
                        f"{name!r} has no pages to read ({doc.status}{': ' if doc.reason else ''}{doc.reason})"
                    )
                raise ToolError(f"no page {page} in {name!r}: its pages are {pages[0].number}–{pages[-1].number}")
            ocr = self.desk.ocr_page(doc.id, page) if doc.ocr_pages else None
            return PageText(
                doc_id=doc.id,
                title=doc.title,
                path=doc.path,
                page=page,
                page_label=page_label(page, synthetic=doc.synthetic_pages),
                pages=len(pages),
                text=found.text,
                ocr_confidence=None if ocr is None else round(ocr.confidence, 3),
            )

        return await self._off_loop(self._store, read)


def _progress_reporter(ctx: Context) -> Callable[[Any], None]:
    """A summary's progress as MCP progress notifications (a no-op unless the client asked for them).
    Called on worker threads; the counter only grows, as the protocol wants, across the stages."""
    token = anyio.lowlevel.current_token()
    steps = itertools.count(1)

    def report(progress) -> None:
        message = f"{progress.stage}: {progress.done} of {progress.total} parts"
        try:
            anyio.from_thread.run(ctx.report_progress, next(steps), None, message, token=token)
        except Exception:  # progress is best effort: the client went away, the loop is closing
            pass

    return report


def build_server(desk) -> MCPServer:
    server = MCPServer("docdesk", title="DocDesk", instructions=instructions(), version=__version__)
    tools = DocDeskTools(desk)
    titles = {
        tools.search_documents: "Search documents",
        tools.ask: "Ask the documents",
        tools.list_documents: "List documents",
        tools.summarize_document: "Summarize a document",
        tools.get_page: "Read a page",
    }
    for method, title in titles.items():
        server.tool(title=title, annotations=READ_ONLY)(method)
    return server


def run_stdio(desk) -> int:
    """Serve until the client closes stdin. The CLI closes `desk` afterwards."""
    anyio.run(_serve_stdio, build_server(desk))
    return 0


async def _serve_stdio(server: MCPServer) -> None:
    """MCPServer.run("stdio"), its stdin read by app/mcp/stdio.py: a message over MAX_MESSAGE_BYTES
    gets a JSON-RPC error and is never held whole."""
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage
    from mcp_types import ErrorData, JSONRPCError

    with stdin_claimed() as wire:
        lines = BoundedLines(wire)
        async with stdio_server(stdin=lines) as (read, write):  # type: ignore[arg-type]

            async def refuse(message_id: int | str | None, size: int) -> None:
                error = ErrorData(code=INVALID_REQUEST, message=too_large(lines.limit, size))
                await write.send(SessionMessage(JSONRPCError(jsonrpc="2.0", id=message_id, error=error)))

            lines.refuse = refuse
            lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs, on our stdin
            await lowlevel.run(read, write, lowlevel.create_initialization_options())
