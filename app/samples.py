"""`docdesk` with no command: until the window exists, index the sample documents and search them."""

from __future__ import annotations

import sys
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent.parent / "assets" / "samples"
DEMO_QUERIES = ("How do I add a folder to DocDesk?", "驱动版本")


def run_samples(args) -> int:
    from .cli import main

    library = ["--library", args.library] if args.library else []
    sys.stderr.write(f"DocDesk: indexing the sample documents in {SAMPLES}\n")
    code = main(["add", str(SAMPLES), *library])
    if code:
        return code
    main(["list", *library])
    for query in DEMO_QUERIES:
        sys.stdout.write(f"\n$ docdesk search {query!r} -k 2\n")
        main(["search", query, "-k", "2", *library])
    return 0
