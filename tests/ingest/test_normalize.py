from ingest.normalize import normalize_text


def test_ligatures_and_fullwidth_forms_are_folded():
    assert normalize_text("ﬁnal ﬂow ＡＢＣ") == "final flow ABC"


def test_hyphenated_line_breaks_are_rejoined_but_real_hyphens_stay():
    assert normalize_text("informa-\ntion and Jean-\nPierre") == "information and Jean-\nPierre"


def test_control_characters_and_nul_are_dropped():
    assert normalize_text("a\x00b\x07c\u200bd") == "abcd"


def test_whitespace_is_repaired_and_paragraphs_survive():
    text = "  one   two \t three  \n\n\n\n  four\r\nfive  "
    assert normalize_text(text) == "one two three\n\nfour\nfive"


def test_line_wraps_inside_chinese_are_removed_but_paragraphs_kept():
    assert normalize_text("文件夹会被递归添\n加，并且\n\n第二段") == "文件夹会被递归添加,并且\n\n第二段"
