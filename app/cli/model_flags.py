"""The flags that override settings, made from their declarations (app/desk/setting_table.py)
so the command line cannot drift from config.toml, and the model's preparation shared by every
command that runs it (ask, summarize, chat, serve, mcp)."""

from __future__ import annotations

import argparse

from app.desk.setting_table import SETTINGS, Setting
from app.desk.settings import default, hints, kind, record_class

GIVEN = "setting:"  # args."setting:llm.threads": a setting's flag as given on the command line


class SettingFlag(argparse.Action):
    """Stores the value under the flag's own name (args.backend) and, only when the flag is
    given, under "setting:<key>", which load_settings reads: a flag before the command and
    another after it both count."""

    def __init__(self, option_strings, dest, setting: str = "", **kwargs) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.setting = setting

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        setattr(namespace, self.dest, values)
        setattr(namespace, GIVEN + self.setting, values)


def flag_type(row: Setting):
    base, _ = kind(hints(record_class(row))[row.field])
    return base if base in (int, float) else None


def flag_help(row: Setting) -> str:
    value = default(row)
    said = row.default_text or ("" if value in (None, "") else str(value))
    parts = [f"default: {said}"] if said else []
    parts += [f"or the environment's {row.env}"] if row.env else []
    return f"{row.help} ({'; '.join([*parts, f'or config.toml {row.where}'])})"


def add_setting_flags(parser: argparse.ArgumentParser, group: str, suppress_defaults: bool = False) -> None:
    """The flags of the settings in `group` (setting_table.FLAG_GROUPS)."""
    default = {"default": argparse.SUPPRESS} if suppress_defaults else {}
    for row in SETTINGS:
        if row.flag and row.group == group:
            parser.add_argument(
                row.flag,
                action=SettingFlag,
                setting=row.key,
                type=flag_type(row),
                choices=row.allowed(for_flag=True),
                metavar=row.metavar,
                help=flag_help(row),
                **default,
            )


def setting_flags(args: argparse.Namespace) -> dict[str, object]:
    """Setting key -> value, for each setting flag given on the command line."""
    return {name[len(GIVEN) :]: value for name, value in vars(args).items() if name.startswith(GIVEN)}


def prepare_model(desk) -> None:
    """Before a command that runs the model searches or ingests (the flags are in the settings
    already: load_settings read them)."""
    if desk.settings.llm.backend == "llama_cpp":  # before search or ingest import numpy: see load_native_library
        from engine.backends.llama_cpp import load_native_library

        load_native_library()
