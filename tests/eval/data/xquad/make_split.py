"""The XQuAD English/Chinese held-out split for DocDesk's retrieval evaluation.

    python tests/eval/data/xquad/make_split.py PATH/TO/xquad.en.json PATH/TO/xquad.zh.json

XQuAD's English and Chinese files are parallel: the same 48 articles, the same paragraphs in the
same order, the same question ids. Articles are assigned to a split by their position: the
even-numbered ones (0, 2, 4, ...) to `heldout` (never used to tune DocDesk: the README's figures
come from it), the odd-numbered ones (1, 3, 5, ...) to `tune`. Each article keeps its title, its
paragraphs in both languages and, per question, its id, the question in both languages and the
first answer in both languages (the string a retrieval must contain), and nothing else.

The script checks that the two files line up (titles, paragraph counts, question ids) and stops if
they do not; a question whose answer is not found in its own language's paragraph is dropped and
counted (it stops if more than a handful would be). The output is written beside this script as
xquad_heldout.json and xquad_tune.json, in the same order each time.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = (
    "XQuAD, https://github.com/google-deepmind/xquad, commit 7d30520c717524000f0d9d2f9c10a069acd9d285, "
    "xquad.en.json + xquad.zh.json (CC BY-SA 4.0)"
)
MAX_DROPPED = 10


def article(en: dict, zh: dict, dropped: list[str]) -> dict:
    assert len(en["paragraphs"]) == len(zh["paragraphs"]), en["title"]
    questions = []
    for p_en, p_zh in zip(en["paragraphs"], zh["paragraphs"], strict=True):
        ids_en = [qa["id"] for qa in p_en["qas"]]
        ids_zh = [qa["id"] for qa in p_zh["qas"]]
        assert ids_en == ids_zh, f"question ids differ in {en['title']}: {ids_en} vs {ids_zh}"
        for qa_en, qa_zh in zip(p_en["qas"], p_zh["qas"], strict=True):
            answer_en = qa_en["answers"][0]["text"]
            answer_zh = qa_zh["answers"][0]["text"]
            if answer_en not in p_en["context"] or answer_zh not in p_zh["context"]:
                dropped.append(qa_en["id"])
                continue
            questions.append(
                {
                    "id": qa_en["id"],
                    "question_en": qa_en["question"],
                    "question_zh": qa_zh["question"],
                    "answer_en": answer_en,
                    "answer_zh": answer_zh,
                }
            )
    # XQuAD's zh file repeats the English (Wikipedia page) title; keep a zh title only if it is one.
    title_zh = zh.get("title") or None
    return {
        "title_en": en["title"],
        "title_zh": title_zh if title_zh != en["title"] else None,
        "paragraphs_en": [p["context"] for p in en["paragraphs"]],
        "paragraphs_zh": [p["context"] for p in zh["paragraphs"]],
        "questions": questions,
    }


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    en = json.loads(Path(argv[0]).read_text(encoding="utf-8"))["data"]
    zh = json.loads(Path(argv[1]).read_text(encoding="utf-8"))["data"]
    assert len(en) == len(zh), f"{len(en)} English articles, {len(zh)} Chinese"
    dropped: list[str] = []
    pairs = list(zip(en, zh, strict=True))
    splits = {
        "heldout": [article(e, z, dropped) for i, (e, z) in enumerate(pairs) if i % 2 == 0],
        "tune": [article(e, z, dropped) for i, (e, z) in enumerate(pairs) if i % 2 == 1],
    }
    print(f"dropped {len(dropped)} questions whose answer is not in its paragraph: {dropped}")
    assert len(dropped) <= MAX_DROPPED, "too many answers not found; are these the XQuAD files?"
    for name, kept in splits.items():
        out = HERE / f"xquad_{name}.json"
        text = json.dumps({"source": SOURCE, "split": name, "articles": kept}, ensure_ascii=False, indent=1)
        out.write_text(text + "\n", encoding="utf-8")
        print(f"{out.name}: {len(kept)} articles, {sum(len(a['questions']) for a in kept)} questions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
