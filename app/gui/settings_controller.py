"""The Settings dialog from the window: test a model before saving, run the doctor, apply."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMessageBox, QStatusBar, QWidget

from app.desk.services import DocDesk
from app.desk.settings import save_settings
from app.gui.engine_controller import EngineController
from app.gui.ops import Op, describe
from app.gui.serve_controller import ServeController
from app.gui.tasks import Workers


class SettingsController(QObject):
    restart_requested = Signal()  # the user chose to restart now for a setting only a new process reads

    def __init__(
        self,
        desk: DocDesk,
        workers: Workers,
        engine: EngineController,
        status: QStatusBar,
        window: QWidget,
        serve: ServeController | None = None,
    ) -> None:
        super().__init__(window)
        self.desk, self.workers, self.engine, self.status, self.window = desk, workers, engine, status, window
        self.serve = serve
        self.dialog = None

    def open(self):
        from app.gui.settings_dialog import SettingsDialog

        dialog = SettingsDialog(self.desk.settings, self.window)
        dialog.test_requested.connect(lambda settings: self.test_model(settings, dialog))
        dialog.doctor_requested.connect(lambda: self.engine.run_doctor(dialog.show_doctor))
        dialog.accepted.connect(lambda: self.apply(dialog.collect()))
        dialog.show()
        self.dialog = dialog
        return dialog

    def apply(self, settings) -> None:
        warning = self._check_model(settings)
        if warning is False:
            return  # refused: nothing saved, the message says why
        self.desk.embedding_model_chosen(settings)  # chosen here: the library may go back to it
        path = save_settings(settings)
        llm_changed = settings.llm != self.desk.settings.llm
        # The language is read when the window starts, the library folder when the façade opens it.
        needs_restart = settings.ui_language != self.desk.settings.ui_language or (
            Path(settings.library).expanduser() != Path(self.desk.settings.library).expanduser()
        )
        self.desk.settings.llm = settings.llm
        self.desk.settings.answers = settings.answers
        self.desk.settings.ui_language = settings.ui_language
        self.desk.settings.serve = settings.serve
        self.status.showMessage(self.tr("Settings saved to %1").replace("%1", str(path)), 6000)
        if warning:  # too long for the status bar, and worth reading: the model runs with another template
            box = QMessageBox(
                QMessageBox.Information, self.tr("Chat template replaced"), warning, QMessageBox.Ok, self.window
            )
            box.open()
            self.warning_box = box
        if llm_changed:
            self.engine.reload()
        if self.serve is not None:  # a new model may run more answers at once: the queue follows it
            self.serve.apply(settings.serve, restart=llm_changed)
        if needs_restart:
            self.offer_restart()

    def _check_model(self, settings) -> str | None | bool:
        """A GGUF file newly chosen here, checked as `docdesk models use` checks it: its header and
        its chat template (app/desk/model_download.py). The warning where its family's template
        stands in; False where it is refused (said in a message box; nothing is saved)."""
        model = settings.llm.model
        if not model or model == self.desk.settings.llm.model or not str(model).lower().endswith(".gguf"):
            return None
        from app.desk.model_download import check_chosen_model
        from engine.errors import EngineError

        try:
            return check_chosen_model(Path(model))[1]  # a header and a 2 s-bounded render: quick enough here
        except EngineError as exc:
            box = QMessageBox(
                QMessageBox.Warning, self.tr("Model not used"), describe(exc), QMessageBox.Ok, self.window
            )
            box.open()
            self.refused_box = box
            return False

    def offer_restart(self) -> QMessageBox:
        """Ask whether to restart now; the answer comes back to `_restart_answered`."""
        box = QMessageBox(
            QMessageBox.Question,
            self.tr("Restart DocDesk?"),
            self.tr("The new interface language or library folder is used from the next start. Restart DocDesk now?"),
            QMessageBox.NoButton,
            self.window,
        )
        self.restart_button = box.addButton(self.tr("Restart now"), QMessageBox.AcceptRole)
        box.addButton(self.tr("Later"), QMessageBox.RejectRole)
        box.setDefaultButton(self.restart_button)
        box.finished.connect(lambda _result: self._restart_answered(box.clickedButton() is self.restart_button))
        box.open()
        self.restart_box = box
        return box

    def _restart_answered(self, restart: bool) -> None:
        if restart:
            self.restart_requested.emit()
        else:
            self.status.showMessage(self.tr("The change takes effect when DocDesk starts again"), 8000)

    def test_model(self, settings, dialog) -> None:
        dialog.show_test(self.tr("Testing…"))

        def done(result) -> None:
            text, stats, model = result
            dialog.show_test(
                self.tr("%1 tokens/s · first token %2 ms · %3: “%4”")
                .replace("%1", f"{stats.tokens_per_s:.1f}")
                .replace("%2", f"{stats.ttft_ms:.0f}")
                .replace("%3", Path(model).name)
                .replace("%4", text[:80])
            )

        Op(self.workers, "engine", "test", lambda _ctx: self.desk.try_model(settings.llm)).success(done).failure(
            lambda exc: dialog.show_test(self.tr("Failed: %1").replace("%1", describe(exc)))
        ).run()
