from ingest.keywords import affordable_tokens, index_tokens, query_tokens


def test_cjk_runs_become_bigrams_and_single_characters():
    assert index_tokens("驱动版本") == "驱动 动版 版本 驱 动 版 本"


def test_latin_words_are_lowercased_and_mixed_text_is_split_by_script():
    assert index_tokens("CUDA版本 Driver") == "cuda 版本 版 本 driver"


def test_queries_use_bigrams_and_drop_stopwords():
    assert query_tokens("What is the 驱动?") == ["驱动"]
    assert query_tokens("the driver version") == ["driver", "version"]


def test_a_query_keeps_its_rarest_words_within_the_posting_budget():
    tokens = ["menge", "raum", "vektor", "neu"]
    passages_with = {"menge": 9_000, "raum": 166_000, "vektor": 6_000, "neu": 0}
    # vektor (6k) + menge (9k) fit in 20k; raum would not; neu is in no passage and costs nothing.
    assert affordable_tokens(tokens, passages_with, budget=20_000) == ["menge", "vektor", "neu"]
    # Within the budget, nothing is dropped; over it, the rarest word is still kept.
    assert affordable_tokens(tokens, passages_with, budget=200_000) == tokens
    assert affordable_tokens(["raum", "und"], {"raum": 166_000, "und": 615_000}, budget=20_000) == ["raum"]
