"""Run a command and report its exit status, wall time and peak memory (the reliability suite's
meter): `python measure.py REPORT COMMAND...`.

The command inherits stdin, stdout and stderr. Its pid is written to REPORT.pid as soon as it
starts (for attacks that kill it), and REPORT gets {"rc", "seconds", "peak_kb"} once it ended:
`ru_maxrss` of RUSAGE_CHILDREN, the largest resident set of the command or of any process it
waited for in turn (DocDesk's reader process). This wrapper imports nothing heavy, and its own
memory is not counted.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time


def main() -> int:
    report, command = sys.argv[1], sys.argv[2:]
    started = time.perf_counter()
    child = subprocess.Popen(command)
    with open(report + ".pid.tmp", "w") as handle:
        handle.write(str(child.pid))
    os.replace(report + ".pid.tmp", report + ".pid")
    rc = child.wait()
    seconds = time.perf_counter() - started
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with open(report + ".tmp", "w") as handle:
        json.dump({"rc": rc, "seconds": seconds, "peak_kb": peak_kb}, handle)
    os.replace(report + ".tmp", report)
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main())
