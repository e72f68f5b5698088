from ingest.keywords import index_tokens, query_tokens


def test_cjk_runs_become_bigrams_and_single_characters():
    assert index_tokens("驱动版本") == "驱动 动版 版本 驱 动 版 本"


def test_latin_words_are_lowercased_and_mixed_text_is_split_by_script():
    assert index_tokens("CUDA版本 Driver") == "cuda 版本 版 本 driver"


def test_queries_use_bigrams_and_drop_stopwords():
    assert query_tokens("What is the 驱动?") == ["驱动"]
    assert query_tokens("the driver version") == ["driver", "version"]
