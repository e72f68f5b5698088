"""Settings: `config.toml` in the platform config folder, then the environment, then the flags.

What each setting is (its key, variable, flag, bounds, help) is declared once in
app/desk/setting_table.py; its default is its dataclass field's. `load_settings` is the one place
that reads them, checks each value and names the key of a wrong one. The settings object is
created once and passed explicitly; nothing reads it globally.
"""

from __future__ import annotations

import dataclasses
import functools
import tomllib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path

from app.desk.serve_settings import ServeSettings
from app.desk.setting_table import BY_KEY, RECORDS, SETTINGS, Setting, environment
from engine.answer import AnswerSettings
from engine.backends import LlmSettings
from ingest.embedders.sentence_transformer import DEFAULT_BATCH_SIZE

APP_NAME = "docdesk"


class _Missing:
    """A key config.toml does not hold; one of it, even in a deep copy (the dialog edits one)."""

    def __repr__(self) -> str:
        return "<not in config.toml>"

    def __copy__(self) -> _Missing:
        return self

    def __deepcopy__(self, memo) -> _Missing:
        return self

    def __reduce__(self) -> str:
        return "_MISSING"


_MISSING = _Missing()


def config_path() -> Path:
    if folder := environment("DOCDESK_CONFIG"):
        return Path(folder).expanduser()
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP_NAME)) / "config.toml"


def default_library() -> Path:
    """The platform's library folder ([library] path, DOCDESK_HOME and --library override it)."""
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME)) / "library"


def log_dir() -> Path:
    if folder := environment("DOCDESK_LOG_DIR"):
        return Path(folder).expanduser()
    from platformdirs import user_log_dir

    return Path(user_log_dir(APP_NAME))


@dataclass
class Settings:
    library: Path = field(default_factory=default_library)
    embedding_model: str | None = None  # None: the bundled default, all-MiniLM-L6-v2 with the multilingual USE
    embedding_batch_size: int = DEFAULT_BATCH_SIZE
    embedding_multilingual: bool = False  # the bundled model is English-only
    embedding_precision: str = "auto"
    llm: LlmSettings = field(default_factory=LlmSettings)
    answers: AnswerSettings = field(default_factory=AnswerSettings)
    serve: ServeSettings = field(default_factory=ServeSettings)
    ui_language: str = ""  # "" follows the system locale; "en" or "zh_CN"
    ocr: bool = True  # read scans and photos with OCR (slow on a laptop)
    # key -> (what config.toml says, or _MISSING; what the environment or a flag put over it):
    # saving writes the file's own value back where the setting was not changed since.
    overridden: dict[str, tuple[object, object]] = field(default_factory=dict, repr=False, compare=False)


class SettingsError(Exception):
    pass


def load_settings(
    path: Path | None = None,
    library: str | None = None,
    embedding_model: str | None = None,
    *,
    flags: dict[str, object] | None = None,
) -> Settings:
    """config.toml (`path`, else config_path()), then each setting's environment variable, then
    `flags` (setting key -> value given on the command line; `library` and `embedding_model`
    are two of them)."""
    path = path or config_path()
    raw = read_config(path)
    given = {key: value for key, value in (flags or {}).items() if value is not None}
    given.update({k: v for k, v in (("library.path", library), ("embedding.model", embedding_model)) if v})
    for key in list(given):  # --url alone also means the openai backend
        for implied, value in BY_KEY[key].implies:
            given.setdefault(implied, value)
    _check_sections(path, raw)
    settings = Settings()
    for row in SETTINGS:
        _fill(settings, row, raw.get(row.section, {}) if row.in_file else {}, path, given)
    return settings


def read_config(path: Path) -> dict:
    if not path.exists():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path} is not valid TOML ({exc}): fix or delete it") from exc


def _check_sections(path: Path, raw: dict) -> None:
    """Each section DocDesk reads is a table of keys it knows; other sections are left alone."""
    for section in dict.fromkeys(row.section for row in SETTINGS if row.in_file):
        values = raw.get(section, {})
        if not isinstance(values, dict):
            raise SettingsError(f"{path}: [{section}] must be a table of settings, not {values!r}")
        known = [row.name for row in SETTINGS if row.section == section and row.in_file]
        unknown = set(values) - set(known)
        if unknown:
            raise SettingsError(
                f"{path}: unknown [{section}] settings {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}"
            )


