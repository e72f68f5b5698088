"""Settings: `config.toml` in the platform config folder, overridden by environment and flags.

The settings object is created once and passed explicitly; nothing reads it globally.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from app.desk.serve_settings import ServeSettings
from engine.answer import AnswerSettings
from engine.backends import LlmSettings

APP_NAME = "docdesk"


def config_path() -> Path:
    if os.environ.get("DOCDESK_CONFIG"):
        return Path(os.environ["DOCDESK_CONFIG"]).expanduser()
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP_NAME)) / "config.toml"


def default_library() -> Path:
    if os.environ.get("DOCDESK_HOME"):
        return Path(os.environ["DOCDESK_HOME"]).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME)) / "library"


def log_dir() -> Path:
    if os.environ.get("DOCDESK_LOG_DIR"):
        return Path(os.environ["DOCDESK_LOG_DIR"]).expanduser()
    from platformdirs import user_log_dir

    return Path(user_log_dir(APP_NAME))


@dataclass
class Settings:
    library: Path = field(default_factory=default_library)
    embedding_model: str | None = None  # None: the bundled default, all-MiniLM-L6-v2 with the multilingual USE
    embedding_batch_size: int = 8
    embedding_multilingual: bool = False  # the bundled model is English-only
    llm: LlmSettings = field(default_factory=LlmSettings)
    answers: AnswerSettings = field(default_factory=AnswerSettings)
    serve: ServeSettings = field(default_factory=ServeSettings)
    ui_language: str = ""  # "" follows the system locale; "en" or "zh_CN"
    ocr: bool = True  # [ingest] ocr: read scans and photos with OCR (slow on a laptop); DOCDESK_OCR=0 overrides


class SettingsError(Exception):
    pass


def load_settings(path: Path | None = None, library: str | None = None, embedding_model: str | None = None) -> Settings:
    path = path or config_path()
    raw: dict = {}
    if path.exists():
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise SettingsError(f"{path} is not valid TOML ({exc}): fix or delete it") from exc
    settings = Settings()
    section = raw.get("library", {})
    if section.get("path") and not os.environ.get("DOCDESK_HOME"):
        settings.library = Path(section["path"]).expanduser()
    embedding = raw.get("embedding", {})
    settings.embedding_model = embedding.get("model") or None
    settings.embedding_batch_size = int(embedding.get("batch_size", settings.embedding_batch_size))
    settings.embedding_multilingual = bool(embedding.get("multilingual", False))
    settings.ui_language = str(raw.get("ui", {}).get("language", ""))
    settings.ocr = _ocr_setting(path, raw.get("ingest", {}))
    settings.llm = _section(path, raw, "llm", LlmSettings)
    settings.answers = _section(path, raw, "answers", AnswerSettings)
    settings.serve = _section(path, raw, "serve", ServeSettings)
    if library:
        settings.library = Path(library).expanduser()
    if embedding_model:
        settings.embedding_model = embedding_model
    return settings


def _ocr_setting(path: Path, section: dict) -> bool:
    """[ingest] ocr, unless the environment says DOCDESK_OCR=0 (for one command, without editing the file)."""
    if os.environ.get("DOCDESK_OCR", "").strip().lower() in ("0", "off", "no", "false"):
        return False
    value = section.get("ocr", True)
    if not isinstance(value, bool):
        raise SettingsError(f"{path}: [ingest] ocr must be true or false, not {value!r}")
    return value


def _section(path: Path, raw: dict, name: str, record):
    values = raw.get(name, {})
    known = set(record.__dataclass_fields__)
    unknown = set(values) - known
    if unknown:
        raise SettingsError(
            f"{path}: unknown [{name}] settings {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}"
        )
    return record(**values)


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Write the settings a user can change back to config.toml, keeping sections DocDesk does not know."""
    import dataclasses

    import tomli_w

    path = path or config_path()
    raw: dict = {}
    if path.exists():
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            raw = {}  # a broken file is replaced by a good one
    raw["library"] = {**raw.get("library", {}), "path": str(settings.library)}
    embedding = {**raw.get("embedding", {}), "batch_size": settings.embedding_batch_size}
    embedding["multilingual"] = settings.embedding_multilingual
    embedding["model"] = settings.embedding_model or ""
    raw["embedding"] = embedding
    for name, record in (("llm", settings.llm), ("answers", settings.answers), ("serve", settings.serve)):
        defaults = type(record)()
        values = {k: v for k, v in dataclasses.asdict(record).items() if v is not None and v != getattr(defaults, k)}
        raw[name] = values
    raw["ui"] = {**raw.get("ui", {}), "language": settings.ui_language}
    raw["ingest"] = {**raw.get("ingest", {}), "ocr": settings.ocr}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text(tomli_w.dumps(raw), encoding="utf-8")
    tmp.replace(path)  # never a half-written config
    return path
