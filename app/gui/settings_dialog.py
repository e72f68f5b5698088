"""Settings (also the first-run help): the model, the library, the interface language, a Test
button and the doctor's report. Saved to the same config.toml the CLI reads."""

from __future__ import annotations

import copy
import secrets
from pathlib import Path

from PySide6.QtCore import QCoreApplication, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.gui.format_list import formats_phrase
from app.gui.screen_fit import fit_dialog
from engine.backends import registry
from engine.backends.options import parse_options

LANGUAGES = [("", "System / 系统"), ("en", "English"), ("zh_CN", "简体中文")]
__all__ = ["SettingsDialog", "parse_options"]


def tr_backend(text: str) -> str:
    """A backend's label or help (engine/backends/registry.py), in the interface language."""
    return QCoreApplication.translate("Backends", text) if text else ""


class SettingsDialog(QDialog):
    test_requested = Signal(object)  # a Settings copy to try
    doctor_requested = Signal()
    models_requested = Signal()  # "Models…": the catalog with what fits (app/gui/models_dialog.py)

    def __init__(self, settings, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Settings"))
        self.settings = copy.deepcopy(settings)
        tabs = QTabWidget()
        tabs.addTab(self._model_tab(), self.tr("Model"))
        tabs.addTab(self._library_tab(), self.tr("Library"))
        tabs.addTab(self._serve_tab(), self.tr("Serve to editors"))
        tabs.addTab(self._doctor_tab(), self.tr("Doctor"))
        help_text = QLabel(
            self.tr(
                "Drop documents onto the window (%1), then ask questions. "
                "Answers cite the page they come from. Everything stays on this computer."
            ).replace("%1", formats_phrase())
        )
        help_text.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.Save | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(help_text)
        layout.addWidget(tabs, 1)
        layout.addWidget(buttons)
        self.tabs = tabs
        fit_dialog(self, self.sizeHint())  # never past a small screen

    def _model_tab(self) -> QWidget:
        """The backend list and, below it, only the fields of the chosen backend (one page each)."""
        model = QWidget()
        form = QFormLayout(model)
        self.backend = QComboBox()
        self.pages = QStackedWidget()
        self.fields: dict[str, dict[str, QWidget]] = {}  # choice key -> option name -> its widget
        self._lines = registry.offered()
        for _name, choice in self._lines:
            self.backend.addItem(tr_backend(choice.label), choice.key)
            self.pages.addWidget(self._choice_page(choice))
        self.backend.currentIndexChanged.connect(self._show_choice)
        self.backend.setCurrentIndex(self.backend.findData(registry.choice_for(self.settings.llm)))
        self._show_choice(self.backend.currentIndex())
        self.models_button = QPushButton(self.tr("Models…"))
        self.models_button.setToolTip(self.tr("Get a model that fits this computer, or use a GGUF file you have"))
        self.models_button.clicked.connect(self.models_requested)
        backend_row = QHBoxLayout()
        backend_row.addWidget(self.backend, 1)
        backend_row.addWidget(self.models_button)
        form.addRow(self.tr("Backend"), backend_row)
        form.addRow(self.pages)
        self.test = QPushButton(self.tr("Test"))
        self.test.clicked.connect(lambda: self.test_requested.emit(self.collect()))
        self.test_result = QLabel()
        self.test_result.setWordWrap(True)
        form.addRow(self.test, self.test_result)
        return model

    def _choice_page(self, choice) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        form.setContentsMargins(0, 0, 0, 0)
        if choice.help:
            form.addRow(QLabel(tr_backend(choice.help), wordWrap=True))
        widgets = self.fields.setdefault(choice.key, {})
        for option in choice.options:
            widget, row = self._option_widget(option, getattr(self.settings.llm, option.name))
            widget.setToolTip(tr_backend(option.help))
            form.addRow(tr_backend(option.label), row)
            widgets[option.name] = widget
        return page

    def _option_widget(self, option, value) -> tuple[QWidget, QWidget | QHBoxLayout]:
        """The widget for one option (its kind: engine/backends/options.py), and the row holding it."""
        shown = option.shown(value)
        if option.kind in ("int", "float"):
            spin = QSpinBox() if option.kind == "int" else QDoubleSpinBox(decimals=1)
            number = int if option.kind == "int" else float
            spin.setRange(number(option.minimum), number(option.maximum))
            spin.setSingleStep(number(option.step))
            spin.setValue(number(shown))
            spin.setSpecialValueText(tr_backend(option.unset))
            return spin, spin
        if option.kind == "choice":
            combo = QComboBox()
            for label, _ in option.choices:
                combo.addItem(tr_backend(label), label)
            combo.setCurrentIndex(combo.findData(shown))
            return combo, combo
        if option.kind == "bool":
            check = QCheckBox(checked=bool(shown))
            return check, check
        line = QLineEdit(str(shown))
        line.setPlaceholderText(tr_backend(option.placeholder))
        if option.kind == "secret":
            line.setEchoMode(QLineEdit.Password)
        if option.kind not in ("gguf", "file"):
            return line, line
        browse = QPushButton(self.tr("Browse…"))
        browse.clicked.connect(lambda: self._browse(line, option.kind == "gguf"))
        row = QHBoxLayout()
        row.addWidget(line, 1)
        row.addWidget(browse)
        return line, row

    def _show_choice(self, index: int) -> None:
        """Show the chosen backend's page; the others take no room."""
        self.pages.setCurrentIndex(index)
        for i in range(self.pages.count()):
            policy = QSizePolicy.Preferred if i == index else QSizePolicy.Ignored
            self.pages.widget(i).setSizePolicy(policy, policy)
        self.pages.adjustSize()

    def field(self, name: str) -> QWidget | None:
        """The widget of option `name` for the chosen backend (None: it does not apply)."""
        return self.fields[self.backend.currentData()].get(name)

    def _library_tab(self) -> QWidget:
        library = QWidget()
        lform = QFormLayout(library)
        self.library_path = QLineEdit(str(self.settings.library))
        self.embedding = QLineEdit(self.settings.embedding_model or "")
        self.embedding.setPlaceholderText(self.tr("bundled: MiniLM with the multilingual USE"))
        self.language = QComboBox()
        for key, label in LANGUAGES:
            self.language.addItem(label, key)
        self.language.setCurrentIndex([k for k, _ in LANGUAGES].index(self.settings.ui_language or ""))
        lform.addRow(self.tr("Library folder"), self.library_path)
        lform.addRow(self.tr("Embedding model"), self.embedding)
        lform.addRow(self.tr("Interface language"), self.language)
        lform.addRow(QLabel(self.tr("A new library folder or language takes effect after a restart (DocDesk offers one); a new model loads at once.")))
        return library

    def _serve_tab(self) -> QWidget:
        """The OpenAI-compatible endpoint (as `docdesk serve`): on or off, its port, its token."""
        serve = self.settings.serve
        tab = QWidget()
        form = QFormLayout(tab)
        self.serve_enabled = QCheckBox(self.tr("Serve the library to editors while DocDesk is open"))
        self.serve_enabled.setChecked(serve.enabled)
        self.serve_port = QSpinBox(minimum=1, maximum=65535, value=serve.port or 8765)
        self.serve_token = QLineEdit(serve.token or "")
        self.serve_token.setPlaceholderText(self.tr("none: only programs on this computer can connect"))
        generate = QPushButton(self.tr("New token"))
        generate.clicked.connect(lambda: self.serve_token.setText(secrets.token_urlsafe(24)))
        token_row = QHBoxLayout()
        token_row.addWidget(self.serve_token, 1)
        token_row.addWidget(generate)
        self.serve_network = QCheckBox(self.tr("Let other computers connect (needs a token)"))
        self.serve_network.setChecked(serve.host not in ("127.0.0.1", "localhost", "::1"))
        self.serve_hint = QLabel(wordWrap=True)
        for changed in (self.serve_port.valueChanged, self.serve_token.textChanged, self.serve_network.toggled):
            changed.connect(self._show_serve_hint)
        self._show_serve_hint()
        form.addRow(self.serve_enabled)
        form.addRow(self.tr("Port"), self.serve_port)
        form.addRow(self.tr("Token"), token_row)
        form.addRow(self.serve_network)
        form.addRow(self.serve_hint)
        return tab

    def _show_serve_hint(self) -> None:
        host = "0.0.0.0" if self.serve_network.isChecked() else "127.0.0.1"
        text = self.tr('Point an OpenAI-compatible editor plugin at %1 with the model "docdesk".').replace(
            "%1", f"http://{'<this computer>' if host == '0.0.0.0' else host}:{self.serve_port.value()}/v1"
        )
        if self.serve_network.isChecked() and not self.serve_token.text().strip():
            text += " " + self.tr("Other computers can connect only with a token: set one.")
        self.serve_hint.setText(text)

    def _doctor_tab(self) -> QWidget:
        doctor = QWidget()
        dlayout = QVBoxLayout(doctor)
        self.doctor = QPlainTextEdit(readOnly=True)
        run_doctor = QPushButton(self.tr("Check this machine"))
        run_doctor.clicked.connect(self.doctor_requested)
        dlayout.addWidget(self.doctor, 1)
        dlayout.addWidget(run_doctor)
        return doctor

    def _browse(self, line: QLineEdit, gguf: bool) -> None:
        if gguf:
            path, _ = QFileDialog.getOpenFileName(self, self.tr("Choose a GGUF model"), "", "GGUF (*.gguf)")
        else:
            path, _ = QFileDialog.getOpenFileName(self, self.tr("Choose a program"))
        if path:
            line.setText(path)

    def _collect_llm(self, llm) -> None:
        """The chosen backend and its fields into `llm`; the other backends' settings are kept."""
        key = self.backend.currentData()
        name, choice = next((n, c) for n, c in self._lines if c.key == key)
        llm.backend = name
        for field, value in choice.fixed:
            setattr(llm, field, value)
        for option in choice.options:
            widget = self.fields[key][option.name]
            if option.kind in ("int", "float"):
                raw = widget.value()
            elif option.kind == "choice":
                raw = widget.currentData()
            elif option.kind == "bool":
                raw = widget.isChecked()
            else:
                raw = widget.text()
            setattr(llm, option.name, option.stored(raw))

    def collect(self):
        """The settings as the dialog shows them."""
        settings = copy.deepcopy(self.settings)
        self._collect_llm(settings.llm)
        settings.library = Path(self.library_path.text().strip() or str(settings.library)).expanduser()
        settings.embedding_model = self.embedding.text().strip() or None
        settings.ui_language = self.language.currentData()
        serve = settings.serve
        serve.enabled = self.serve_enabled.isChecked()
        serve.port = self.serve_port.value()
        serve.token = self.serve_token.text().strip() or None
        if not self.serve_network.isChecked():
            serve.host = "127.0.0.1"
        elif serve.host in ("127.0.0.1", "localhost", "::1"):
            serve.host = "0.0.0.0"  # every interface; an address set in config.toml is kept
        return settings

    def set_gguf(self, path: str) -> None:
        """Show the GGUF file the Models dialog switched to (already saved and loaded)."""
        if self.backend.currentData() not in (lines := registry.gguf_choices()):
            self.backend.setCurrentIndex(self.backend.findData(lines[0]))
        self.field("model").setText(path)
        self.settings.llm.model = path

    def show_test(self, text: str) -> None:
        self.test_result.setText(text)

    def show_doctor(self, text: str) -> None:
        self.doctor.setPlainText(text)
