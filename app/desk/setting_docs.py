"""The README's table of settings, made from their declarations (app/desk/setting_table.py):
`python -m app.desk.setting_docs` writes it into README.md between its two markers, and
tests/app/test_setting_table.py checks that the README says what the table does."""

from __future__ import annotations

import sys
from pathlib import Path

from app.desk.process_env import PROCESS_ENV, WAIT_POLICY, WAIT_POLICY_WHY
from app.desk.setting_table import SETTINGS, VARIABLES, Setting
from app.desk.settings import default, hints, kind, record_class

BEGIN = "<!-- the settings table: `python -m app.desk.setting_docs` writes it from app/desk/setting_table.py -->"
END = "<!-- end of the settings table -->"
README = Path(__file__).resolve().parents[2] / "README.md"


def _shown(value: object) -> str:
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    return f"`{value}`"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _allowed(row: Setting) -> str:
    choices = row.allowed(for_flag=True)  # the backends offered, not the test doubles
    if choices is not None:
        return ", ".join(_shown(c) for c in choices)
    base, _ = kind(hints(record_class(row))[row.field])
    low, high = row.minimum, row.maximum
    if low is not None and high is not None:
        return f"{_number(low)} to {_number(high)}"
    if low is not None:
        return f"{_number(low)} or more"
    return {bool: "true, false", int: "a whole number", float: "a number", dict: "a table", Path: "a folder"}.get(
        base, "text"
    )


def table() -> str:
    """The Markdown of every setting, then the variables read before settings, then those DocDesk sets."""
    lines = [
        "| config.toml | environment | flag | default | allowed | what it does |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in SETTINGS:
        key = f"`[{row.section}] {row.name}`" if row.in_file else "—"
        env = f"`{row.env}`" if row.env else ""
        flag = f"`{row.flag}`" if row.flag else ""
        said = row.default_text or _shown(default(row))
        lines.append(f"| {key} | {env} | {flag} | {said} | {_allowed(row)} | {row.help} |")
    lines += ["", "| environment only | what it sets | default |", "| --- | --- | --- |"]
    lines += [f"| `{v.name}` | {v.help} | {v.default_text} |" for v in VARIABLES]
    lines += ["", "DocDesk sets these in its own process as it starts, where they are not set already:", ""]
    lines += [f"- `{name}={value}`: {why}" for name, (value, why) in PROCESS_ENV.items()]
    lines.append(f"- `{WAIT_POLICY[0]}={WAIT_POLICY[1]}`: {WAIT_POLICY_WHY}")
    return "\n".join(lines)


def block(text: str) -> str:
    """The part of `text` between the markers (without them)."""
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[start:end].strip("\n")


def write(path: Path = README) -> bool:
    """Put the table into `path`; whether it changed."""
    text = path.read_text(encoding="utf-8")
    new = text[: text.index(BEGIN) + len(BEGIN)] + "\n" + table() + "\n" + text[text.index(END) :]
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


if __name__ == "__main__":
    sys.stdout.write(f"{README}: {'written' if write() else 'already up to date'}\n")
