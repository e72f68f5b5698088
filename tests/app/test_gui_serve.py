"""The window's "Serve to editors": turned on in Settings, it serves the window's library to the
official openai client, the status bar says where, and closing the window stops it."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import socket  # noqa: E402

import pytest  # noqa: E402

pytest.importorskip("pytestqt")

import openai  # noqa: E402

from app.desk.services import DocDesk  # noqa: E402
from app.desk.settings import Settings, config_path, load_settings  # noqa: E402
from app.gui.main_window import MainWindow  # noqa: E402
from tests.conftest import SAMPLES  # noqa: E402

pytestmark = pytest.mark.models


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_serve_to_editors_from_settings(qtbot, tmp_path):
    settings = Settings(library=tmp_path / "library")
    settings.llm.backend = "fake"
    window = MainWindow(DocDesk(settings))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.engine_state in ("ready", "error"), timeout=120_000)
    window.desk.add([SAMPLES / "docdesk-guide.pdf"])
    assert not window.serve_label.isVisible()  # off until turned on

    port = free_port()
    dialog = window.open_settings()
    dialog.serve_enabled.setChecked(True)
    dialog.serve_port.setValue(port)
    dialog.serve_token.setText("team-token")
    assert f"http://127.0.0.1:{port}/v1" in dialog.serve_hint.text()
    dialog.accept()
    saved = load_settings(config_path()).serve
    assert saved.enabled and saved.port == port and saved.token == "team-token"
    url = f"http://127.0.0.1:{port}/v1"
    assert window.serve_label.isVisible() and url in window.serve_label.text()
    assert "token is required" in window.serve_label.toolTip()

    api = openai.OpenAI(base_url=url, api_key="team-token", max_retries=0)
    done = api.chat.completions.create(
        model="docdesk", messages=[{"role": "user", "content": "Which Python version does DocDesk need?"}]
    )
    # Saving Settings chose the bundled model (the fake backend is not offered): the window's model answers.
    assert window.desk.settings.llm.backend == "llama_cpp"
    assert done.choices[0].message.content.strip() and "\n\nSources:\n[1] DocDesk User Guide" in done.choices[0].message.content
    assert done.model_extra["sources"][0]["title"] == "DocDesk User Guide"
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=url, api_key="wrong", max_retries=0).models.list()

    # Other computers without a token: refused, and the status bar says why.
    dialog = window.open_settings()
    dialog.serve_network.setChecked(True)
    dialog.serve_token.setText("")
    assert "token" in dialog.serve_hint.text()
    dialog.accept()
    assert "Not serving" in window.serve_label.text() and "without a token" in window.serve_label.toolTip()
    with pytest.raises(openai.APIConnectionError):
        api.models.list()  # the earlier server is gone

    dialog = window.open_settings()
    dialog.serve_network.setChecked(False)
    dialog.accept()
    assert url in window.serve_label.text() and "this computer only" in window.serve_label.toolTip()
    assert [m.id for m in openai.OpenAI(base_url=url, api_key="x", max_retries=0).models.list()] == ["docdesk"]
    window.close()
    with pytest.raises(openai.APIConnectionError):  # closing the window stops the server
        openai.OpenAI(base_url=url, api_key="x", max_retries=0).models.list()
