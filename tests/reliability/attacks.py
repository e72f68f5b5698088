"""The reliability suite's attacks (issue 13): the store attacked as a tester of SQLite-grade
software would, each attack one small function that builds its hostile input for real, runs the
`docdesk` command line as a subprocess and returns a row (attack, expected behaviour, result,
seconds, peak memory of the CLI and its children).

They live in four modules by what they attack; importing them registers them, in this order:

- attacks_crash: kill -9 during add, adds racing list, search, remove and each other, a file
  rewritten during add (1), documents left queued by a kill whose files were deleted (10)
- attacks_cache: vectors.faiss deleted, truncated, garbage; from another library, older than a
  database restored from a backup, a damaged length field (3); remove PATH of twin files (4)
- attacks_disk: an unmounted watched folder (2), an unreadable subfolder (5), disk full, a
  read-only library, a bad schema version, an overwritten database page (9)
- attacks_files, attacks_text: billion laughs and XXE, PDF reference loops, many pages, symlink
  loops, FIFOs, names that are not UTF-8 (5), zip bombs (6), huge texts and lines (7), what readers
  gave up on (8), wrong reasons and titles (10)
- attacks_declared (issue 32, ingest side): small files that declare huge work (image sizes and
  frames, endless sheets, ODS repeats, EPUB spine repeats, CSV fields and columns), tall images,
  odd image sizes and sample formats, the reader process killed or interrupted, renames
- attacks_models (issue 39): chat templates that loop or explode, GGUF headers built to break the
  reader, a re-embed on a full disk, a second DocDesk with the embedding model the library left
- attacks_service (issue 32): ids and paths that are not ids through the CLI, `serve` and MCP, a
  50 MB JSON-RPC line, 1,100 half-open connections under a 1,024 open-file limit, `Origin: null`

Item 11 of the issue (a native crash of the model lost the question) is covered by
tests/app/test_crash_report.py, which crashes a real process with SIGSEGV inside generation; it is
not repeated here.
"""

from __future__ import annotations

from tests.reliability import (
    attacks_cache,
    attacks_crash,
    attacks_declared,
    attacks_disk,
    attacks_files,
    attacks_models,
    attacks_service,
    attacks_text,
)
from tests.reliability.harness import ATTACKS, Attack

MODULES = (
    attacks_crash,
    attacks_cache,
    attacks_disk,
    attacks_files,
    attacks_text,
    attacks_declared,
    attacks_models,
    attacks_service,
)
COVERED_ELSEWHERE = {
    "11: native model crash during an answer": "tests/app/test_crash_report.py (a real SIGSEGV inside generation)",
}


def selected(fast_only: bool = False, names: list[str] | None = None) -> list[Attack]:
    """The registered attacks, in module order; only the fast ones, or those whose names contain
    one of `names`."""
    chosen = [a for a in ATTACKS if not (fast_only and a.slow)]
    if names:
        chosen = [a for a in chosen if any(n.lower() in a.name.lower() for n in names)]
    return chosen
