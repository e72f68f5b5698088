"""When DocDesk dies without closing: a report in the log folder and a notice on the next start.

A native crash (llama.cpp segfaulting on a CPU or GPU it was not built for, a CUDA driver
fault) kills the process before Python can say anything. So each running DocDesk keeps a small
marker, `session-PID.json`, saying what it is doing right now (loading a model, answering a
question in a chat), and points Python's fault handler at `faults-PID.log`. A clean exit removes
both. The next DocDesk that starts (window or CLI) finds the marker of a process that is gone,
writes `crash-YYYYmmdd-HHMMSS.txt` from the two, and shows what happened and what to change.
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import platform
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ACTIVITIES = {
    "loading": "loading the model",
    "answering": "answering a question",
    "chatting": "talking to the model",
    "summarizing": "summarizing a document",
}
MODEL_ACTIVITIES = {"loading", "answering", "chatting", "summarizing"}


@dataclass
class CrashNotice:
    text: str  # what happened, what was kept, what to change
    report: Path  # the crash report written for it


class CrashGuard:
    """One per process: `start()` once, `doing(...)` around risky work, `stop()` at a clean exit."""

    def __init__(self) -> None:
        self.folder: Path | None = None
        self._faults = None
        self._state: dict = {}  # the process: pid, start time
        self._open: list[dict] = []  # the doing() blocks now open, oldest first
        self._lock = threading.Lock()
        self.notice: CrashNotice | None = None

    def start(self, folder: Path, details: dict | None = None) -> CrashNotice | None:
        """Report the previous crash, if any; then watch this process. Never raises: a crash
        guard that cannot write (a read-only home) leaves DocDesk running without it."""
        try:
            folder.mkdir(parents=True, exist_ok=True)
            self.notice = report_previous(folder)
            self._faults = open(folder / f"faults-{os.getpid()}.log", "w", encoding="utf-8")  # noqa: SIM115 - open for the process's life
            faulthandler.enable(self._faults, all_threads=True)
        except OSError:
            return self.notice
        self.folder = folder
        self._state = {"pid": os.getpid(), "started": time.time(), "activity": "idle", **(details or {})}
        self._write()
        return self.notice

    @contextmanager
    def doing(self, activity: str, **details):
        """Mark what this process is doing for the span of the block (details: model, chat, question)."""
        # Blocks may overlap on several threads (the window and its editors' server answer at
        # once): the marker shows the latest block still open, and idle once none is.
        mark = {"activity": activity, "since": time.time(), **details}
        with self._lock:
            self._open.append(mark)
        try:
            self._write()
            yield
        finally:
            with self._lock:
                self._open.remove(mark)
            self._write()

    def stop(self) -> None:
        if self.folder is None:
            return
        faulthandler.disable()
        self._faults.close()
        for name in (f"session-{os.getpid()}.json", f"faults-{os.getpid()}.log"):
            (self.folder / name).unlink(missing_ok=True)
        self.folder = None

    def _write(self) -> None:
        if self.folder is None:
            return
        with self._lock:
            marker = self.folder / f"session-{os.getpid()}.json"
            temporary = marker.with_suffix(f".tmp{threading.get_ident()}")
            try:
                state = {**self._state, **(self._open[-1] if self._open else {"activity": "idle"})}
                # ASCII escapes: a question with a lone surrogate (a client's bad JSON) still writes.
                temporary.write_text(json.dumps(state), encoding="utf-8")
                os.replace(temporary, marker)
            except (OSError, ValueError):  # a full disk must not stop the answer; the marker is only a hint
                with contextlib.suppress(OSError):
                    temporary.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def report_previous(folder: Path) -> CrashNotice | None:
    """Write a crash report for each session in `folder` whose process is gone; the notice of the last."""
    notice = None
    for marker in sorted(folder.glob("session-*.json")):
        pid = int(re.sub(r"\D", "", marker.stem) or 0)
        if pid == os.getpid() or _alive(pid):
            continue
        try:
            state = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            state = {"pid": pid}
        faults_file = folder / f"faults-{pid}.log"
        faults = faults_file.read_text(encoding="utf-8", errors="replace") if faults_file.exists() else ""
        notice = _write_report(folder, state, faults)
        marker.unlink(missing_ok=True)
        faults_file.unlink(missing_ok=True)
    return notice


def _write_report(folder: Path, state: dict, faults: str) -> CrashNotice:
    when = time.strftime("%Y%m%d-%H%M%S", time.localtime(state.get("since") or state.get("started") or time.time()))
    report = folder / f"crash-{when}.txt"
    text = describe(state, faults)
    body = [
        "DocDesk crash report",
        "",
        text,
        "",
        f"DocDesk {_version('docdesk')}, Python {platform.python_version()}, {platform.platform()}",
        f"llama-cpp-python {_version('llama_cpp_python')}",
        "What it was doing: " + json.dumps(state, ensure_ascii=False, indent=2),
        "",
        "Python's fault handler:" if faults.strip() else "Python's fault handler wrote nothing (killed from outside?).",
        faults.rstrip(),
    ]
    report.write_text("\n".join(body) + "\n", encoding="utf-8")
    return CrashNotice(f"{text}\nThe report: {report}", report)


def describe(state: dict, faults: str) -> str:
    """What happened, what was kept and what to change, from a dead session's marker and faults."""
    activity = state.get("activity", "idle")
    doing = ACTIVITIES.get(activity, "")
    started = time.strftime("%Y-%m-%d %H:%M", time.localtime(state.get("since") or state.get("started") or 0))
    lines = [f"DocDesk stopped unexpectedly ({started})" + (f" while {doing}." if doing else ".")]
    fatal = re.search(r"Fatal Python error: (.+)", faults)
    if fatal:
        where = "in the model library (llama.cpp)" if "llama_cpp" in faults else "in native code"
        lines.append(f"It was a crash {where}: {fatal.group(1).strip()}.")
    elif not faults.strip():
        lines.append(
            "Nothing was recorded inside DocDesk: it was stopped from outside (killed, or the system ran out of "
            "memory; a model too big for the RAM or VRAM left is the usual cause)."
        )
    if state.get("model"):
        lines.append(f"Model: {state['model']} ({state.get('backend', '?')} backend).")
    if state.get("question"):
        chat = f' in the chat "{state["chat_title"]}"' if state.get("chat_title") else ""
        lines.append(f'Your question "{_short(state["question"])}" was saved{chat}: ask it again after the change.')
    if activity in MODEL_ACTIVITIES:
        lines.append(
            "What to change: run `docdesk doctor` (it checks the build against your GPU); try a smaller context "
            "or fewer GPU layers in Settings, another model file, or the CPU build (`make run GPU=cpu`)."
        )
    return "\n".join(lines)


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _version(distribution: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"
