"""RapidOCR behind one small adapter: the only place in DocDesk that calls RapidOCR.

DocDesk needs something RapidOCR's result drops: the angle classifier's verdict on each line
(which lines it found upside down, and turned before reading them), from which ingest.ocr tells
an upside-down page. So `OcrEngine.read` runs RapidOCR's own call step by step, exactly as
`RapidOCR.__call__` does: `load_img`, `preprocess_img`, `run_ocr_steps`, `build_final_output`.
Those methods are public but undocumented; tests/ingest/test_ocr_engine.py pins their
signatures, the fields read from their results, and the order `__call__` runs them in, on the
version requirements.lock holds, so an upgrade that changes them fails there and not on users'
scans.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

# The reader process already runs below the embedder; OCR, the slowest reading, goes lower
# still (once per process, when its models load), so a long scan never makes the window wait.
OCR_EXTRA_NICENESS = 5
RAPIDOCR_PARAMS = {"Global.log_level": "error"}  # RapidOCR's documented settings; defaults otherwise

Box = list[list[float]]  # four [x, y] corners, in pixels of the image read


@dataclass
class Recognised:
    """What RapidOCR read on one image."""

    lines: list[tuple[Box, str, float]] = field(default_factory=list)  # (box, text, score)
    flipped: float = 0.0  # share of lines the angle classifier found upside down (0 without lines)


def new_rapidocr():
    """A RapidOCR with DocDesk's settings; its models load on its first image."""
    from rapidocr import RapidOCR

    engine = RapidOCR(params=dict(RAPIDOCR_PARAMS))
    logging.getLogger("RapidOCR").setLevel(logging.ERROR)
    return engine


class OcrEngine:
    """The process's RapidOCR: created on first use, quiet, CPU only."""

    _instance: OcrEngine | None = None
    _lock = threading.Lock()

    def __init__(self, rapidocr) -> None:
        self._rapidocr = rapidocr

    @classmethod
    def get(cls) -> OcrEngine:
        with cls._lock:
            if cls._instance is None:
                started = time.perf_counter()
                try:
                    os.nice(OCR_EXTRA_NICENESS)
                except OSError:
                    pass
                cls._instance = cls(new_rapidocr())
                log.info("OCR engine created in %.1f s", time.perf_counter() - started)
            return cls._instance

    def read(self, image) -> Recognised:
        """The lines RapidOCR recognises on `image` (a PIL image), with its angle classifier's
        verdicts, which RapidOCR's own result leaves out."""
        import numpy as np

        engine = self._rapidocr
        original = engine.load_img(np.asarray(image.convert("RGB")))
        prepared, record = engine.preprocess_img(original)
        det, cls, rec, crops = engine.run_ocr_steps(prepared, record)
        labels = [label for label, _score in (cls.cls_res or [])]
        flipped = labels.count("180") / len(labels) if labels else 0.0
        result = engine.build_final_output(original, det, cls, rec, crops, record)
        boxes, texts, scores = (getattr(result, name, None) for name in ("boxes", "txts", "scores"))
        if boxes is None or texts is None or scores is None:  # nothing found, or not a full result
            return Recognised([], flipped)
        lines = [(box.tolist(), text, float(score)) for box, text, score in zip(boxes, texts, scores, strict=False)]
        return Recognised(lines, flipped)
