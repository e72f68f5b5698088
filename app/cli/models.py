"""`docdesk models`: the catalog with this machine's verdicts, a download, and switching models.

docdesk models                  the catalog, each model judged for this machine (--json too)
docdesk models download NAME    download it (progress on stderr; Ctrl-C keeps the part for
                                next time), check its sha256, then use it (--no-use: only get it)
docdesk models use NAME|PATH    use a downloaded model, or a GGUF file you have (config.toml)
"""

from __future__ import annotations

import json
import queue
import sys
import threading
from pathlib import Path

from app.desk.errors import LIBRARY_ERROR as USAGE
from app.desk.errors import NO_WRITE as DISK_FULL
from app.desk.errors import OK
from app.desk.model_download import (
    DownloadError,
    HashMismatch,
    NotEnoughDisk,
    Progress,
    catalog,
    check_chosen_model,
    download,
    downloaded,
    hub_endpoint,
    models_dir,
    use_model,
)
from app.desk.settings import save_settings
from engine.models.catalog import CatalogEntry, find, judge, read_remote, this_machine

THINKS = {"always": "always", "switchable": "on/off", "no": "no"}


def add_models_parser(commands, common) -> None:
    models = commands.add_parser(
        "models",
        parents=[common],
        help="models for this machine: the catalog with what fits, download one, use one",
        description="The catalog of GGUF models, each judged for this machine from its header on the Hub "
        "(read with range requests, before anything is downloaded).",
    )
    actions = models.add_subparsers(dest="models_action", metavar="ACTION")
    actions.add_parser("list", parents=[common], help="the catalog with this machine's verdicts (the default)")
    get = actions.add_parser("download", parents=[common], help="download a model of the catalog, then use it")
    get.add_argument("name", metavar="NAME")
    get.add_argument("--no-use", action="store_true", help="only download it; keep the model in use")
    use = actions.add_parser("use", parents=[common], help="use a downloaded model, or a GGUF file you have")
    use.add_argument("name", metavar="NAME|PATH")


def cmd_models(desk, args) -> int:
    action = getattr(args, "models_action", None) or "list"
    return {"list": _list, "download": _download, "use": _use}[action](desk, args)


def _emit(args, payload: dict, human: str) -> None:
    sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n" if args.json else human + "\n")


def _size(entry: CatalogEntry, facts) -> str:
    size = facts.shape.file_bytes if facts is not None else entry.size_bytes
    return f"{'' if facts is not None or entry.size_exact else '~'}{size / 1e9:.1f} GB"


def _judged(entries: list[CatalogEntry]):
    """Each entry's header from the Hub (a few at once) and its verdict, or the reason it failed."""
    machine = this_machine()
    cache = models_dir() / ".headers"

    def one(entry):
        try:
            facts = read_remote(entry, hub_endpoint(), cache)
        except Exception as exc:  # one unreachable file costs only its own line
            return entry, None, None, str(exc)
        return entry, facts, judge(facts, machine), None

    return machine, _each_in_daemon_threads(one, entries, workers=4)


