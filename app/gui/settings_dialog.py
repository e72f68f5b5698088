"""Settings (also the first-run help): the model, the library, the interface language, a Test
button and the doctor's report. Saved to the same config.toml the CLI reads."""

from __future__ import annotations

import copy
import secrets
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

BACKENDS = ["bundled", "gguf", "llama_server", "vllm", "openai"]
LANGUAGES = [("", "System / 系统"), ("en", "English"), ("zh_CN", "简体中文")]


def parse_options(text: str) -> dict:
    """ "quantization=gptq, max_num_seqs=16" as {"quantization": "gptq", "max_num_seqs": 16}."""
    options: dict = {}
    for part in text.split(","):
        key, _, value = part.partition("=")
        key, value = key.strip().replace("-", "_"), value.strip()
        if not key or not value:
            continue
        for cast in (int, float):
            try:
                options[key] = cast(value)
                break
            except ValueError:
                continue
        else:
            options[key] = {"true": True, "false": False}.get(value.lower(), value)
    return options


class SettingsDialog(QDialog):
    test_requested = Signal(object)  # a Settings copy to try
    doctor_requested = Signal()

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
                "Drop PDFs, Word, HTML, Markdown or text files onto the window, then ask questions. "
                "Answers cite the page they come from. Everything stays on this computer."
            )
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

    def _model_tab(self) -> QWidget:
        llm = self.settings.llm
        model = QWidget()
        form = QFormLayout(model)
        self.backend = QComboBox()
        labels = [
            self.tr("Bundled model (SmolLM2-135M, CPU)"),
            self.tr("GGUF file (llama.cpp)"),
            self.tr("GGUF file, several answers at once (llama-server, started by DocDesk)"),
            self.tr("vLLM (started by DocDesk)"),
            self.tr("OpenAI-compatible server"),
        ]
        for key, label in zip(BACKENDS, labels, strict=True):
            self.backend.addItem(label, key)
        if llm.backend in ("openai", "vllm", "llama_server"):
            kind = llm.backend
        else:
            kind = "gguf" if llm.model else "bundled"
        self.backend.setCurrentIndex(BACKENDS.index(kind))
        self.model = QLineEdit(llm.model or "")
        self.model.setPlaceholderText(self.tr("GGUF file, served model name, or Hugging Face model for vLLM"))
        browse = QPushButton(self.tr("Browse…"))
        browse.clicked.connect(self._browse_model)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model, 1)
        model_row.addWidget(browse)
        self.url = QLineEdit(llm.url)
        self.vllm_options = QLineEdit(", ".join(f"{k}={v}" for k, v in llm.vllm.items()))
        self.vllm_options.setPlaceholderText("quantization=gptq, max_num_seqs=16, gpu_memory_utilization=0.9")
        self.gpu_layers = QSpinBox(minimum=-1, maximum=999, value=llm.gpu_layers)
        self.gpu_layers.setSpecialValueText(self.tr("all"))
        self.context = QSpinBox(minimum=0, maximum=1_048_576, singleStep=1024, value=llm.context or 0)
        self.context.setSpecialValueText(self.tr("model default"))
        self.slots = QSpinBox(minimum=0, maximum=64, value=llm.slots or 0)
        self.slots.setSpecialValueText(self.tr("as many as fit"))
        self.kv_cache = QComboBox()
        self.kv_cache.addItems(["auto", "f16", "q8_0"])
        self.kv_cache.setCurrentText(llm.kv_cache or "auto")
        form.addRow(self.tr("Backend"), self.backend)
        form.addRow(self.tr("Model"), model_row)
        form.addRow(self.tr("Server URL"), self.url)
        form.addRow(self.tr("vLLM options"), self.vllm_options)
        form.addRow(self.tr("GPU layers"), self.gpu_layers)
        form.addRow(self.tr("Context length"), self.context)
        form.addRow(self.tr("Parallel answers (llama-server)"), self.slots)
        form.addRow(self.tr("KV cache"), self.kv_cache)
        self.test = QPushButton(self.tr("Test"))
        self.test.clicked.connect(lambda: self.test_requested.emit(self.collect()))
        self.test_result = QLabel()
        self.test_result.setWordWrap(True)
        form.addRow(self.test, self.test_result)
        return model

    def _library_tab(self) -> QWidget:
        library = QWidget()
        lform = QFormLayout(library)
        self.library_path = QLineEdit(str(self.settings.library))
        self.embedding = QLineEdit(self.settings.embedding_model or "")
        self.embedding.setPlaceholderText(self.tr("bundled all-MiniLM-L6-v2"))
        self.language = QComboBox()
        for key, label in LANGUAGES:
            self.language.addItem(label, key)
        self.language.setCurrentIndex([k for k, _ in LANGUAGES].index(self.settings.ui_language or ""))
        lform.addRow(self.tr("Library folder"), self.library_path)
        lform.addRow(self.tr("Embedding model"), self.embedding)
        lform.addRow(self.tr("Interface language"), self.language)
        lform.addRow(QLabel(self.tr("A new library folder, model or language takes effect after a restart.")))
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

    def _browse_model(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, self.tr("Choose a GGUF model"), "", "GGUF (*.gguf)")
        if path:
            self.model.setText(path)
            self.backend.setCurrentIndex(1)

    def collect(self):
        """The settings as the dialog shows them."""
        settings = copy.deepcopy(self.settings)
        llm = settings.llm
        kind = self.backend.currentData()
        llm.backend = {"bundled": "llama_cpp", "gguf": "llama_cpp"}.get(kind, kind)
        llm.model = None if kind == "bundled" else (self.model.text().strip() or None)
        llm.url = self.url.text().strip() or llm.url
        llm.gpu_layers = self.gpu_layers.value()
        llm.context = self.context.value() or None
        llm.slots = self.slots.value() or None
        llm.kv_cache = None if self.kv_cache.currentText() == "auto" else self.kv_cache.currentText()
        llm.vllm = parse_options(self.vllm_options.text())
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

    def show_test(self, text: str) -> None:
        self.test_result.setText(text)

    def show_doctor(self, text: str) -> None:
        self.doctor.setPlainText(text)
