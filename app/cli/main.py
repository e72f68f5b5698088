"""`docdesk` on the command line. Every command has --json for scripts."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

from app.cli.index_wait import finish_index_rebuild
from app.cli.model_flags import prepare_model, setting_flags
from app.cli.models import cmd_models
from app.cli.parser import build_parser
from app.cli.progress import progress_for
from app.cli.serving import cmd_mcp, cmd_serve
from app.desk.errors import OK, SOME_FAILED, explain
from app.desk.refs import is_file, shown_path, shown_ref, user_path
from app.desk.settings import load_settings
from ingest.errors import IngestError


def _emit(args, payload: dict, human: str) -> None:
    if args.json:
        sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
    elif human:
        sys.stdout.write(human + ("\n" if not human.endswith("\n") else ""))


def _add_lines(report) -> list[str]:
    lines = []
    for entry in report.added:
        lines.append(
            f"added   {entry['title'] or entry['path']} ({entry['pages']} pages, {entry['passages']} passages)"
        )
        lines += [f"        note: {w}" for w in entry.get("warnings", [])]
    lines += [f"skipped {shown_path(s['path'])} ({s['reason']})" for s in report.skipped]
    lines += [f"failed  {shown_path(f['path'])}: {f['reason']}" for f in report.failed]
    return lines


def _cmd_add(desk, args) -> int:
    bar = progress_for()
    try:
        report = desk.add([user_path(p) for p in args.paths], args.password, on_progress=bar)
    finally:
        bar.finish()
    _emit(args, report.as_dict(), "\n".join(_add_lines(report)) or "nothing to add")
    return SOME_FAILED if report.failed else OK


def _cmd_repair(desk, args) -> int:
    from app.cli.repair import repair

    bar = progress_for()
    try:
        result = repair(desk, on_progress=bar)
    finally:
        bar.finish()
    if result is None:
        _emit(
            args,
            {"damage": None},
            f"the library at {desk.settings.library} passed SQLite's integrity check: nothing to repair",
        )
        return OK
    salvage = result.salvage
    names = {"chats": "chats", "messages": "chat messages", "summary_cache": "cached summary steps"}
    kept = [f"{len(salvage.folders)} folders", f"{len(salvage.files)} files"]
    kept += [f"{salvage.kept(t)} {names[t]}" for t in salvage.rows if salvage.kept(t)]
    lines = [
        f"the library database was damaged ({result.damage}); it is kept as {salvage.set_aside}",
        f"carried over: {', '.join(kept)}; indexing the files again",
    ]
    if salvage.unreadable:
        lines.append(f"could not be read to the end: {', '.join(salvage.unreadable)} (add what is missing again)")
    _emit(args, result.as_dict(), "\n".join(lines + _add_lines(result.added)))
    return SOME_FAILED if result.added.failed else OK


def _cmd_list(desk, args) -> int:
    docs = desk.documents()
    lines = []
    for d in docs:
        state = d.status if d.status == "indexed" else f"{d.status}: {d.reason}" if d.reason else d.status
        if d.ocr_pages:  # how far to trust the text: it was read from page images
            state += f", OCR {d.ocr_pages}p conf {d.ocr_confidence:.2f}"
        lines.append(
            f"{d.id[:12]}  {d.format or '?':8} {d.pages:4}p {d.passages:5} passages  {d.title or Path(d.path).name}  [{state}]"
        )
    _emit(
        args, {"documents": [d.as_dict() for d in docs]}, "\n".join(lines) or "the library is empty: docdesk add PATH"
    )
    return 0


def _cmd_remove(desk, args) -> int:
    removed, lines = [], []
    for ref in args.refs:
        doc, kept = desk.remove(ref)
        path = str(user_path(ref)) if kept else doc.path
        removed.append({"doc_id": doc.id, "path": path, "title": doc.title, "kept_at": kept.path if kept else None})
        name = doc.title or path
        lines.append(f"removed {name}" if kept is None else f"removed {path}; the same file stays at {kept.path}")
    _emit(args, {"removed": removed}, "\n".join(lines))
    return 0


def _cmd_sync(desk, args) -> int:
    bar = progress_for()
    try:
        report = desk.sync(on_progress=bar, confirm_removals=args.confirm_removals)
    finally:
        bar.finish()
    lines = [f"added   {a['path']}" for a in report.added] + [f"removed {r['path']}" for r in report.removed]
    lines += [f"failed  {f['path']}: {f['reason']}" for f in report.failed]
    lines += [
        f"kept    {h['path']}: {h['gone']} of its {h['files']} files are gone (unmounted?); nothing removed: "
        "run `docdesk sync --confirm-removals` if they were deleted on purpose"
        for h in report.held
    ]
    summary = f"{len(report.added)} added, {len(report.removed)} removed, {len(report.skipped)} unchanged"
    _emit(args, report.as_dict(), "\n".join(lines + [summary]))
    return SOME_FAILED if report.failed or report.held else OK


def _cmd_search(desk, args) -> int:
    query = " ".join(args.query)
    result = desk.search(query, args.k, args.doc, on_progress=progress_for())
    if desk.index_rebuild() is not None:
        sys.stderr.write(
            "docdesk: the search index is being built; until it is, results may come from keyword search alone\n"
        )
    payload = {"query": query, "results": [h.as_dict() for h in result.hits]}
    lines = []
    for n, hit in enumerate(result.hits, 1):
        p = hit.passage
        snippet = " ".join(p.text.split())[:300]
        lines.append(f"[{n}] {p.title}, {p.page_label}  (score {hit.score:.4f})\n    {snippet}")
    _emit(args, payload, "\n".join(lines) or "no results")
    return 0


def _cmd_reembed(desk, args) -> int:
    count = desk.reembed(progress_for(), deliberate=True)
    name = desk.embedder.name
    _emit(args, {"reembedded": count, "embedding_model": name}, f"{count} documents embedded again with {name}")
    return 0


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _report(*parts: str) -> None:
    """A command's closing line on stderr (stdout holds only the answer or the JSON)."""
    sys.stderr.write(" · ".join(parts) + "\n")


