"""The CMRC 2018 held-out split for DocDesk's retrieval evaluation, cut from the dataset's dev set.

    python tests/eval/data/cmrc2018/make_split.py PATH/TO/squad-style-data/cmrc2018_dev.json

Articles are assigned to a split by their position in the dev set: every 8th article (0, 8, 16,
...) to `heldout` (never used to tune DocDesk: the README's figures come from it), the ones after
them (1, 9, 17, ...) to `tune`; the rest are not kept. Each kept article keeps its title, its
paragraphs' text and its questions with their first answer (the string a retrieval must contain),
and nothing else, so the files are small and reviewable. The output is written beside this
script as cmrc2018_heldout.json and cmrc2018_tune.json, in the same order each time.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
EVERY = 8


def article(raw: dict) -> dict:
    paragraphs = [p["context"] for p in raw["paragraphs"]]
    questions = [
        {"q": qa["question"], "answer": qa["answers"][0]["text"], "id": qa["id"]}
        for p in raw["paragraphs"]
        for qa in p["qas"]
        if qa.get("answers")
    ]
    return {"title": raw.get("title") or "", "paragraphs": paragraphs, "questions": questions}


def main(argv: list[str]) -> int:
    data = json.loads(Path(argv[0]).read_text(encoding="utf-8"))["data"]
    splits = {
        "heldout": [a for i, a in enumerate(data) if i % EVERY == 0],
        "tune": [a for i, a in enumerate(data) if i % EVERY == 1],
    }
    for name, articles in splits.items():
        kept = [article(a) for a in articles]
        out = HERE / f"cmrc2018_{name}.json"
        out.write_text(
            json.dumps({"split": name, "articles": kept}, ensure_ascii=False, indent=0) + "\n", encoding="utf-8"
        )
        print(f"{out.name}: {len(kept)} articles, {sum(len(a['questions']) for a in kept)} questions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
