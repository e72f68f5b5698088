"""OCR is switched by settings ([ingest] ocr) and reaches the ingestor; DOCDESK_OCR=0 overrides."""

from __future__ import annotations

import pytest

from app.desk.services import DocDesk
from app.desk.settings import SettingsError, load_settings, save_settings


def test_ocr_is_on_by_default(tmp_path, monkeypatch):
    monkeypatch.delenv("DOCDESK_OCR", raising=False)
    settings = load_settings(tmp_path / "none.toml", library=str(tmp_path / "lib"))
    assert settings.ocr is True
    assert DocDesk(settings).ingestor().ocr is True


def test_config_turns_ocr_off_and_saving_keeps_it(tmp_path, monkeypatch):
    monkeypatch.delenv("DOCDESK_OCR", raising=False)
    config = tmp_path / "config.toml"
    config.write_text("[ingest]\nocr = false\n", encoding="utf-8")
    settings = load_settings(config, library=str(tmp_path / "lib"))
    assert settings.ocr is False
    assert DocDesk(settings).ingestor().ocr is False
    save_settings(settings, config)
    assert load_settings(config).ocr is False


def test_environment_overrides_the_file(tmp_path, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text("[ingest]\nocr = true\n", encoding="utf-8")
    monkeypatch.setenv("DOCDESK_OCR", "0")
    assert load_settings(config).ocr is False


def test_a_wrong_value_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv("DOCDESK_OCR", raising=False)
    config = tmp_path / "config.toml"
    config.write_text('[ingest]\nocr = "maybe"\n', encoding="utf-8")
    with pytest.raises(SettingsError, match=r"\[ingest\] ocr must be true or false"):
        load_settings(config)