def _cmd_ask(desk, args) -> int:
    import threading

    from app.cli.thinking import ThinkingNote
    from app.desk.answering import final_answer

    prepare_model(desk)
    question = " ".join(args.question)
    doc_ids = [desk.resolve(ref).id for ref in args.doc or []]
    cancel = threading.Event()
    thinking = ThinkingNote(show=bool(getattr(args, "verbose", False)) and not args.json)
    try:
        events = desk.answer(question, doc_ids, chat_id=None if args.new_chat else args.chat, cancel=cancel)
        shown = (None, None) if args.json else (thinking.then(_write), thinking.restart)
        answer = final_answer(events, shown[0], thinking.reasoning, shown[1])
    except KeyboardInterrupt:
        cancel.set()
        raise
    stats, timings = answer.stats, answer.timings
    if args.json:
        payload = {
            "answer": answer.text,
            "sources": [s.to_json() for s in answer.given],
            "chat_id": answer.chat_id,
            "question": question,
            "standalone_question": answer.standalone,
            "relevant": answer.relevant,
            "relevance": answer.relevance,
            "timings": timings,
            "tokens": {"prompt": stats.prompt_tokens, "completion": stats.completion_tokens}
            | {"reasoning": stats.reasoning_tokens},
            "reasoning": answer.reasoning,  # a thinking model's, kept apart from the answer
            "thinking_ms": answer.thinking_ms,
            "whole_documents": answer.whole_documents,  # the --doc documents fit and went in whole
            "stages": [[name, ms] for name, ms in answer.stages],  # how the question was prepared, in order
        }
        _emit(args, payload, "")
        return 0
    _write("\n")
    if answer.sources:
        _write("\nSources:\n" + "".join(f"  {s.label}  ({s.path})\n" for s in answer.sources))
    _report(
        f"chat {answer.chat_id}",
        f"retrieval {timings['retrieve_ms']:.0f} ms",
        f"first token {timings['ttft_ms']:.0f} ms",
        f"{stats.completion_tokens} tokens",
        *([f"thought {answer.thinking_ms / 1000:.1f} s ({stats.reasoning_tokens} tokens)"] if answer.reasoning else []),
        *(["the documents went in whole"] if answer.whole_documents else []),
        f"chat not saved: {answer.unsaved}" if answer.unsaved else f"continue with --chat {answer.chat_id}",
    )
    if getattr(args, "verbose", False):
        sys.stderr.write("".join(line + "\n" for line in answer_details(answer)))
    return 0


def answer_details(answer) -> list[str]:
    """What --verbose adds under an answer: each stage the question went through with its time, and
    why the relevance rule let the model answer or not (and what overruled it)."""
    stages = " · ".join(f"{name} {ms:.0f} ms" for name, ms in answer.stages)
    why = answer.relevance
    lines = [f"stages: {stages}"] if stages else []
    if "margin" in why:
        lines.append(
            f"relevance: {'relevant' if why['relevant'] else 'nothing relevant'} (margin {why['margin']:+.2f}:"
            f" coverage {why['coverage']:.2f}, dense {why['dense']:.2f} x {why['dense_weight']:.2f}"
            f" against {why.get('dense_bar', 0.0):.2f})"
            + (f", overruled: {why['override']}" if why.get("override") else "")
        )
    lines += [f"note: {note}; the answer went on without it" for note in why.get("skipped", [])]
    return lines


