"""Models: the catalog (engine/models/model_catalog.toml) with what each model does on this computer,
read from its GGUF header on the Hub before anything is downloaded; Download with progress,
speed, time left and Cancel; Use; and "Use a GGUF file I have…". Reached from the Models menu
action, the first-run guide and Settings → Model.

The dialog runs its reads and its download on workers of its own (app/gui/ops.py's Op over a
private Workers), so a download of many minutes never holds up the window's library or engine
work; closing the dialog cancels a download and keeps the part already fetched for next time.
Switching goes through `on_use(path)`: the window saves the setting and reloads the engine as
Settings does (app/gui/settings_controller.py), without a restart.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from app.gui.ops import Op, describe
from app.gui.screen_fit import fit_dialog
from app.gui.tasks import Workers

GIB = 1024**3
COLUMNS = 6  # model, card, size, licence, thinking, on this computer


class ModelsDialog(QDialog):
    def __init__(self, settings, on_use, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Models"))
        self.settings, self.on_use = settings, on_use
        self.workers = Workers()
        self.entries: list = []
        self.verdicts: dict[str, object] = {}
        self.download_op: Op | None = None
        self.downloading = False
        self.machine_label = QLabel(self.tr("Checking this computer…"), wordWrap=True)
        self.table = QTableWidget(0, COLUMNS)
        self.table.setHorizontalHeaderLabels(
            [self.tr("Model"), self.tr("Card"), self.tr("Size"), self.tr("Licence"), self.tr("Thinks"),
             self.tr("On this computer")]
        )  # fmt: skip
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(COLUMNS - 1, QHeaderView.Stretch)
        self.table.horizontalHeader().setStretchLastSection(True)  # the verdict gets the room left
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.table.itemDoubleClicked.connect(lambda _item: self._use_selected())
        layout = QVBoxLayout(self)
        layout.addWidget(self.machine_label)
        layout.addWidget(self.table, 1)
        layout.addLayout(self._download_row())
        layout.addWidget(self._buttons())
        QApplication.instance().aboutToQuit.connect(self._cancel_download)
        fit_dialog(self, QSize(980, 560))
        self.refresh()

    def _download_row(self) -> QHBoxLayout:
        self.progress = QProgressBar(maximum=1000, visible=False)
        self.progress_label = QLabel(wordWrap=True)
        self.cancel_button = QPushButton(self.tr("Cancel download"), visible=False)
        self.cancel_button.clicked.connect(self._cancel_download)
        row = QHBoxLayout()
        row.addWidget(self.progress, 1)
        row.addWidget(self.progress_label, 2)
        row.addWidget(self.cancel_button)
        return row

    def _buttons(self) -> QDialogButtonBox:
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        self.download_button = buttons.addButton(self.tr("Download"), QDialogButtonBox.ActionRole)
        self.use_button = buttons.addButton(self.tr("Use"), QDialogButtonBox.ActionRole)
        self.file_button = buttons.addButton(self.tr("Use a GGUF file I have…"), QDialogButtonBox.ActionRole)
        self.download_button.clicked.connect(self._download_selected)
        self.use_button.clicked.connect(self._use_selected)
        self.file_button.clicked.connect(self._choose_file)
        buttons.rejected.connect(self.reject)
        self.download_button.setEnabled(False)
        self.use_button.setEnabled(False)
        return buttons

    # -- the catalog and its verdicts ---------------------------------------------------------
    def refresh(self) -> Op:
        """Read the catalog, then each model's header from the Hub, on a worker; rows fill in as
        their headers arrive."""

        def work(ctx):
            from concurrent.futures import ThreadPoolExecutor

            from app.desk.model_download import catalog, hub_endpoint, models_dir
            from engine.models.catalog import judge, read_remote, this_machine

            entries = catalog()
            ctx.progress(("entries", entries))
            machine = this_machine()
            ctx.progress(("machine", machine))

            def one(entry):
                try:
                    facts = read_remote(entry, hub_endpoint(), models_dir() / ".headers")
                    ctx.progress(("verdict", (entry.name, facts, judge(facts, machine))))
                except Exception as exc:  # one unreachable file costs only its own row
                    ctx.progress(("verdict", (entry.name, None, exc)))

            with ThreadPoolExecutor(max_workers=4) as pool:
                list(pool.map(one, entries))
            return machine

        self.refresh_op = Op(self.workers, "store", "models-read", work).progress(
            self._read, every_s=0, final=lambda _v: True
        )
        return self.refresh_op.failure(lambda exc: self.machine_label.setText(describe(exc))).run()

    def _read(self, value) -> None:
        kind, payload = value
        if kind == "entries":
            self._fill(payload)
        elif kind == "machine":
            self.machine_label.setText(self._machine_words(payload))
        else:
            name, facts, verdict = payload
            self.verdicts[name] = verdict
            row = next(i for i, e in enumerate(self.entries) if e.name == name)
            if facts is not None:
                self.table.item(row, 2).setText(f"{facts.shape.file_bytes / 1e9:.1f} GB")
            self.table.item(row, COLUMNS - 1).setText(self.verdict_words(verdict))
            self._update_buttons()

    def _fill(self, entries) -> None:
        from app.desk.model_download import downloaded

        self.entries = entries
        self.table.setRowCount(len(entries))
        thinks = {"always": self.tr("always"), "switchable": self.tr("on or off"), "no": self.tr("no")}
        for row, entry in enumerate(entries):
            size = f"{'' if entry.size_exact else '~'}{entry.size_bytes / 1e9:.1f} GB"
            cells = (
                entry.title,
                entry.tier,
                size,
                entry.licence,
                thinks[entry.thinking],
                self.tr("Reading its header…"),
            )
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(f"{entry.repo}/{entry.file} · {', '.join(entry.languages)}")
                self.table.setItem(row, column, item)
            self._mark(row, downloaded(entry))
        self.table.resizeColumnsToContents()

    def _mark(self, row: int, local: Path | None) -> None:
        item, entry = self.table.item(row, 0), self.entries[row]
        in_use = local is not None and str(local.resolve()) == (self.settings.llm.model or "")
        item.setText(("● " if in_use else "✓ " if local else "") + entry.title)
        item.setData(Qt.UserRole, str(local) if local else "")

    def _machine_words(self, machine) -> str:
        gpu = (
            self.tr("%1 (%2 GiB)").replace("%1", machine.gpu_name).replace("%2", f"{machine.vram_bytes / GIB:.0f}")
            if machine.gpu_name and machine.gpu_usable
            else self.tr("no GPU that llama.cpp can use here")
        )
        return (
            self.tr("This computer: %1; %2 GiB memory; memory bandwidth measured here: %3 GB/s.")
            .replace("%1", gpu)
            .replace("%2", f"{machine.ram_bytes / GIB:.0f}")
            .replace("%3", f"{machine.bandwidth / 1e9:.1f}")
        )

    def verdict_words(self, verdict) -> str:
        """A verdict (engine/models/catalog.py), or the reason there is none, in the interface's language."""
        if isinstance(verdict, BaseException):
            if describe(verdict).startswith("cannot reach"):  # offline, or behind a proxy: one short line
                return self.tr("Unknown: the Hub cannot be reached from here")
            return self.tr("Unknown: %1").replace("%1", describe(verdict))
        gib = (f"{verdict.needed_bytes / GIB:.1f}", f"{verdict.available_bytes / GIB:.0f}")
        words = {
            "gpu": self.tr("Fits: %1 tokens of context, %2 answers at once"),
            "gpu-short": self.tr("Fits with a short context: %1 tokens, one answer at a time"),
            "gpu-no": self.tr("Does not fit: needs %3 GiB of GPU memory, the card has %4 GiB"),
            "cpu": self.tr("CPU only: at most about %5 tokens/s"),
            "cpu-no": self.tr("Does not fit: needs %3 GiB of memory, %4 GiB are free for it"),
        }[verdict.kind]
        for key, value in (("%1", f"{verdict.context:,}"), ("%2", str(verdict.parallel)), ("%3", gib[0]),
                           ("%4", gib[1]), ("%5", f"{verdict.tokens_per_s:.1f}")):  # fmt: skip
            words = words.replace(key, value)
        return words

    def _selected(self) -> int:
        rows = self.table.selectionModel().selectedRows()
        return rows[0].row() if rows else -1

    def _update_buttons(self) -> None:
        row = self._selected()
        local = self.table.item(row, 0).data(Qt.UserRole) if row >= 0 else ""
        self.download_button.setEnabled(row >= 0 and not local and not self.downloading)
        self.use_button.setEnabled(bool(local))

    # -- download ------------------------------------------------------------------------------
    def _download_selected(self) -> Op | None:
        row = self._selected()
        if row < 0:
            return None
        entry = self.entries[row]

        def work(ctx):
            from app.desk.model_download import download

            return download(entry, on_progress=ctx.progress, cancel=ctx.cancel)

        self.progress.setValue(0)
        self.progress_label.setText(self.tr("Asking the Hub for %1…").replace("%1", entry.file))
        op = Op(self.workers, "ingest", "model-download", work).progress(
            self._show_progress, every_s=0.2, final=lambda p: p.phase in ("verifying", "done")
        )
        op.success(lambda path: self._downloaded(row, path)).cancelled(lambda _s: self._download_stopped(None))
        self.download_op = op.failure(self._download_stopped).busy(self._downloading).run()
        return self.download_op

    def _downloading(self, busy: bool) -> None:
        self.downloading = busy
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)
        self._update_buttons()

    def _show_progress(self, p) -> None:
        self.progress.setValue(int(p.fraction * 1000))
        if p.phase == "verifying":
            text = self.tr("Checking the file's sha256 against the Hub's…")
        else:
            text = self.tr("%1 of %2 GB · %3 MB/s").replace("%1", f"{p.done / 1e9:.2f}")
            text = text.replace("%2", f"{p.total / 1e9:.2f}").replace("%3", f"{p.speed / 1e6:.1f}")
            if p.eta_s is not None:
                left = f"{p.eta_s / 60:.0f} min" if p.eta_s >= 90 else f"{p.eta_s:.0f} s"
                text += " · " + self.tr("%1 left").replace("%1", left)
        self.progress_label.setText(text)

    def _downloaded(self, row: int, path: Path) -> None:
        self._mark(row, Path(path))
        self.progress_label.setText(self.tr("Downloaded and checked: %1").replace("%1", str(path)))
        self.use(Path(path))

    def _download_stopped(self, exc) -> None:
        if exc is None:
            words = self.tr("Download cancelled; the part already downloaded is kept for next time.")
        else:
            words = self.tr("Download failed: %1").replace("%1", describe(exc))
        self.progress_label.setText(words)

    def _cancel_download(self) -> None:
        if self.download_op is not None and self.download_op.running:
            self.download_op.cancel()

    # -- use -------------------------------------------------------------------------------------
    def _use_selected(self) -> None:
        row = self._selected()
        local = self.table.item(row, 0).data(Qt.UserRole) if row >= 0 else ""
        if local:
            self.use(Path(local))

    def use(self, path: Path) -> None:
        """Switch the window to `path`, then mark it in the table."""
        self.on_use(path)
        for row in range(len(self.entries)):
            local = self.table.item(row, 0).data(Qt.UserRole)
            self._mark(row, Path(local) if local else None)
        self.progress_label.setText(self.tr("DocDesk now uses %1.").replace("%1", Path(path).name))

    def _choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, self.tr("Choose a GGUF model"), "", "GGUF (*.gguf)")
        if path:
            self.use_file(Path(path))

    def use_file(self, path: Path) -> Op:
        """A GGUF file of the user's own: its header read (on a worker), its verdict shown, then used."""

        def work(_ctx):
            from app.desk.model_download import check_chosen_model
            from engine.models.catalog import judge, this_machine

            facts, warning = check_chosen_model(path)  # a broken chat template: refused, or its family's
            return judge(facts, this_machine()), warning

        def done(result) -> None:
            verdict, warning = result
            self.use(path)
            text = self.tr("DocDesk now uses %1: %2").replace("%1", path.name).replace("%2", self.verdict_words(verdict))
            if warning:
                text += "\n" + self.tr("Warning: %1").replace("%1", warning)
            self.progress_label.setText(text)

        failed = lambda exc: self.progress_label.setText(self.tr("Not used: %1").replace("%1", describe(exc)))  # noqa: E731
        return Op(self.workers, "store", "model-file", work).success(done).failure(failed).run()

    def done(self, result: int) -> None:  # closed: a download stops, its part is kept for next time
        self._cancel_download()
        self.refresh_op.cancel()
        super().done(result)


def open_models(window, settings_dialog=None) -> ModelsDialog:
    """The Models dialog over `window` (the main window): Use saves the setting and reloads the
    engine through its settings controller; from Settings, the dialog's GGUF field follows too."""
    from app.desk.model_download import use_model

    def use(path: Path) -> None:
        window.settings.apply(use_model(window.desk.settings, path))
        if settings_dialog is not None:
            settings_dialog.set_gguf(str(path))

    old = getattr(window, "models_dialog", None)
    if old is not None and old.isVisible() and old.parent() is (settings_dialog or window):
        old.raise_()
        return old
    dialog = ModelsDialog(window.desk.settings, use, settings_dialog or window)
    dialog.show()
    window.models_dialog = dialog  # kept: its workers may still report after it is closed
    return dialog