def _fill(settings: Settings, row: Setting, section: dict, path: Path, flags: dict) -> None:
    record, name = place(settings, row)
    hint = hints(type(record))[name]
    in_file = section.get(row.name, _MISSING)
    if in_file is not _MISSING:
        setattr(record, name, checked(row, hint, in_file, str(path)))
    over = _MISSING
    if row.env and (text := environment(row.env)) is not None:
        over = checked(row, hint, text, row.env, from_text=True)
    if row.key in flags:
        over = checked(row, hint, flags[row.key], row.flag or row.key, from_text=isinstance(flags[row.key], str))
    if over is not _MISSING:
        setattr(record, name, over)
        settings.overridden[row.key] = (in_file, over)


def place(settings: Settings, row: Setting) -> tuple[object, str]:
    """The object and attribute that hold `row`'s value."""
    return (getattr(settings, row.section) if row.section in RECORDS else settings), row.field


@functools.cache
def hints(cls: type) -> dict[str, object]:
    return typing.get_type_hints(cls)


def record_class(row: Setting) -> type:
    return hints(Settings)[row.section] if row.section in RECORDS else Settings


def default(row: Setting) -> object:
    """The dataclass field's default: the one place a default is written."""
    found = next(f for f in dataclasses.fields(record_class(row)) if f.name == row.field)
    return found.default_factory() if found.default_factory is not dataclasses.MISSING else found.default


def kind(hint: object) -> tuple[type, bool]:
    """(the value's type, whether None is allowed) of a field's annotation."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return args[0], True
    return typing.get_origin(hint) or hint, False


_WORDS = {"true": True, "on": True, "yes": True, "1": True, "false": False, "off": False, "no": False, "0": False}
_RULES = {bool: "true or false", int: "a whole number", float: "a number", str: "text", Path: "a path", dict: "a table"}


def checked(row: Setting, hint: object, value: object, origin: str, from_text: bool = False) -> object:
    """`value` as the field's type, within the row's bounds and choices; SettingsError naming the
    key (and where the value came from) otherwise."""
    base, nullable = kind(hint)

    def wrong(rule: str) -> SettingsError:
        return SettingsError(f"{origin}: {row.where} must be {rule}, not {value!r}")

    if from_text and base is not str and base is not Path:
        value = _parsed(base, str(value).strip(), wrong)
    if nullable and value == "" and base in (str, Path):
        return None
    if base is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    expected = str if base is Path else base
    if not isinstance(value, expected) or (base in (int, float) and isinstance(value, bool)):
        raise wrong(_RULES[base])
    allowed = row.allowed()
    if allowed is not None and value not in allowed:
        raise wrong("one of " + ", ".join(repr(c) if c == "" else str(c) for c in allowed))
    if base in (int, float):
        _check_bounds(row, value, wrong)
    return Path(value).expanduser() if base is Path else value


def _parsed(base: type, text: str, wrong) -> object:
    """A value from an environment variable's text."""
    if base is bool:
        if text.lower() not in _WORDS:
            raise wrong("true or false (1/0, on/off, yes/no)")
        return _WORDS[text.lower()]
    try:
        return base(text)
    except (TypeError, ValueError):
        raise wrong(_RULES.get(base, base.__name__)) from None


def _check_bounds(row: Setting, value: float, wrong) -> None:
    low, high = row.minimum, row.maximum
    if (low is not None and value < low) or (high is not None and value > high):
        if low is not None and high is not None:
            raise wrong(f"between {low:g} and {high:g}")
        raise wrong(f"at least {low:g}" if low is not None else f"at most {high:g}")


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Write the settings back to config.toml: each section DocDesk reads holds what differs from
    the defaults; sections it does not know are kept. A value the environment or a flag gave is
    not written (the file keeps its own) unless it was changed since."""
    import tomli_w

    path = path or config_path()
    try:
        raw = read_config(path)
    except SettingsError:
        raw = {}  # a broken file is replaced by a good one
    for row in SETTINGS:
        if row.in_file:
            raw.pop(row.section, None)
    for row in (row for row in SETTINGS if row.in_file):
        value = getattr(*place(settings, row))
        if row.key in settings.overridden and settings.overridden[row.key][1] == value:
            value = settings.overridden[row.key][0]
        elif value is None or value == default(row):
            continue
        if value is not _MISSING:
            raw.setdefault(row.section, {})[row.name] = str(value) if isinstance(value, Path) else value
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text(tomli_w.dumps(raw), encoding="utf-8")
    tmp.replace(path)  # never a half-written config
    return path
