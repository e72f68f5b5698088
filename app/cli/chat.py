"""`docdesk chat`: one message straight to the model, no library (a check that the model answers).
A thinking model's reasoning goes to stderr ("thinking…"; the reasoning itself with --verbose)
and into --json's `reasoning`, never into the text."""

from __future__ import annotations

import sys

from app.cli.model_flags import prepare_model
from app.cli.thinking import ThinkingNote


def _report(*parts: str) -> None:
    sys.stderr.write(" · ".join(parts) + "\n")


def cmd_chat(desk, args, emit) -> int:
    from engine.backends import ChatRequest
    from engine.generation.generate import Reply, pieces

    prepare_model(desk)
    backend = desk.backend()
    request = ChatRequest([{"role": "user", "content": " ".join(args.message)}], max_tokens=args.max_tokens)
    reply = Reply()
    thinking = ThinkingNote(show=bool(getattr(args, "verbose", False)) and not args.json)
    write = thinking.then(lambda text: (sys.stdout.write(text), sys.stdout.flush()))
    try:
        with desk.doing("chatting"):
            for piece in pieces(backend, request, reply):
                if args.json:
                    continue  # the reply is printed whole at the end
                if piece.reasoning:
                    thinking.reasoning(piece.text)
                elif piece.restart:
                    thinking.restart()
                elif piece.text:
                    write(piece.text)
    except KeyboardInterrupt:
        request.cancel.set()
        raise
    stats = request.stats
    if args.json:
        payload = {
            "text": reply.answer,
            "reasoning": reply.reasoning,
            "backend": backend.name,
            "model": backend.model,
            "prompt_tokens": stats.prompt_tokens,
            "completion_tokens": stats.completion_tokens,
            "reasoning_tokens": stats.reasoning_tokens,
            "ttft_ms": round(stats.ttft_ms, 1),
            "total_ms": round(stats.total_ms, 1),
            "tokens_per_s": round(stats.tokens_per_s, 1),
        }
        emit(args, payload, "")
    else:
        sys.stdout.write("\n")
        _report(
            backend.name,
            str(backend.model),
            f"{stats.completion_tokens} tokens",
            f"first token {stats.ttft_ms:.0f} ms",
            f"{stats.tokens_per_s:.1f} tokens/s",
        )
    return 0