def _each_in_daemon_threads(work, items: list, workers: int) -> list:
    """`work` on each item, a few at once, in daemon threads: Ctrl-C ends the command at once,
    where a thread pool would wait at exit for a header read that is still trickling in."""
    results: list = [None] * len(items)
    todo = queue.SimpleQueue()
    for index in range(len(items)):
        todo.put(index)

    def run() -> None:
        while True:
            try:
                index = todo.get_nowait()
            except queue.Empty:
                return
            results[index] = work(items[index])

    threads = [threading.Thread(target=run, daemon=True, name="docdesk-header") for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            thread.join(0.1)  # short waits: KeyboardInterrupt reaches the main thread between them
    return results


def _list(desk, args) -> int:
    machine, rows = _judged(catalog())
    in_use = desk.settings.llm.model or ""
    lines = [
        f"This machine: {machine.gpu_name or 'no usable GPU'}"
        + (f" ({machine.vram_bytes / 2**30:.0f} GiB)" if machine.vram_bytes else "")
        + f", {machine.ram_bytes / 2**30:.0f} GiB memory, {machine.bandwidth_source}",
        "",
        f"  {'NAME':30} {'CARD':6} {'SIZE':9} {'THINKS':7} ON THIS MACHINE",
    ]
    models = []
    for entry, facts, verdict, error in rows:
        local = downloaded(entry)
        mark = "*" if local and str(local.resolve()) == in_use else "↓" if local else " "
        offline = bool(error) and error.startswith("cannot reach")
        words = verdict.text if verdict else "unknown: the Hub cannot be reached" if offline else f"unknown: {error}"
        lines.append(
            f"{mark} {entry.name:30} {entry.tier:6} {_size(entry, facts):9} {THINKS[entry.thinking]:7} {words}"
        )
        models.append(
            entry.as_dict()
            | {
                "verdict": verdict.as_dict() if verdict else None,
                "header": facts.as_dict() if facts else None,
                "error": error,
                "downloaded": str(local) if local else None,
                "in_use": mark == "*",
            }
        )
    lines += ["", "* in use   ↓ downloaded   docdesk models download NAME · docdesk models use NAME|PATH"]
    if any(error and error.startswith("cannot reach") for *_, error in rows):
        lines.append(
            "The Hub cannot be reached from here: a verdict needs the model's header (a few MB, read before any "
            "download). Set HF_ENDPOINT to a mirror, or judge a file you have: docdesk models use PATH"
        )
    machine_json = {**machine.__dict__, "bandwidth": round(machine.bandwidth)}
    _emit(args, {"machine": machine_json, "models": models}, "\n".join(lines))
    return OK


def _progress_line(p: Progress) -> str:
    if p.phase == "done":
        return f"\rdownloaded {p.total / 1e9:.2f} GB, its sha256 matches the Hub's" + " " * 20
    if p.phase == "starting":
        return f"\rstarting at {p.done / 1e9:.2f} of {p.total / 1e9:.2f} GB" + " " * 20
    if p.phase == "verifying":
        return f"\rchecking sha256: {p.done / 1e9:.1f} of {p.total / 1e9:.1f} GB" + " " * 20
    left = "" if p.eta_s is None else f" · {p.eta_s / 60:.0f} min left" if p.eta_s >= 90 else f" · {p.eta_s:.0f} s left"
    return f"\r{p.done / 1e9:.2f} of {p.total / 1e9:.2f} GB ({p.fraction:.0%}) · {p.speed / 1e6:.1f} MB/s{left}   "


def _shower():
    """Progress on stderr: one line redrawn on a terminal, else a line a second (logs, pipes)."""
    import time

    tty, last = sys.stderr.isatty(), [0.0]

    def show(p: Progress) -> None:
        if not tty and time.monotonic() - last[0] < 1.0 and p.phase == "downloading":
            return
        last[0] = time.monotonic()
        line = _progress_line(p)
        sys.stderr.write(line if tty else line.strip("\r ") + "\n")
        sys.stderr.flush()

    return show


def _download(desk, args) -> int:
    entry = find(args.name, catalog())
    if entry is None:
        names = ", ".join(e.name for e in catalog())
        sys.stderr.write(f"docdesk: no model {args.name!r} in the catalog; it has {names}\n")
        return USAGE
    show = _shower()
    try:
        path = download(entry, on_progress=show)
    except KeyboardInterrupt:
        sys.stderr.write("\ndocdesk: download stopped; the part already downloaded is kept: run the command again\n")
        return 130
    except NotEnoughDisk as exc:
        sys.stderr.write(f"\ndocdesk: {exc}\n")
        return DISK_FULL
    except (HashMismatch, DownloadError) as exc:
        sys.stderr.write(f"\ndocdesk: {exc}\n")
        return USAGE
    sys.stderr.write("\n")
    if args.no_use:
        _emit(args, {"downloaded": str(path)}, f"downloaded {path}; use it with: docdesk models use {entry.name}")
        return OK
    return _switch(desk, args, path)


def _use(desk, args) -> int:
    entry = find(args.name, catalog())
    path = downloaded(entry) if entry is not None else Path(args.name).expanduser()
    if entry is not None and path is None:
        sys.stderr.write(f"docdesk: {entry.name} is not downloaded yet: docdesk models download {entry.name}\n")
        return USAGE
    if not path.is_file():
        sys.stderr.write(f"docdesk: {args.name} is neither a model of the catalog nor a GGUF file\n")
        return USAGE
    return _switch(desk, args, path)


def _switch(desk, args, path: Path) -> int:
    """Read the file's header (a damaged or foreign file is refused), say how it runs here, and
    write it into config.toml."""
    facts, warning = check_chosen_model(path)
    verdict = judge(facts, this_machine())
    settings = use_model(desk.settings, path)
    config = save_settings(settings)
    desk.settings.llm = settings.llm
    human = f"DocDesk now uses {path} ({facts.shape.name}): {verdict.text}\nsaved to {config}"
    if warning:
        sys.stderr.write(f"docdesk: warning: {warning}\n")
    _emit(
        args,
        {"model": str(path), "header": facts.as_dict(), "verdict": verdict.as_dict(), "config": str(config)}
        | {"template_warning": warning},
        human,
    )
    return OK
