"""A question is answered in its own language: one rule tells en, zh, ja, ko, de and the others
apart (ingest/language.py) and one table says how to ask for an answer in each (engine/prompts.py).
End to end through the prompt the model would be sent: a small library in five languages, a
stand-in embedder (no model is loaded) and the fake backend, which keeps every request."""

from __future__ import annotations

import pytest

from engine.answer import Answerer, AnswerSettings
from engine.backends.fake import FakeBackend
from engine.prompts import LANGUAGES, nothing_found
from ingest.language import CODES, cjk_share, guess_language, question_language
from tests.engine.languages_library import languages_retriever


@pytest.fixture(scope="module")
def retriever(tmp_path_factory):
    retriever = languages_retriever(tmp_path_factory.mktemp("languages"))
    yield retriever
    retriever.library.close()


def system_prompt_sent(retriever, question: str) -> tuple[str, str]:
    """(the language the answer is asked in, the system prompt the model was sent)."""
    backend = FakeBackend("Ok [1].")
    answerer = Answerer(retriever, backend, AnswerSettings())
    answer = answerer.generate(answerer.prepare(question))
    assert answer.prepared.relevant, answer.prepared.relevance
    (request,) = backend.requests
    assert question in request.messages[-1]["content"]
    return answer.prepared.language, request.messages[0]["content"]


@pytest.mark.parametrize(
    ("question", "language", "said"),
    [
        ("オーストリアの公用語は何ですか？", "ja", ["Answer in Japanese", "日本語で"]),
        ("首都と公用語", "ja", ["Answer in Japanese"]),  # mostly kanji: its kana tell
        ("오스트리아의 공용어는 무엇입니까?", "ko", ["Answer in Korean", "한국어로"]),
        ("奥地利的官方语言是什么？", "zh", ["用简体中文简洁准确地回答"]),
        ("Austria 的官方语言是什么？", "zh", ["用简体中文"]),  # Chinese naming an English word
        ("What is the official language of Austria?", "en", ["Answer in English, briefly and precisely."]),
        ("Is 德语 the official language of Austria?", "en", ["Answer in English"]),  # English naming a Chinese word
        ("Was ist die Amtssprache von Österreich?", "de", ["Answer in German", "Antworte auf Deutsch"]),
    ],
)
def test_the_model_is_asked_to_answer_in_the_questions_language(retriever, question, language, said):
    asked_in, system = system_prompt_sent(retriever, question)
    assert asked_in == language
    for words in said:
        assert words in system
    if language != "zh":  # only a Chinese question gets the Chinese system prompt
        assert "用简体中文" not in system and system.startswith("You are DocDesk")


def test_japanese_and_korean_are_not_taken_for_chinese():
    assert question_language("これは何ですか") == "ja"
    assert question_language("日本国憲法第九条の内容") == "ja"  # one kana among eight kanji
    assert question_language("이것은 무엇입니까") == "ko"
    assert question_language("这是什么？") == "zh"
    assert question_language("V100 支持 bf16 吗？") == "zh"


def test_latin_script_questions_are_told_by_their_words():
    assert question_language("How do I cook 红烧肉 at home?") == "en"
    assert question_language("Wie funktioniert das?") == "de"  # a short question: one stopword is enough
    assert question_language("Qu'est-ce que la propriété en Rust ?") == "fr"
    assert question_language("¿Qué es la propiedad en Rust?") == "es"
    assert question_language("Что такое владение?") == "ru"
    assert question_language("Rust?") == "en"  # nothing tells: English
    assert guess_language("Rust?") == ""  # a document nothing tells has no language


def test_every_language_the_rule_tells_has_an_answer_instruction():
    assert set(CODES) == set(LANGUAGES)
    assert all(LANGUAGES[code].answer_in for code in CODES if code != "en")


def test_the_cjk_share_counts_kana_han_and_hangul_among_letters_and_digits():
    assert cjk_share("これは何") == 1.0
    assert cjk_share("V100 支持") == pytest.approx(2 / 6)
    assert cjk_share("Hello") == 0.0 and cjk_share("?!") == 0.0


def test_nothing_found_is_said_in_the_questions_language(retriever):
    backend = FakeBackend()
    answerer = Answerer(retriever, backend, AnswerSettings())
    for question, language in [("量子コンピュータの誤り訂正とは？", "ja"), ("양자 컴퓨터의 오류 정정이란?", "ko")]:
        answer = answerer.generate(answerer.prepare(question))
        assert not answer.prepared.relevant and answer.prepared.language == language
        assert answer.text == nothing_found(language)
    assert not backend.requests  # the model is never asked
