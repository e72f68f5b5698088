"""The `docdesk` command line: its commands and options (app/cli/main.py runs them)."""

from __future__ import annotations

import argparse

from app.cli.model_flags import add_setting_flags
from engine.prompts import SUMMARY_STYLE_NAMES, summary_styles_help
from ingest.readers.registry import supported_formats_text


def _common_options(suppress_defaults: bool) -> argparse.ArgumentParser:
    """Options accepted before and after the command. After it, defaults are suppressed so
    that `docdesk --library X add` keeps X instead of the subcommand's default None."""
    common = argparse.ArgumentParser(add_help=False)
    default = {"default": argparse.SUPPRESS} if suppress_defaults else {}
    add_setting_flags(common, "common", suppress_defaults)  # --library, --embedding-model
    common.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout", **default)
    common.add_argument("-v", "--verbose", action="store_true", help="log details to stderr", **default)
    return common


def _add_library_commands(commands, common: argparse.ArgumentParser) -> None:
    """The commands that change or read the library itself (no model needed)."""
    add = commands.add_parser(
        "add",
        parents=[common],
        help="add files or folders to the library",
        description=f"Add files or folders to the library. DocDesk reads {supported_formats_text()}.",
    )
    add.add_argument("paths", nargs="+", metavar="PATH")
    add.add_argument("--password", help="password for encrypted PDFs")

    commands.add_parser("list", parents=[common], help="list the documents in the library")

    remove = commands.add_parser("remove", parents=[common], help="remove a document (by id or path)")
    remove.add_argument("refs", nargs="+", metavar="DOC_ID|PATH")

    sync = commands.add_parser(
        "sync", parents=[common], help="rescan remembered folders: new, changed and deleted files"
    )
    sync.add_argument(
        "--confirm-removals",
        action="store_true",
        help="remove the documents of a folder whose files are all or mostly gone (held otherwise)",
    )

    commands.add_parser(
        "repair",
        parents=[common],
        help="set a damaged library database aside, keep its folders, files and chats, and index the files again",
    )

    commands.add_parser(
        "reembed",
        parents=[common],
        help="embed the library with the embedding model of these settings now, also back to one it was "
        "converted away from (another DocDesk still set to the old model never converts it back by itself)",
    )

    search = commands.add_parser("search", parents=[common], help="hybrid search over the library")
    search.add_argument("query", nargs="+")
    search.add_argument("-k", type=int, default=5, help="number of results (default 5)")
    search.add_argument("--doc", action="append", metavar="DOC_ID", help="restrict to a document (repeatable)")


def _add_serving_commands(commands, common: argparse.ArgumentParser, model: argparse.ArgumentParser) -> None:
    """The library and its cited answers for other programs: editors, agents, a small team."""
    serve = commands.add_parser(
        "serve",
        parents=[common, model],
        help='an OpenAI-compatible endpoint (model "docdesk") that answers from the library, with sources',
    )
    add_setting_flags(serve, "serve")  # --host, --port, --token, --queue

    commands.add_parser(
        "mcp",
        parents=[common, model],
        help="a Model Context Protocol server on stdin/stdout: search, ask, list, summarize, read a page",
    )


def build_parser() -> argparse.ArgumentParser:
    common = _common_options(suppress_defaults=True)
    parser = argparse.ArgumentParser(
        prog="docdesk",
        description="DocDesk: a private assistant for your documents.",
        parents=[_common_options(suppress_defaults=False)],
    )
    from app import __version__

    parser.add_argument("--version", action="version", version=f"DocDesk {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    _add_library_commands(commands, common)

    model = argparse.ArgumentParser(add_help=False)
    add_setting_flags(model, "model")  # --backend, --model, --url, --threads, --threads-batch

    ask = commands.add_parser("ask", parents=[common, model], help="answer a question from the library, with citations")
    ask.add_argument("question", nargs="+")
    ask.add_argument("--doc", action="append", metavar="DOC_ID", help="only these documents (repeatable)")
    ask.add_argument("--chat", metavar="CHAT_ID", help="continue a chat (see `docdesk chats`)")
    ask.add_argument("--new-chat", action="store_true", help="start a new chat (the default without --chat)")

    chats = commands.add_parser("chats", parents=[common], help="list chats, or show one with its sources")
    chats.add_argument("chat_id", nargs="?", metavar="CHAT_ID")
    chats.add_argument("--delete", action="store_true", help="delete the chat CHAT_ID")

    summarize = commands.add_parser(
        "summarize", parents=[common, model], help="summarize a document (map-reduce over its blocks)"
    )
    summarize.add_argument("document", metavar="DOC_ID|PATH")
    summarize.add_argument("--style", choices=SUMMARY_STYLE_NAMES, default="brief", help=summary_styles_help())
    summarize.add_argument("--language", metavar="CODE", help="write the summary in this language (en, zh, de, ...)")

    chat = commands.add_parser("chat", parents=[common, model], help="chat with the configured model (no library)")
    chat.add_argument("message", nargs="+")
    chat.add_argument("--max-tokens", type=int, default=512)

    _add_serving_commands(commands, common, model)

    doctor = commands.add_parser("doctor", parents=[common], help="check the GPU and plan memory for a model")
    doctor.add_argument("--model", metavar="FILE_OR_DIR", help="a .gguf file or a Hugging Face model folder")
    doctor.add_argument("--vram", type=float, metavar="GB", help="plan for this much GPU memory")
    doctor.add_argument("--context", type=int, metavar="N", help="the context length you want")

    from app.cli.models import add_models_parser

    add_models_parser(commands, common)
    return parser
