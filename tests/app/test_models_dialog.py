"""The Models dialog (offscreen Qt): the catalog with verdicts read on a worker from a local Hub
(tests/hub_server.py) serving the real bundled GGUF, a download with progress that ends in the
window using the model, Cancel keeping the partial file, and the three ways to the dialog."""

from __future__ import annotations

import tomllib

import pytest
from PySide6.QtCore import QUrl

from app.desk.services import DocDesk
from app.desk.settings import Settings
from engine.backends.llama_cpp import bundled_model_path
from engine.models.catalog import find, load_catalog
from tests.hub_server import FakeHub, sha256_of

GGUF = bundled_model_path()


@pytest.fixture
def hub(monkeypatch, tmp_path):
    server = FakeHub()
    for entry in load_catalog():
        server.add(entry.repo, entry.file, GGUF)
    server.start()
    monkeypatch.setenv("HF_ENDPOINT", server.endpoint)  # read when the dialog asks, by DocDesk and the child
    monkeypatch.setenv("DOCDESK_MODELS", str(tmp_path / "models"))
    yield server
    server.stop()


def all_read(dialog) -> bool:
    column = dialog.table.columnCount() - 1
    rows = range(dialog.table.rowCount())
    return bool(rows) and all("Reading" not in dialog.table.item(r, column).text() for r in rows)


def test_the_dialog_lists_the_catalog_with_this_machines_verdicts(qtbot, hub, monkeypatch):
    import threading

    import engine.models.catalog as catalog
    from app.gui.models_dialog import ModelsDialog

    threads, read = [], catalog.read_remote
    monkeypatch.setattr(catalog, "read_remote", lambda *a, **k: threads.append(threading.get_ident()) or read(*a, **k))
    used = []
    dialog = ModelsDialog(Settings(), used.append)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: all_read(dialog), timeout=30_000)
    assert dialog.table.rowCount() == len(load_catalog()) == len(threads)
    assert threading.get_ident() not in threads  # the headers were read on workers, never on the GUI thread
    column = dialog.table.columnCount() - 1
    assert all("CPU only: at most about" in dialog.table.item(r, column).text() for r in range(dialog.table.rowCount()))
    assert "This computer: no GPU" in dialog.machine_label.text() and "GB/s" in dialog.machine_label.text()
    gets = [r for r in hub.log if r.method == "GET" and r.path.startswith("/cdn/")]
    assert gets and all(r.range for r in gets) and max(r.sent for r in gets) <= 4 << 20
    assert dialog.table.item(0, 2).text() == f"{GGUF.stat().st_size / 1e9:.1f} GB"  # the size the Hub gave
    assert not dialog.download_button.isEnabled() and not dialog.use_button.isEnabled() and used == []
    from app.gui.screen_fit import available

    room = available(dialog)
    assert dialog.width() <= room.width() and dialog.height() <= room.height()  # fits a small screen


@pytest.fixture
def window(qtbot, tmp_path):
    from app.gui.main_window import MainWindow

    window = MainWindow(DocDesk(Settings(library=tmp_path / "library")), warm_up=False)
    qtbot.addWidget(window)
    window.show()
    yield window
    window.close()


def test_download_from_the_hub_then_the_window_uses_the_model(qtbot, hub, window, tmp_path):
    hub.bytes_per_second = 40 << 20  # a few seconds: progress is shown on the way
    dialog = window.open_models()
    qtbot.waitUntil(lambda: all_read(dialog), timeout=30_000)
    row = [e.name for e in dialog.entries].index("qwen3-4b")
    dialog.table.selectRow(row)
    assert dialog.download_button.isEnabled()
    op = dialog._download_selected()
    qtbot.waitUntil(lambda: dialog.progress.isVisible(), timeout=10_000)
    qtbot.waitUntil(lambda: "MB/s" in dialog.progress_label.text() and "left" in dialog.progress_label.text())
    assert 0 < dialog.progress.value() < 1000
    assert dialog.cancel_button.isVisible() and not dialog.download_button.isEnabled()
    qtbot.waitUntil(lambda: op.outcome == "success", timeout=60_000)
    path = tmp_path / "models" / "Qwen--Qwen3-4B-GGUF" / "Qwen3-4B-Q4_K_M.gguf"
    assert sha256_of(path) == sha256_of(GGUF)
    assert window.desk.settings.llm.model == str(path)  # switched without a restart
    qtbot.waitUntil(lambda: window.engine_state in ("ready", "error"), timeout=120_000)
    assert window.engine_state == "ready", window.engine_error
    assert window.desk.backend().model == path.name  # the engine reloaded the new file
    import os

    assert tomllib.loads(open(os.environ["DOCDESK_CONFIG"]).read())["llm"]["model"] == str(path)  # saved
    assert dialog.table.item(row, 0).text().startswith("●") and "now uses" in dialog.progress_label.text()
    assert not dialog.progress.isVisible() and dialog.use_button.isEnabled()


def test_cancel_keeps_the_part_already_downloaded(qtbot, hub, tmp_path):
    from app.gui.models_dialog import ModelsDialog

    hub.bytes_per_second = 5 << 20
    dialog = ModelsDialog(Settings(), lambda _path: None)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: all_read(dialog), timeout=30_000)
    entry = find("gemma-3-12b")
    dialog.table.selectRow([e.name for e in dialog.entries].index(entry.name))
    op = dialog._download_selected()
    partial = tmp_path / "models" / entry.repo.replace("/", "--") / (entry.file + ".incomplete")
    qtbot.waitUntil(lambda: partial.exists() and partial.stat().st_size > 2 << 20, timeout=30_000)
    dialog.cancel_button.click()
    qtbot.waitUntil(lambda: op.outcome == "cancelled", timeout=15_000)
    assert partial.exists() and 0 < partial.stat().st_size < GGUF.stat().st_size
    assert "kept for next time" in dialog.progress_label.text() and not dialog.cancel_button.isVisible()


def test_use_a_gguf_file_i_have_reads_its_header_and_switches(qtbot, hub):
    from app.gui.models_dialog import ModelsDialog

    used = []
    dialog = ModelsDialog(Settings(), used.append)
    qtbot.addWidget(dialog)
    op = dialog.use_file(GGUF)
    qtbot.waitUntil(lambda: op.outcome != "", timeout=30_000)
    assert used == [GGUF] and "CPU only" in dialog.progress_label.text()


def test_the_menu_the_first_run_guide_and_settings_open_the_dialog(qtbot, hub, window):
    from PySide6.QtWidgets import QMenu

    from app.gui.models_dialog import ModelsDialog

    assert any(window.models_action in menu.actions() for menu in window.menuBar().findChildren(QMenu))
    window.models_action.trigger()
    assert isinstance(window.models_dialog, ModelsDialog) and window.models_dialog.isVisible()
    window.models_dialog.close()

    link = "docdesk:models"
    assert f'href="{link}"' in window.chat_pane.guide.html()
    window.chat_pane.transcript.anchorClicked.emit(QUrl(link))
    assert window.models_dialog.isVisible()
    window.models_dialog.close()

    settings = window.open_settings()
    settings.models_button.click()
    dialog = window.models_dialog
    assert dialog.isVisible() and dialog.parent() is settings
    dialog.use(GGUF)  # Use from there: the Settings dialog shows the file it switched to
    assert settings.field("model").text() == str(GGUF) and settings.collect().llm.model == str(GGUF)
    settings.reject()
