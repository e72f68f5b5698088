"""A one-shot command waits for the dense-index build it started, so the next does not start over."""

from __future__ import annotations

import sys


def finish_index_rebuild(desk) -> None:
    """A command that started a background build of the dense index (a damaged or missing file,
    a library grown past the approximate threshold) waits for it before exiting, with progress on
    stderr: a one-shot command that exited at once would cancel it, and the next would start over.
    Ctrl-C stops waiting (the next start builds it again)."""
    progress = desk.index_rebuild()
    if progress is None:
        return
    sys.stderr.write(
        f"docdesk: building the search index for {progress.total:,} passages before exiting "
        "(Ctrl-C stops; the next start builds it again)\n"
    )
    try:
        while not desk.wait_for_index_rebuild(10):
            now = desk.index_rebuild()
            if now is not None:
                sys.stderr.write(f"docdesk: search index: {now.stage} {now.fraction:.0%}\n")
    except KeyboardInterrupt:
        sys.stderr.write("docdesk: search index build stopped\n")
