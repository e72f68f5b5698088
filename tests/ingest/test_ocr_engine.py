"""RapidOCR's undocumented step methods, which ingest.ocr_engine (and nothing else) calls, pinned
on the version requirements.lock holds: an upgrade that renames or reshapes them fails here."""

from __future__ import annotations

import inspect
import re
from dataclasses import fields
from pathlib import Path

import pytest

from ingest.ocr_engine import OcrEngine, Recognised, new_rapidocr

ROOT = Path(__file__).resolve().parents[2]
SCANS = ROOT / "tests" / "data" / "scans"
STEPS = ("load_img", "preprocess_img", "run_ocr_steps", "build_final_output")


def _locked_version() -> str:
    found = re.search(r"^rapidocr==([\w.]+)", (ROOT / "requirements.lock").read_text(), re.MULTILINE)
    assert found, "requirements.lock no longer pins rapidocr"
    return found.group(1)


def _parameters(function) -> list[str]:
    return list(inspect.signature(function).parameters)


def test_the_steps_ocr_engine_calls_keep_their_signatures():
    from importlib.metadata import version

    from rapidocr import RapidOCR

    installed = version("rapidocr")
    context = f"rapidocr {installed} installed, {_locked_version()} locked: see ingest/ocr_engine.py"
    assert _parameters(RapidOCR.__init__) == ["self", "config_path", "params"], context
    assert _parameters(RapidOCR.preprocess_img) == ["self", "ori_img"], context
    assert _parameters(RapidOCR.run_ocr_steps) == ["self", "img", "op_record"], context
    assert _parameters(RapidOCR.build_final_output) == [
        "self",
        "ori_img",
        "det_res",
        "cls_res",
        "rec_res",
        "cropped_img_list",
        "op_record",
    ], context
    engine = new_rapidocr()  # cheap: the models load on the first image
    assert _parameters(type(engine.load_img).__call__) == ["self", "img"], context
    # The adapter runs __call__'s steps itself: __call__ must still be exactly those, in order.
    source = inspect.getsource(RapidOCR.__call__)
    assert [name for name in re.findall(r"self\.(\w+)\(", source) if name != "update_params"] == list(STEPS), context


def test_the_results_ocr_engine_reads_keep_their_fields():
    from rapidocr.ch_ppocr_cls.utils import TextClsOutput
    from rapidocr.utils.output import RapidOCROutput

    assert "cls_res" in {f.name for f in fields(TextClsOutput)}  # [(label "0" or "180", score), ...]
    assert {"boxes", "txts", "scores"} <= {f.name for f in fields(RapidOCROutput)}


@pytest.mark.models
def test_a_real_scan_is_read_through_the_adapter():
    from PIL import Image

    recognised = OcrEngine.get().read(Image.open(SCANS / "en_phototest.tif"))
    assert isinstance(recognised, Recognised) and recognised.flipped == 0.0
    text = " ".join(line[1] for line in recognised.lines)
    assert "quick brown dog" in text and "lazy fox" in text, text
    box, _text, score = recognised.lines[0]
    assert len(box) == 4 and all(len(corner) == 2 for corner in box) and 0.5 <= score <= 1.0
    upside_down = OcrEngine.get().read(Image.open(SCANS / "en_phototest.tif").rotate(180))
    assert upside_down.flipped > 0.5  # what RapidOCR's own result does not say
