"""`docdesk serve` and `docdesk mcp`: the library and its cited answers for editors and agents."""

from __future__ import annotations

import os

from app.cli.model_flags import apply_model_flags


def cmd_serve(desk, args) -> int:
    from app.serve.runner import serve_until_stopped

    apply_model_flags(desk, args)
    serve = desk.settings.serve
    serve.host = args.host or serve.host
    serve.port = args.port if args.port is not None else serve.port
    serve.token = args.token or os.environ.get("DOCDESK_TOKEN") or serve.token
    serve.queue = args.queue if args.queue is not None else serve.queue
    return serve_until_stopped(desk, serve)


def cmd_mcp(desk, args) -> int:
    from app.mcp.server import run_stdio

    apply_model_flags(desk, args)
    return run_stdio(desk)
