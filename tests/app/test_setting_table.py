"""Settings are declared once (app/desk/setting_table.py) and read in one place (load_settings):
every setting round-trips from config.toml, its environment variable and its flag, in that order
of precedence; a wrong value is an error naming its key; the flags and the README's table are
the declarations'; the core neither reads nor writes os.environ."""

from __future__ import annotations

import ast
import copy
import dataclasses
import tomllib
from pathlib import Path

import pytest
import tomli_w

from app.cli.model_flags import SettingFlag, setting_flags
from app.cli.parser import build_parser
from app.desk import setting_docs
from app.desk.process_env import PROCESS_ENV, choose_openmp_waiting, prepare_process
from app.desk.serve_settings import ServeSettings
from app.desk.setting_table import NAMES, RECORDS, SETTINGS, environment
from app.desk.settings import Settings, SettingsError, default, hints, kind, load_settings, record_class, save_settings
from engine.answer import AnswerSettings
from engine.backends import LlmSettings
from tests.conftest import ROOT

FILE_ROWS = [row for row in SETTINGS if row.in_file]
ENV_ROWS = [row for row in SETTINGS if row.env]
FLAG_ROWS = [row for row in SETTINGS if row.flag]
BOUNDED = [row for row in SETTINGS if row.minimum is not None or row.maximum is not None]
# A command line that takes each group's flags: (before the flag, after its value).
COMMANDS = {"common": (["list"], []), "model": (["chat"], ["hi"]), "serve": (["serve"], [])}


@pytest.fixture(autouse=True)
def _no_declared_variables(monkeypatch):
    """A developer's own DOCDESK_HOME or DOCDESK_TOKEN must not reach these tests."""
    for name in NAMES - {"DOCDESK_CONFIG", "DOCDESK_LOG_DIR"}:
        monkeypatch.delenv(name, raising=False)


def base(row):
    return kind(hints(record_class(row))[row.field])[0]


def samples(row, tmp_path: Path) -> list:
    """Three valid values of `row`, each unlike its default where the kind has room."""
    allowed = row.allowed()
    if allowed is not None:
        found = [c for c in allowed if c != default(row) and c != "fake"]
        return (found * 3)[:3]
    kind_ = base(row)
    if kind_ is bool:
        return [not default(row), default(row), not default(row)]
    if kind_ is int:
        low = int(row.minimum) if row.minimum is not None else 0
        return [n for n in range(low, low + 5) if n != default(row)][:3]
    if kind_ is float:
        low = row.minimum or 0.0
        return [low + 0.5 * k for k in (1, 2, 3)]
    if kind_ is Path:
        return [tmp_path / name for name in ("one", "two", "three")]
    if kind_ is dict:
        return [{"quantization": "gptq"}] * 3
    return ["one", "two", "three"]


def as_toml(value):
    return str(value) if isinstance(value, Path) else value


