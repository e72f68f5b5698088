"""The model's state in the status bar (loading, ready, what it is doing, error), loading it in
the background, and the doctor's report."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QDialog, QLabel, QTextBrowser, QVBoxLayout, QWidget

from app.desk.services import DocDesk
from app.gui.ops import Op, describe
from app.gui.tasks import Workers


class EngineController(QObject):
    state_changed = Signal(str)  # loading | ready | busy | error

    def __init__(self, desk: DocDesk, workers: Workers, label: QLabel, gpu_warning: QLabel, window: QWidget) -> None:
        super().__init__(window)
        self.desk, self.workers, self.label, self.gpu_warning, self.window = desk, workers, label, gpu_warning, window
        self.state = ""
        self.error = ""
        self.activities: dict[str, str] = {}  # what the model is doing now: "answer", "summary" -> words
        gpu_warning.linkActivated.connect(lambda _link: self.show_doctor_report())

    def set_state(self, state: str, reason: str = "") -> None:
        """loading | ready | busy | error; "ready" while something runs shows what runs ("busy")."""
        if state == "ready" and self.activities:
            state = "busy"
        self.state, self.error = state, reason
        text = {
            "loading": self.tr("Engine: loading the models…"),
            "ready": self.tr("Engine: ready"),
            "busy": self.tr("Engine: %1").replace("%1", " · ".join(self.activities.values()) or self.tr("working…")),
            "error": self.tr("Engine error: %1").replace("%1", reason),
        }[state]
        self.label.setText(text)
        self.state_changed.emit(state)

    def doing(self, activity: str, words: str) -> None:
        """`activity` ("answer", "summary") is under way, described by `words`; "" when it ended.
        The status bar says what the model does, unless it is loading or in error."""
        if words:
            self.activities[activity] = words
        else:
            self.activities.pop(activity, None)
        if self.state in ("ready", "busy"):
            self.set_state("ready")

    def answering(self, busy: bool) -> None:
        """An answer started or ended."""
        self.doing("answer", self.tr("answering…") if busy else "")

    def summarizing(self, event) -> None:
        """A summary's progress (engine.summarize's event), or None when it ended."""
        if event is None:
            self.doing("summary", "")
        elif event.stage == "map":
            words = self.tr("summarizing, block %1 of %2").replace("%1", str(min(event.done + 1, event.total)))
            self.doing("summary", words.replace("%2", str(event.total)))
        else:
            self.doing("summary", self.tr("summarizing, combining the blocks"))

    def warm_up(self) -> None:
        """Load the model and the embedder; nvidia-smi runs there too, never on the GUI thread."""

        def ready(warning: str) -> None:
            self.set_state("ready")
            self.show_gpu_warning(warning)

        def failed(exc: BaseException) -> None:
            self.set_state("error", describe(exc) + self.tr(" — open Settings to choose another model"))

        self.set_state("loading")
        Op(self.workers, "engine", "warm-up", lambda _ctx: self.desk.warm_up()).success(ready).failure(failed).run()

    def reload(self) -> None:
        """The model settings changed: load the new one now."""
        self.set_state("loading")
        Op(self.workers, "engine", "reload", lambda _ctx: self.desk.reload_backend()).success(
            lambda _r: self.set_state("ready")
        ).failure(lambda exc: self.set_state("error", describe(exc))).run()

    def show_gpu_warning(self, warning: str) -> None:
        """A GPU is here that the llama.cpp build cannot use: say so, with a link to the doctor's report."""
        self.gpu_warning.setVisible(bool(warning))
        self.gpu_warning.setToolTip(warning)
        self.gpu_warning.setText(
            '<a href="doctor">' + self.tr("⚠ The GPU is not used: see the doctor's report") + "</a>"
        )

    def show_doctor_report(self) -> QDialog:
        dialog = QDialog(self.window)
        dialog.setWindowTitle(self.tr("Doctor"))
        dialog.resize(820, 520)
        browser = QTextBrowser()
        browser.setPlainText(self.tr("Checking this machine…"))
        QVBoxLayout(dialog).addWidget(browser)
        dialog.show()
        self.doctor_dialog = dialog
        self.run_doctor(browser.setPlainText)
        return dialog

    def run_doctor(self, show) -> None:
        Op(self.workers, "engine", "doctor", lambda _ctx: self.desk.doctor_text()).success(show).failure(
            lambda exc: show(describe(exc))
        ).run()
