"""The model options shared by every command that runs the model (ask, summarize, chat, serve, mcp)."""

from __future__ import annotations


def apply_model_flags(desk, args) -> None:
    """--backend, --model, --url, --threads and --threads-batch over the [llm] settings, for the
    commands that use the model."""
    llm = desk.settings.llm
    llm.backend = args.backend or llm.backend
    llm.model = args.model or llm.model
    llm.threads = getattr(args, "threads", None) or llm.threads
    llm.threads_batch = getattr(args, "threads_batch", None) or llm.threads_batch
    if args.url:
        llm.url, llm.backend = args.url, args.backend or "openai"
    if llm.backend == "llama_cpp":  # before search or ingest import numpy: see load_native_library
        from engine.backends.llama_cpp import load_native_library

        load_native_library()
