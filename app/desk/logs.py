"""Logging for the CLI and the window: details to a rotating file, only what matters to stderr."""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

NOISY = ("pypdf", "sentence_transformers", "transformers", "httpx", "faiss", "urllib3", "filelock", "py.warnings")


class _NotNoisy(logging.Filter):
    """Third-party chatter (pypdf's warnings about odd PDFs) belongs in the log file only."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.name.startswith(NOISY)


def setup_logging(verbose: bool = False, folder: Path | None = None) -> Path | None:
    # A log file on a full disk must not print "--- Logging error ---" tracebacks over the
    # one-line message the user needs ("the disk holding the library is full").
    logging.raiseExceptions = False
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    console = logging.StreamHandler()
    console.setLevel(logging.INFO if verbose else logging.WARNING)
    console.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    if not verbose:
        console.addFilter(_NotNoisy())
    root.addHandler(console)
    logging.captureWarnings(True)
    for name in NOISY:
        logging.getLogger(name).setLevel(logging.WARNING)
    try:
        if folder is None:
            from app.desk.settings import log_dir

            folder = log_dir()
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "docdesk.log"
        handler = logging.handlers.RotatingFileHandler(path, maxBytes=2_000_000, backupCount=3, encoding="utf-8")
    except OSError:
        return None  # a read-only home must not stop DocDesk; the console still works
    handler.setLevel(logging.INFO)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    return path