def _cmd_chats(desk, args) -> int:
    if not args.chat_id:
        chats = desk.chats.list()
        lines = [f"{c.id}  {c.messages // 2:3} questions  {c.title}" for c in chats]
        _emit(args, {"chats": [c.as_dict() for c in chats]}, "\n".join(lines) or "no chats yet: docdesk ask QUESTION")
        return 0
    chat = desk.chats.get(args.chat_id)
    if args.delete:
        desk.chats.delete(chat.id)
        _emit(args, {"deleted": chat.id}, f"deleted chat {chat.id} ({chat.title})")
        return 0
    from engine.citations import shown_sources

    messages = desk.chats.messages(chat.id)
    lines = [f"# {chat.title}  ({chat.id})"]
    for m in messages:
        lines.append(f"\n{'You' if m.role == 'user' else 'DocDesk'}: {m.content}")
        lines += [f"  {s.label}" for s in shown_sources(m.sources)]
    payload = {
        **chat.as_dict(),
        "messages": [
            {"role": m.role, "content": m.content, "question": m.question, "sources": [s.to_json() for s in m.sources]}
            for m in messages
        ],
    }
    _emit(args, payload, "\n".join(lines))
    return 0


def _cmd_summarize(desk, args) -> int:
    import threading

    from app.cli.progress import SummaryProgressLine

    prepare_model(desk)
    doc = desk.library.resolve(args.document)
    if doc is None and is_file(user_path(args.document)):  # a file not yet in the library: add it first
        bar = progress_for()
        try:
            report = desk.add([user_path(args.document)], on_progress=bar)
        finally:
            bar.finish()
        if report.failed:
            raise IngestError(f"cannot summarize {shown_ref(args.document)}: {report.failed[0]['reason']}")
    doc = desk.resolve(args.document)
    progress = SummaryProgressLine()
    cancel = threading.Event()
    try:
        with desk.doing("summarizing", document=doc.title or doc.path):
            summary = desk.summarizer().summarize(doc.id, args.style, args.language, progress, cancel)
    except KeyboardInterrupt:
        cancel.set()
        progress.finish()
        sys.stderr.write("docdesk: summary stopped; finished blocks are cached, run the command again to resume\n")
        return 130
    finally:
        progress.finish()
    _emit(args, summary.as_dict(), summary.text)
    _report(
        f"{summary.pieces} parts of {summary.blocks} blocks",
        f"{summary.from_cache}/{summary.steps} steps from cache",
        f"{summary.timings['total_ms'] / 1000:.1f} s",
    )
    return 0


def _cmd_chat(desk, args) -> int:
    from app.cli.chat import cmd_chat

    return cmd_chat(desk, args, _emit)


def _cmd_doctor(desk, args) -> int:
    from app.desk.doctor_text import render
    from engine.models.doctor import report

    llm = desk.settings.llm
    result = report(
        Path(args.model) if args.model else None,
        args.vram,
        args.context,
        threads=llm.threads,
        threads_batch=llm.threads_batch,
    )
    _emit(args, result, render(result))
    return 0


COMMANDS = {
    "add": _cmd_add,
    "list": _cmd_list,
    "remove": _cmd_remove,
    "sync": _cmd_sync,
    "search": _cmd_search,
    "reembed": _cmd_reembed,
    "ask": _cmd_ask,
    "chats": _cmd_chats,
    "summarize": _cmd_summarize,
    "chat": _cmd_chat,
    "serve": cmd_serve,
    "mcp": cmd_mcp,
    "doctor": _cmd_doctor,
    "models": cmd_models,
    "repair": _cmd_repair,
}


LONG_RUNNING = {"serve", "mcp"}  # stopped by the user: a build they cut short starts again next time


def _run_command(settings, args) -> int:
    """One command, watched by a crash guard: a native crash in the model is reported on the next start."""
    from app.desk.crash import CrashGuard
    from app.desk.services import DocDesk
    from app.desk.settings import log_dir

    guard = CrashGuard()
    notice = guard.start(log_dir())
    if notice is not None:
        sys.stderr.write(f"docdesk: {notice.text}\n")
    desk = DocDesk(settings, guard)
    try:
        code = COMMANDS[args.command](desk, args)
        if args.command not in LONG_RUNNING:
            finish_index_rebuild(desk)
        return code
    finally:
        desk.close()
        guard.stop()


def main(argv: list[str] | None = None) -> int:
    import time

    started = time.perf_counter()
    from app.desk.process_env import choose_openmp_waiting, prepare_process

    prepare_process()  # first: before anything can load torch or huggingface_hub
    args = build_parser().parse_args(argv)
    from app.desk.logs import setup_logging

    if not logging.getLogger().handlers:
        setup_logging(args.verbose)
    settings = None
    try:
        settings = load_settings(flags=setting_flags(args))  # config.toml, then the environment, then the flags
        # The window and the commands with the model's flags may decode with llama.cpp in this process.
        runs_model = args.command is None or hasattr(args, "backend")
        choose_openmp_waiting(runs_model and settings.llm.backend == "llama_cpp")
        if args.command is None:  # the window
            from app.gui.app import run

            return run(settings, started)
        return _run_command(settings, args)
    except KeyboardInterrupt:
        sys.stderr.write("docdesk: interrupted; finished documents are kept, run the command again to resume\n")
        return 130
    except Exception as exc:  # the exit-code table: app/desk/errors.py
        explained = explain(exc, settings.library if settings is not None else None)
        if explained is None:
            raise
        sys.stderr.write(f"docdesk: {explained[0]}\n")
        return explained[1]


if __name__ == "__main__":
    sys.exit(main())