def as_text(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def value_of(settings: Settings, row):
    holder = getattr(settings, row.section) if row.section in RECORDS else settings
    return getattr(holder, row.field)


def write_config(path: Path, row, value) -> Path:
    path.write_text(tomli_w.dumps({row.section: {row.name: as_toml(value)}}), encoding="utf-8")
    return path


def flag_args(row, value) -> list[str]:
    before, after = COMMANDS[row.group]
    return [*before, row.flag, as_text(value), *after]


def test_every_field_is_declared_exactly_once():
    keys = [row.key for row in SETTINGS]
    assert len(keys) == len(set(keys))
    records = {"llm": LlmSettings, "answers": AnswerSettings, "serve": ServeSettings}
    for section, cls in records.items():
        assert {row.field for row in SETTINGS if row.section == section} == {f.name for f in dataclasses.fields(cls)}
    top = {f.name for f in dataclasses.fields(Settings)} - set(RECORDS) - {"overridden"}
    assert {row.field for row in SETTINGS if row.section not in RECORDS} == top
    for row in SETTINGS:
        assert row.help and (row.flag is None) == (row.group == ""), row.key
    envs = [row.env for row in ENV_ROWS]
    flags = [row.flag for row in FLAG_ROWS]
    assert len(envs) == len(set(envs)) and len(flags) == len(set(flags))


def test_the_embedding_batch_size_is_written_once():
    from ingest.embedders.sentence_transformer import DEFAULT_BATCH_SIZE

    assert Settings().embedding_batch_size == DEFAULT_BATCH_SIZE


@pytest.mark.parametrize("row", FILE_ROWS, ids=lambda row: row.key)
def test_each_setting_round_trips_through_config_toml(row, tmp_path):
    value = samples(row, tmp_path)[0]
    config = write_config(tmp_path / "config.toml", row, value)
    loaded = load_settings(config)
    assert value_of(loaded, row) == value
    again = tmp_path / "again.toml"
    save_settings(loaded, again)
    assert value_of(load_settings(again), row) == value


@pytest.mark.parametrize("row", ENV_ROWS, ids=lambda row: row.key)
def test_the_environment_overrides_config_toml(row, tmp_path, monkeypatch):
    first, second, _ = samples(row, tmp_path)
    config = write_config(tmp_path / "config.toml", row, first) if row.in_file else tmp_path / "none.toml"
    monkeypatch.setenv(row.env, as_text(second))
    assert value_of(load_settings(config), row) == second


@pytest.mark.parametrize("row", FLAG_ROWS, ids=lambda row: row.key)
def test_a_flag_overrides_the_environment_and_config_toml(row, tmp_path, monkeypatch):
    first, second, third = samples(row, tmp_path)
    config = write_config(tmp_path / "config.toml", row, first)
    if row.env:
        monkeypatch.setenv(row.env, as_text(second))
    args = build_parser().parse_args(flag_args(row, third))
    assert value_of(load_settings(config, flags=setting_flags(args)), row) == third
    unflagged = build_parser().parse_args(flag_args(row, third)[:1] + COMMANDS[row.group][1])
    assert value_of(load_settings(config, flags=setting_flags(unflagged)), row) == (second if row.env else first)


def test_a_common_flag_counts_before_and_after_the_command(tmp_path):
    before = build_parser().parse_args(["--library", str(tmp_path / "a"), "list"])
    after = build_parser().parse_args(["list", "--library", str(tmp_path / "b")])
    assert load_settings(tmp_path / "none.toml", flags=setting_flags(before)).library == tmp_path / "a"
    assert load_settings(tmp_path / "none.toml", flags=setting_flags(after)).library == tmp_path / "b"


def test_url_alone_picks_the_openai_backend_and_with_backend_keeps_it(tmp_path):
    none = tmp_path / "none.toml"
    alone = build_parser().parse_args(["chat", "--url", "http://box:8000", "hi"])
    assert load_settings(none, flags=setting_flags(alone)).llm.backend == "openai"
    both = build_parser().parse_args(["chat", "--url", "http://box:8000", "--backend", "vllm", "hi"])
    assert load_settings(none, flags=setting_flags(both)).llm.backend == "vllm"


def _outside(row) -> int | float:
    return row.minimum - 1 if row.minimum is not None else row.maximum + 1


@pytest.mark.parametrize("row", BOUNDED, ids=lambda row: row.key)
def test_a_value_outside_its_bounds_names_the_key(row, tmp_path, monkeypatch):
    value = _outside(row) if base(row) is int else float(_outside(row))
    config = write_config(tmp_path / "config.toml", row, value)
    with pytest.raises(
        SettingsError, match=rf"{config}: \[{row.section}\] {row.name} must be (at least|at most|between)"
    ):
        load_settings(config)
    if row.env:
        monkeypatch.setenv(row.env, as_text(value))
        with pytest.raises(SettingsError, match=rf"{row.env}: \[{row.section}\] {row.name} must be"):
            load_settings(tmp_path / "none.toml")
        monkeypatch.delenv(row.env)
    if row.flag:
        args = build_parser().parse_args(flag_args(row, int(value) if base(row) is int else value))
        with pytest.raises(SettingsError, match=rf"{row.flag}: \[{row.section}\] {row.name} must be"):
            load_settings(tmp_path / "none.toml", flags=setting_flags(args))


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[llm]\nthreads = "four"\n', r"\[llm\] threads must be a whole number, not 'four'"),
        ("[llm]\nthreads = true\n", r"\[llm\] threads must be a whole number, not True"),
        ('[answers]\nrerank = "sometimes"\n', r"\[answers\] rerank must be one of auto, on, off, not 'sometimes'"),
        ('[ui]\nlanguage = "fr"\n', r"\[ui\] language must be one of '', en, zh_CN"),
        ('[llm]\nbackend = "nothing"\n', r"\[llm\] backend must be one of llama_cpp"),
        ('[ingest]\nocr = "maybe"\n', r"\[ingest\] ocr must be true or false"),
        ("[llm]\nthread = 4\n", r"unknown \[llm\] settings thread; known: api_key"),
        ("[embedding]\nbatch = 4\n", r"unknown \[embedding\] settings batch; known: batch_size"),
        ('llm = "big"\n', r"\[llm\] must be a table"),
        ("[llm]\nbuild_cache = '/tmp'\n", r"unknown \[llm\] settings build_cache"),  # the environment's only
    ],
)
def test_a_wrong_value_in_config_toml_is_a_clear_error(toml, message, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(toml, encoding="utf-8")
    with pytest.raises(SettingsError, match=message):
        load_settings(config)


def test_a_wrong_environment_value_names_the_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("DOCDESK_OCR", "perhaps")
    with pytest.raises(SettingsError, match=r"DOCDESK_OCR: \[ingest\] ocr must be true or false"):
        load_settings(tmp_path / "none.toml")
    monkeypatch.setenv("DOCDESK_OCR", "off")
    assert load_settings(tmp_path / "none.toml").ocr is False
    monkeypatch.setenv("DOCDESK_EMBED_PRECISION", "fp16")
    with pytest.raises(SettingsError, match=r"DOCDESK_EMBED_PRECISION: \[embedding\] precision must be one of"):
        load_settings(tmp_path / "none.toml")


def test_the_command_line_says_which_flag_is_wrong(tmp_path, monkeypatch, capsys):
    from app.cli.main import main

    for name, (value, _) in PROCESS_ENV.items():
        monkeypatch.setenv(name, value)  # main sets them; the test process gets them back after
    code = main(["--library", str(tmp_path / "lib"), "chat", "--threads", "999", "hi"])
    assert code == 2
    assert "docdesk: --threads: [llm] threads must be between 0 and 256, not 999" in capsys.readouterr().err


def test_saving_keeps_what_the_file_says_over_the_environment(tmp_path, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text('[serve]\nport = 9000\n[library]\npath = "/srv/library"\n', encoding="utf-8")
    monkeypatch.setenv("DOCDESK_TOKEN", "secret")
    monkeypatch.setenv("DOCDESK_HOME", str(tmp_path / "for-now"))
    settings = copy.deepcopy(load_settings(config))  # as the Settings dialog edits them
    assert settings.serve.token == "secret" and settings.library == tmp_path / "for-now"
    settings.serve.port = 9001
    save_settings(settings, config)
    saved = tomllib.loads(config.read_text(encoding="utf-8"))
    assert "token" not in saved["serve"] and saved["serve"]["port"] == 9001  # a secret never lands on disk
    assert saved["library"]["path"] == "/srv/library"
    settings.serve.token = "typed-in-the-dialog"  # changed since: the user's own
    save_settings(settings, config)
    assert tomllib.loads(config.read_text(encoding="utf-8"))["serve"]["token"] == "typed-in-the-dialog"


def test_saving_keeps_sections_docdesk_does_not_know(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[someone_else]\nkeep = "me"\n[llm]\nthreads = 3\n', encoding="utf-8")
    settings = load_settings(config)
    settings.llm.threads = None
    save_settings(settings, config)
    saved = tomllib.loads(config.read_text(encoding="utf-8"))
    assert saved["someone_else"] == {"keep": "me"} and "llm" not in saved


def _parsers():
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    return {"": parser, **commands}


def test_the_flags_are_the_declarations():
    """Each command has exactly the setting flags of its groups, made from the table; an option
    that spells a setting's flag is that setting's (doctor's --model is the file it checks)."""
    groups = {"": {"common"}, "ask": {"common", "model"}, "summarize": {"common", "model"}}
    groups |= {"chat": {"common", "model"}, "serve": {"common", "model", "serve"}, "mcp": {"common", "model"}}
    flags = {row.flag: row for row in FLAG_ROWS}
    for name, parser in _parsers().items():
        ours = {a.setting: a for a in parser._actions if isinstance(a, SettingFlag)}
        expected = {row.key for row in FLAG_ROWS if row.group in groups.get(name, {"common"})}
        assert set(ours) == expected, name
        for key, action in ours.items():
            row = next(r for r in FLAG_ROWS if r.key == key)
            assert action.option_strings == [row.flag] and action.metavar == row.metavar, key
            assert action.type == (base(row) if base(row) in (int, float) else None), key
            assert action.choices == row.allowed(for_flag=True), key
        for action in parser._actions:
            spelled = [s for s in action.option_strings if s in flags]
            if spelled and not isinstance(action, SettingFlag):
                assert (name, spelled) == ("doctor", ["--model"]), (name, spelled)


def test_the_readme_table_is_the_declarations():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert setting_docs.block(readme) == setting_docs.table(), "run: python -m app.desk.setting_docs"


# The core (engine/, ingest/) gets its settings as arguments. A library that can only be
# configured through the environment would go here, with the reason; none does today.
CORE_ALLOWED: set[tuple[str, str]] = set()
# app/: setting_table.environment() reads, process_env writes; a download's child gets a copy.
APP_ALLOWED = {"app/desk/setting_table.py", "app/desk/process_env.py", "app/desk/model_download.py"}
ENV_NAMES = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"}


def _environment_uses(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ENV_NAMES and getattr(node.value, "id", "") == "os":
            found.append(f"os.{node.attr} at line {node.lineno}")
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [f"from os import {a.name}" for a in node.names if a.name in ENV_NAMES]
    return found


def _sources(*rooms: str) -> list[Path]:
    return sorted(p for room in rooms for p in (ROOT / room).rglob("*.py"))


def test_the_core_neither_reads_nor_writes_the_environment():
    found = {}
    for path in _sources("engine", "ingest"):
        uses = [u for u in _environment_uses(path) if (str(path.relative_to(ROOT)), u) not in CORE_ALLOWED]
        if uses:
            found[str(path.relative_to(ROOT))] = uses
    assert found == {}, "pass the value in through settings or an argument (app/desk/setting_table.py)"


def test_the_app_reads_the_environment_only_through_the_table():
    found = {}
    for path in _sources("app"):
        name = str(path.relative_to(ROOT))
        if name not in APP_ALLOWED and _environment_uses(path):
            found[name] = _environment_uses(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            named = isinstance(node, ast.Call) and getattr(node.func, "id", "") == "environment" and node.args
            if named and isinstance(node.args[0], ast.Constant):  # a name written out is a declared one
                assert node.args[0].value in NAMES, (name, node.lineno)
    assert found == {}, "read it with app.desk.setting_table.environment(), declared in that table"


def test_an_undeclared_variable_cannot_be_read():
    with pytest.raises(KeyError, match="not declared"):
        environment("DOCDESK_SOMETHING")


def test_the_process_environment_is_set_once_and_a_users_value_wins(monkeypatch):
    import os

    for name in [*PROCESS_ENV, "OMP_WAIT_POLICY"]:
        monkeypatch.setenv(name, "before")  # remembered as it was, and given back after the test
        monkeypatch.delenv(name)
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "true")
    prepare_process()
    assert os.environ["TOKENIZERS_PARALLELISM"] == "true"
    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "1"
    choose_openmp_waiting(runs_llama_cpp=True)  # llama.cpp keeps OpenMP's default, as it had before
    assert "OMP_WAIT_POLICY" not in os.environ
    choose_openmp_waiting(runs_llama_cpp=False)
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"


@pytest.mark.parametrize(
    ("argv", "config", "passive"),
    [
        (["list"], '[llm]\nbackend = "llama_cpp"\n', True),  # torch only: the reader process needs the core
        (["chat", "hi"], '[llm]\nbackend = "fake"\n', True),
        (["chat", "hi"], '[llm]\nbackend = "llama_cpp"\n', False),
        (["chat", "--backend", "llama_cpp", "hi"], '[llm]\nbackend = "fake"\n', False),
    ],
)
def test_openmp_waits_passively_unless_llama_cpp_runs_in_the_process(argv, config, passive, tmp_path, monkeypatch):
    import os

    from app.cli import main as cli

    for name in [*PROCESS_ENV, "OMP_WAIT_POLICY"]:
        monkeypatch.setenv(name, "before")
        monkeypatch.delenv(name)
    (tmp_path / "config.toml").write_text(config, encoding="utf-8")
    monkeypatch.setenv("DOCDESK_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setattr(cli, "_run_command", lambda settings, args: 0)  # only how the process starts
    assert cli.main(["--library", str(tmp_path / "lib"), *argv]) == 0
    assert os.environ.get("OMP_WAIT_POLICY") == ("PASSIVE" if passive else None)
