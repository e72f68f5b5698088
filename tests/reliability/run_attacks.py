"""Run the reliability attacks and print their table as Markdown; write it to
tests/reliability/RESULTS.md with the date, the machine and the command.

    python tests/reliability/run_attacks.py            # every attack, the full-size ones too
    python tests/reliability/run_attacks.py --fast     # only the small forms (what CI runs)
    python tests/reliability/run_attacks.py --only bomb kill   # attacks whose names contain these
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from tests.reliability.attacks import COVERED_ELSEWHERE, selected  # noqa: E402
from tests.reliability.harness import ROOT, Row, Shared, run_attack  # noqa: E402

RESULTS = Path(__file__).with_name("RESULTS.md")


def machine() -> str:
    memory = ""
    try:
        with open("/proc/meminfo") as handle:
            kb = int(handle.readline().split()[1])
        memory = f", {kb / 2**20:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    load = f", load average {os.getloadavg()[0]:.1f} at the start" if hasattr(os, "getloadavg") else ""
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores (nproc){memory}{load}"


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def table(rows: list[Row]) -> str:
    lines = [
        "| attack | expected | result | time (s) | peak memory (MB) |",
        "| --- | --- | --- | ---: | ---: |",
    ]
    for row in rows:
        mark = {"pass": "pass", "fail": "**FAIL**", "skipped": "skipped"}[row.result]
        name = row.attack + (" *(slow)*" if row.slow else "")
        lines.append(
            f"| {_cell(name)} | {_cell(row.expected)} | {mark}: {_cell(row.observation)} "
            f"| {row.seconds:.1f} | {row.peak_mb:.0f} |"
        )
    for name, where in COVERED_ELSEWHERE.items():
        lines.append(f"| {name} | the question is kept and the next start says what happened | see {where} | | |")
    return "\n".join(lines)


def report(rows: list[Row], command: str, wall_s: float, started: str, host: str) -> str:
    counts = {result: sum(r.result == result for r in rows) for result in ("pass", "fail", "skipped")}
    return (
        "# DocDesk reliability attacks\n\n"
        f"- date: {started}\n- machine: {host}\n- command: `{command}`\n"
        f"- {len(rows)} attack{'s' if len(rows) != 1 else ''}: {counts['pass']} passed, {counts['fail']} failed, {counts['skipped']} skipped; "
        f"{wall_s:.0f} s in all (time and memory below are the `docdesk` processes' own: wall seconds of its "
        "runs, and the largest resident set of the CLI or its reader process)\n\n"
        f"{table(rows)}\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="only the small forms, as CI runs them")
    parser.add_argument("--only", nargs="+", metavar="WORD", help="only attacks whose names contain a WORD")
    parser.add_argument("--no-write", action="store_true", help=f"print the table, do not write {RESULTS.name}")
    parser.add_argument("--append", action="store_true", help=f"add the table to {RESULTS.name} as a new section")
    args = parser.parse_args(argv)
    attacks = selected(args.fast, args.only)
    started, host, began = datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), machine(), time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory(prefix="docdesk-attacks-") as base:
        shared = Shared(Path(base) / "shared")
        for number, item in enumerate(attacks):
            row = run_attack(item, Path(base) / f"attack-{number:02d}", shared)
            print(
                f"{row.result:7} {row.seconds:7.1f} s {row.peak_mb:6.0f} MB  {row.attack}", file=sys.stderr, flush=True
            )
            rows.append(row)
    command = "python " + " ".join(
        shlex.quote(a) for a in [str(Path(__file__).relative_to(ROOT)), *(argv or sys.argv[1:])]
    )
    text = report(rows, command, time.perf_counter() - began, started, host)
    print(text)
    if args.append and RESULTS.exists():
        text = RESULTS.read_text(encoding="utf-8") + "\n" + text.replace("# DocDesk reliability attacks", "## Run", 1)
    if not args.no_write:
        RESULTS.write_text(text, encoding="utf-8")
    return 1 if any(r.result == "fail" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
