"""Starting DocDesk again, for what only a new process picks up (the interface language, another
library folder): the window closes as it always does, saving everything, and a new process
opens it with the same arguments and environment."""

from __future__ import annotations

import os
import sys

from PySide6.QtCore import QProcess


def restart_command() -> list[str]:
    """This process's window again: `python -m app` works from a checkout and from the wheel."""
    return [sys.executable, "-m", "app", *sys.argv[1:]]


def start_again(command: list[str] | None = None) -> bool:
    """Start `command` (this window by default) as a process of its own; False when it could not."""
    program, *arguments = command or restart_command()
    started, _pid = QProcess.startDetached(program, arguments, os.getcwd())
    return bool(started)
