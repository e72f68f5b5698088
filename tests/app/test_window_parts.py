"""Parts of the window that need no model: the Qt binding's reference counting, and the options
the Settings dialog reads. The real window on the bundled models is tests/app/test_gui.py."""

from __future__ import annotations

import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

pytest.importorskip("pytestqt")


@pytest.mark.skipif(
    sys.version_info >= (3, 12),
    reason="None is immortal from Python 3.12 (PEP 683): its count no longer moves, and a reference the "
    "binding drops can no longer free it",
)
def test_the_qt_binding_does_not_drop_references_to_none(qapp):
    from PySide6.QtWidgets import QLabel

    label = QLabel()
    before = sys.getrefcount(None)
    for _ in range(2000):
        label.setText("x")
        qapp.processEvents()
    assert sys.getrefcount(None) >= before - 50  # PySide6 6.12.0 under Python 3.11 loses one per call


def test_vllm_options_are_read_from_the_settings_dialog():
    from app.gui.settings_dialog import parse_options

    assert parse_options("quantization=gptq, max-num-seqs=16, gpu_memory_utilization=0.85, x=") == {
        "quantization": "gptq",
        "max_num_seqs": 16,
        "gpu_memory_utilization": 0.85,
    }
