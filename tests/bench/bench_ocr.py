"""OCR speed, memory and accuracy on this machine, with the bundled RapidOCR models.

    python tests/bench/bench_ocr.py            # every real scan in tests/data/scans, and an 81-MP page

For each file: pages, seconds, pages per minute, the mean line confidence, and the character
error rate (edit distance / transcript length, whitespace ignored) where a hand-made transcript
sits beside it. Each file is read in a fresh process, so the peak memory is that file's own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANS = ROOT / "tests" / "data" / "scans"

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from ingest.readers import read_document
started = time.perf_counter()
result = read_document(Path(sys.argv[1]))
seconds = time.perf_counter() - started
ocr = [p.ocr for p in result.pages if p.ocr is not None]
print(json.dumps({
    "pages": len(result.pages), "ocr_pages": len(ocr), "seconds": seconds,
    "confidence": sum(o.confidence for o in ocr) / len(ocr) if ocr else None,
    "text": "\f".join(p.text for p in result.pages),
    "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
"""


def edit_distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def cer(found: str, truth: str) -> float:
    squeeze = lambda text: "".join(text.split())  # noqa: E731 - line breaks and spaces are layout
    truth = squeeze(truth)
    return edit_distance(squeeze(found), truth) / max(1, len(truth))


def measure(path: Path) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    done = subprocess.run([sys.executable, "-c", CHILD, str(path)], cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def huge_page(folder: Path) -> Path:
    """An 81-megapixel page: a real phone photo of a book page, scaled up to 10,400 x 7,800."""
    from PIL import Image

    photo = Image.open(SCANS / "en_boston_cooking_page_photo.jpg")
    path = folder / "page-81mp.png"
    photo.convert("L").resize((10400, 7800), Image.Resampling.BICUBIC).save(path, optimize=False)
    return path


def main() -> None:
    files = sorted(p for p in SCANS.iterdir() if p.suffix.lower() in (".pdf", ".png", ".jpg", ".tif", ".webp"))
    print(f"{'file':44} {'pages':>5} {'s':>6} {'pages/min':>9} {'conf':>5} {'CER':>6} {'peak MB':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for path in [*files, huge_page(Path(tmp))]:
            row = measure(path)
            if "error" in row:
                print(f"{path.name:44} error: {row['error']}")
                continue
            transcript = path.with_suffix(".transcript.txt")
            error = f"{cer(row['text'], transcript.read_text(encoding='utf-8')):.3f}" if transcript.exists() else ""
            conf = f"{row['confidence']:.2f}" if row["confidence"] is not None else "-"
            rate = 60 * row["pages"] / row["seconds"]
            print(
                f"{path.name:44} {row['pages']:5} {row['seconds']:6.1f} {rate:9.1f} {conf:>5} {error:>6} "
                f"{row['peak_mb']:8.0f}"
            )
    print(f"\n{os.cpu_count()} cores; one fresh process per file (the time includes loading the OCR models, ~1 s)")


if __name__ == "__main__":
    main()
