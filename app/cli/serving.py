"""`docdesk serve` and `docdesk mcp`: the library and its cited answers for editors and agents."""

from __future__ import annotations

from app.cli.model_flags import prepare_model


def cmd_serve(desk, args) -> int:
    from app.serve.runner import serve_until_stopped

    prepare_model(desk)  # --host, --port, --token (or DOCDESK_TOKEN), --queue: in the settings already
    return serve_until_stopped(desk, desk.settings.serve)


def cmd_mcp(desk, args) -> int:
    from app.mcp.server import run_stdio

    prepare_model(desk)
    return run_stdio(desk)
