"""Screenshots of the real window under Xvfb, in English and in Chinese (`make screenshots`).

    xvfb-run -a -s "-screen 0 1366x768x24" python assets/screenshots/take_screenshots.py en|zh

Needs the Debian packages xvfb, fonts-noto-cjk and Qt's xcb libraries (the Makefile target
installs them). Builds a library in a temporary folder from the sample guides and a corpus PDF,
asks a question with the bundled model, opens the citation and a summary, and grabs the screen.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = Path(os.environ.get("DOCDESK_SHOTS_DIR") or HERE)  # elsewhere to look at another screen size
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("QT_QPA_PLATFORM", "xcb")

QUESTIONS = {"en": "Which Python version does DocDesk need?", "zh": "V100 支持 bf16 吗？"}
SUMMARIZE = {"en": "DocDesk User Guide", "zh": "DocDesk 使用指南"}


def wait(app, condition, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the window did not get there in time")
        app.processEvents()
        time.sleep(0.02)


def grab(app, widget, name: str) -> None:
    for _ in range(20):  # let layouts and fonts settle
        app.processEvents()
        time.sleep(0.02)
    screen = app.primaryScreen()
    picture = screen.grabWindow(widget.winId())
    OUT.mkdir(parents=True, exist_ok=True)
    picture.save(str(OUT / name))
    print("wrote", OUT / name)


def main(language: str) -> int:
    from PySide6.QtCore import QUrl
    from PySide6.QtWidgets import QApplication

    from app.gui.app import install_translator
    from app.gui.main_window import MainWindow
    from app.desk.services import DocDesk
    from app.desk.settings import Settings
    from engine.citations import shown_sources

    tmp = Path(tempfile.mkdtemp(prefix="docdesk-shots-"))
    os.environ["DOCDESK_CONFIG"] = str(tmp / "config.toml")
    app = QApplication(sys.argv[:1])
    app.setApplicationName("DocDesk")
    if language == "zh":
        install_translator(app, "zh_CN")
    settings = Settings(library=tmp / "library")
    desk = DocDesk(settings)
    samples = ROOT / "assets" / "samples"
    desk.add(
        [samples / "docdesk-guide.pdf", samples / "docdesk-guide-zh.pdf",
         ROOT / "tests" / "data" / "corpus" / "pdf-samples" / "026-latex-multicolumn" / "multicolumn.pdf",
         ROOT / "tests" / "data" / "corpus" / "broken" / "html-named.pdf"]
    )  # fmt: skip
    window = MainWindow(desk)  # a first start: the window sizes itself to the screen, as a user's does
    window.show()
    wait(app, lambda: window.engine_state == "ready")
    grab(app, window, f"library-{language}.png")

    window.chat_pane.question.setPlainText(QUESTIONS[language])
    window.chat_pane._send()
    wait(app, lambda: window.chat.answer_op is None)
    grab(app, window, f"chat-{language}.png")

    index = len(window.chat_pane.messages) - 1
    sources = window.chat_pane.messages[index]["sources"]
    cited = shown_sources(sources)
    window.chat_pane.transcript.anchorClicked.emit(QUrl(f"cite:{index}/{cited[0].n}"))
    wait(app, lambda: window.viewer.isVisible())
    try:
        wait(app, lambda: window.viewer.pdf_view is None or window.viewer._result_chosen, 20)
    except TimeoutError:
        print("the cited passage was not found on the page; the page is shown without a highlight")
    grab(app, window.viewer, f"viewer-{language}.png")
    window.viewer.hide()

    doc = next(d for d in desk.documents() if d.title == SUMMARIZE[language])
    window.summarize(doc.id)
    wait(app, lambda: not window.summaries.running, 600)
    grab(app, window.summary_panel, f"summary-{language}.png")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "en"))
