"""What an empty chat shows: three steps to a first answer, what the bundled model is and how to
use a real one, and the GPU situation in one sentence with the next step (from the doctor,
engine/models/doctor.py, checked on a worker: nvidia-smi and llama_cpp's import are slow)."""

from __future__ import annotations

import html

from PySide6.QtCore import QObject, QUrl, Signal
from PySide6.QtGui import QKeySequence

from app.desk.doctor_text import gpu_situation
from app.gui.format_list import formats_phrase
from app.gui.ops import Op
from engine.backends import registry

MODELS_LINK = "docdesk:models"  # the guide's link to the Models dialog (app/gui/models_dialog.py)


class FirstRunGuide(QObject):
    """The guide's HTML; `note` is the GPU sentence, "" while it is being checked."""

    models_requested = Signal()  # its "choose a model" link was clicked

    def follow(self, url: QUrl) -> None:
        """A link clicked in the transcript: the guide's own opens the Models dialog."""
        if url.toString() == MODELS_LINK:
            self.models_requested.emit()

    def html(self, note: str = "") -> str:
        add = QKeySequence(QKeySequence.Open).toString(QKeySequence.NativeText)
        steps = (
            self.tr("<b>Add documents</b>: drop them on the window, or press %1 (%2).")
            .replace("%1", html.escape(add))
            .replace("%2", html.escape(formats_phrase())),
            self.tr(
                "<b>Ask a question</b> in the box below (Ctrl+Enter). Answers cite the document and page "
                "they come from; click a citation to see it."
            ),
            self.tr("<b>Choose a model</b> in Settings → Model.")
            + " "
            + self.tr('<a href="%1">Get one that fits this computer</a>.').replace("%1", MODELS_LINK),
        )
        items = "".join(f"<li>{step}</li>" for step in steps)
        model = self.tr(
            "The bundled model is SmolLM2-135M-Instruct, a 135M-parameter demonstration model: it runs "
            "anywhere but answers poorly. For real answers choose, in Settings → Model, a GGUF file such as "
            "Qwen2.5 or Qwen3 (7B) or Gemma 3 at Q4_K_M, or an OpenAI-compatible server."
        )
        gpu = html.escape(note) if note else "<i>" + self.tr("Checking this machine's GPU…") + "</i>"
        title = self.tr("Start in three steps")
        return f"<h3>{title}</h3><ol>{items}</ol><p>{model}</p><p>{gpu}</p>"

    def gpu_sentence(self, situation: tuple[str, str, float], backend: str = "llama_cpp") -> str:
        """One sentence from the doctor's GPU findings: what runs where, and what to do next."""
        kind, name, gib = situation
        if kind == "none":
            return self.tr(
                "No NVIDIA GPU here: answers run on the CPU, so choose a small model (1–4B parameters, Q4_K_M)."
            )
        if kind == "offload" or not registry.declared(backend).installed_llama_cpp:  # others bring their own build
            return (
                self.tr("GPU: %1 (%2 GiB), used for answers: choose a model that fits in its memory.")
                .replace("%1", name)
                .replace("%2", f"{gib:.0f}")
            )
        if kind == "cpu-build":
            return self.tr(
                "A GPU is here (%1) but this llama.cpp build cannot offload to it: install the CUDA toolkit "
                "(nvcc) and run `make run` again."
            ).replace("%1", name)
        return self.tr(
            "A GPU is here (%1) but llama-cpp-python is not installed: install the CUDA toolkit (nvcc) and "
            "run `make run`."
        ).replace("%1", name)

    def server_sentence(self, url: str) -> str:
        return self.tr("Answers come from the server at %1: its GPU, not this computer's, does the work.").replace(
            "%1", url
        )

    def check(self, workers, pane, llm) -> None:
        """Fill `pane`'s guide with the GPU sentence once the doctor has looked (on the engine's worker)."""
        if registry.declared(llm.backend).remote:
            pane.set_first_run_note(self.server_sentence(llm.url))
            return

        def look(_ctx):
            from engine.models.doctor import report

            return gpu_situation(report(None, None, None))

        Op(workers, "engine", "gpu-check", look).success(
            lambda situation: pane.set_first_run_note(self.gpu_sentence(situation, llm.backend))
        ).failure(lambda _exc: pane.set_first_run_note(self.tr("The GPU check failed: see Settings → Doctor."))).run()
