"""The window's responsiveness (run by `make bench`):

1. Start-up: `docdesk` (no command) until the window is shown, measured from outside the process
   (interpreter start included) over 5 runs; models load after that, behind the window.
2. Event-loop stalls: a 10 ms heartbeat timer on the GUI thread while the 117-page book is
   ingested and, at the same time, a question is answered with the bundled model. The longest
   gap between beats is the longest the window could not repaint.

    QT_QPA_PLATFORM=offscreen python tests/bench/bench_gui.py
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
BOOK = ROOT / "tests" / "data" / "corpus" / "pdf-samples" / "009-pdflatex-geotopo" / "GeoTopo-komprimiert.pdf"


def startup(runs: int = 5) -> dict:
    times, inside = [], []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, DOCDESK_HOME=f"{tmp}/lib", DOCDESK_CONFIG=f"{tmp}/c.toml", DOCDESK_REPORT_STARTUP="1")
        for _ in range(runs):
            started = time.perf_counter()
            proc = subprocess.Popen([sys.executable, "-m", "app"], env=env, stdout=subprocess.PIPE, text=True)
            line = proc.stdout.readline()
            times.append(time.perf_counter() - started)
            inside.append(float(line.split()[1]))
            proc.kill()
            proc.wait()
    return {
        "runs": runs,
        "window_shown_s_median": round(statistics.median(times), 3),
        "window_shown_s_max": round(max(times), 3),
        "of_which_after_main_s_median": round(statistics.median(inside), 3),
    }


def stalls() -> dict:
    from PySide6.QtCore import QElapsedTimer, QTimer
    from PySide6.QtWidgets import QApplication

    from app.desk.services import DocDesk
    from app.desk.settings import Settings
    from app.gui.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["DOCDESK_CONFIG"] = f"{tmp}/c.toml"
        desk = DocDesk(Settings(library=Path(tmp) / "lib"))
        desk.add([ROOT / "assets" / "samples" / "docdesk-guide.pdf"])  # something to answer from
        window = MainWindow(desk)
        window.show()
        deadline = time.monotonic() + 300
        while window.engine_state != "ready" and time.monotonic() < deadline:
            app.processEvents()
            time.sleep(0.005)
        gaps: list[float] = []
        clock = QElapsedTimer()
        clock.start()
        last = [clock.elapsed()]

        def beat() -> None:
            now = clock.elapsed()
            gaps.append(now - last[0])
            last[0] = now

        heartbeat = QTimer(interval=10, timeout=beat)
        heartbeat.start()
        started = time.perf_counter()
        window.add_paths([BOOK])
        window.chat_pane.question.setPlainText("Which Python version does DocDesk need?")
        window.chat_pane._send()
        while (window.chat.answer_op is not None or window.workers.busy()) and time.perf_counter() - started < 600:
            app.processEvents()
            time.sleep(0.001)
        wall = time.perf_counter() - started
        heartbeat.stop()
        indexed = [d.title for d in desk.documents() if d.status == "indexed"]
        window.close()
    gaps.sort()
    return {
        "wall_s": round(wall, 1),
        "indexed": indexed,
        "beats": len(gaps),
        "max_gap_ms": gaps[-1],
        "p99_gap_ms": gaps[int(len(gaps) * 0.99) - 1],
        "gaps_over_100ms": sum(g > 100 for g in gaps),
    }


def main() -> int:
    print(json.dumps({"startup": startup()}, indent=2), flush=True)
    print(json.dumps({"stalls": stalls()}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
