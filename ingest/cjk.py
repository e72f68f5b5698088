"""The Unicode ranges DocDesk treats as CJK: kana, CJK ideographs (and extension A, compatibility), Hangul.

One definition, shared by normalization, chunking, the keyword tokenizer and retrieval."""

CJK_RANGES = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
CJK_PUNCTUATION = "\u3000-\u303f"  # 。、「」 and the ideographic space
