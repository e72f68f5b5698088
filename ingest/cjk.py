"""The Unicode ranges DocDesk treats as CJK: kana, CJK ideographs (and extension A, compatibility), Hangul.

One definition, shared by normalization, chunking, the keyword tokenizer, retrieval and the
language rule (ingest/language.py), which tells the three scripts apart."""

KANA_RANGES = "\u3040-\u30ff"  # hiragana and katakana: Japanese
HAN_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # ideographs: Chinese, and Japanese kanji
HANGUL_RANGES = "\uac00-\ud7af"  # syllables: Korean
CJK_RANGES = KANA_RANGES + HAN_RANGES + HANGUL_RANGES
CJK_PUNCTUATION = "\u3000-\u303f"  # 。、「」 and the ideographic space
