from ingest.language import guess_language


def test_language_guess_by_script_and_stopwords():
    assert guess_language("显卡驱动版本应当与 CUDA 版本匹配，否则推理框架会报错。") == "zh"
    assert guess_language("ドキュメントを追加してください。検索は速いです。") == "ja"
    assert guess_language("The library is a folder and the database is the source of truth.") == "en"
    assert guess_language("Ein topologischer Raum ist ein Paar, und die Menge ist nicht leer.") == "de"
    assert guess_language("حَبيبي habibi حَبيبي حَبيبي") == "ar"
    assert guess_language("12345 67890") == ""
