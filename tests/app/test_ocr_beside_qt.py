"""OpenCV comes in for OCR; the wheel that bundles its own Qt must not, or it breaks PySide6."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def test_only_the_headless_opencv_is_installed():
    assert importlib.metadata.distribution("opencv-python-headless")
    for qt_bundling in ("opencv-python", "opencv-contrib-python"):
        with pytest.raises(importlib.metadata.PackageNotFoundError):
            importlib.metadata.distribution(qt_bundling)


def test_the_window_toolkit_works_after_the_ocr_engine_loaded():
    child = (
        "import cv2, rapidocr, onnxruntime\n"
        "from PySide6.QtWidgets import QApplication, QLabel\n"
        "app = QApplication([])\n"
        "label = QLabel('ok'); label.show(); app.processEvents()\n"
        "print(label.text(), cv2.__version__)\n"
    )
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, "-c", child], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("ok ")
