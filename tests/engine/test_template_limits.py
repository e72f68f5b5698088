"""Hostile chat templates (issue 39, item 1): every render has a time and size budget, Stop ends
it, and a template that fails, writes nothing or overruns is not used: the family's standard
template stands in with a warning, or the model is refused in DocDesk's words. The templates are
the attacks' own forms, rendered by DocDesk's real environment; the model load is a real
llama-cpp-python load of a small GGUF written with the broken template."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from engine.backends.chat_template import ChatTemplate, ChatTemplateError, TemplateOverrun
from engine.backends.template_check import FAMILY_TEMPLATES, PROBE, choose_template, family_of, probe
from engine.errors import Cancelled

TEMPLATES = Path(__file__).resolve().parents[1] / "data" / "templates"  # real models' templates
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
OK = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}<|im_start|>assistant\n"

ATTACKS = {  # name: (template, what the refusal says)
    "nested loops, 10^10 steps": (
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        "longer than 2 s",
    ),
    "loops over a long string": (
        "{% set s = 'a' * 100000 %}{% for c in s %}{% for d in s %}{% endfor %}{% endfor %}",
        "longer than 2 s",
    ),
    "range(10**10)": ("{% for i in range(10000000000) %}{% endfor %}", "range of"),
    "'a' * 3e9": ("{{ 'a' * 3000000000 }}", "3,000,000,000"),
    "tojson(indent=1e8)": ("{{ messages|tojson(indent=100000000) }}", "tojson indent"),
    "indent(1e8)": ("{{ 'a\nb'|indent(100000000) }}", "indent width"),
    "center(1e8)": ("{{ 'a'|center(100000000) }}", "center width"),
    "doubling with ~": (
        "{% set ns = namespace(x='ab') %}{% for i in range(60) %}{% set ns.x = ns.x ~ ns.x %}{% endfor %}",
        "joined string",
    ),
    "doubling with +": (
        "{% set ns = namespace(x='ab') %}{% for i in range(60) %}{% set ns.x = ns.x + ns.x %}{% endfor %}",
        "a value of",
    ),
    "'%1000000000s' % x": ("{{ '%1000000000s' % 'a' }}", "format width"),
    "'{:1000000000}'.format(x)": ("{{ '{:1000000000}'.format('a') }}", "format width"),
    "10 ** 10**7": ("{{ 10 ** 10000000 }}", "a power of"),
    "endless recursion": ("{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}", "RecursionError"),
    "replace('', 10 chars)": ("{{ ('a' * 100000)|replace('', 'xxxxxxxxxx') }}", "replace"),
    "10 GB of output": ("{% for i in range(100000) %}{{ 'x' * 100000 }}{% endfor %}", "its output"),
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_a_hostile_template_is_stopped_within_its_budget(name):
    source, reason = ATTACKS[name]
    started = time.perf_counter()
    with pytest.raises(TemplateOverrun, match=reason):
        ChatTemplate(source).render(MESSAGES)
    assert time.perf_counter() - started < 3.0  # the 2 s deadline, once (not once per retry)


def test_lipsum_is_gone_and_the_budget_leaves_real_templates_alone():
    with pytest.raises(ChatTemplateError, match="lipsum"):
        ChatTemplate("{{ lipsum(n=100000000) }}").render(MESSAGES)
    long_question = [{"role": "user", "content": "word " * 400_000}]  # 2 MB: the cap follows the conversation
    assert len(ChatTemplate(OK).render(long_question).prompt) > 2_000_000
    real = sorted(TEMPLATES.glob("*.jinja"))
    assert len(real) >= 9  # the templates of the families tests/engine/test_chat_templates.py renders
    for path in real:
        assert PROBE[-1]["content"] in probe(path.read_text(encoding="utf-8")), path.name


def test_stop_ends_a_render_that_would_run_for_hours():
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    started = time.perf_counter()
    with pytest.raises(Cancelled):
        ChatTemplate(ATTACKS["nested loops, 10^10 steps"][0]).render(MESSAGES, cancel=cancel)
    assert time.perf_counter() - started < 1.0


def test_a_broken_template_falls_back_to_its_family_only_with_a_warning():
    own = choose_template(OK, "llama", "fine.gguf")
    assert own.source == OK and own.family is None and own.warning is None
    for broken, family in [
        ("{% if %}<|im_start|>", "chatml"),  # not valid Jinja, but its tokens say ChatML
        ("<start_of_turn>{{ '' }}", "gemma"),  # leaves the question out
        (ATTACKS["nested loops, 10^10 steps"][0] + "<|start_header_id|>", "llama3"),
    ]:
        choice = choose_template(broken, "llama", "broken.gguf")
        assert choice.family == family and choice.source == FAMILY_TEMPLATES[family]
        assert "does not work" in choice.warning and family in choice.warning
    assert choose_template("{{ '' }}", "qwen3", "empty.gguf").family == "chatml"  # prints nothing: by architecture
    with pytest.raises(ChatTemplateError, match="knows no standard template"):
        choose_template("{% if %}", "llama", "mystery.gguf")
    with pytest.raises(ChatTemplateError, match="no chat template"):
        choose_template("", "qwen2", "base.gguf")
    for family, source in FAMILY_TEMPLATES.items():  # each stand-in works and is recognised as itself
        assert PROBE[-1]["content"] in probe(source) and family_of(source, "") == family


@pytest.fixture(scope="module")
def broken_template_gguf(tmp_path_factory):
    """A small qwen2-shaped GGUF (random weights, the bundled model's vocabulary) whose chat
    template is not valid Jinja: llama-cpp-python used to fail its load with jinja2's traceback."""
    from engine.backends.llama_cpp import bundled_model_path
    from tests.bench.synthetic_gguf import SHAPES, write

    out = tmp_path_factory.mktemp("broken") / "broken-template.gguf"
    return write(out, SHAPES["qwen2-tiny"], bundled_model_path(), chat_template="{% for %}<|im_start|>")


def test_a_model_with_a_broken_template_loads_and_answers_with_its_familys(broken_template_gguf, caplog):
    from engine.backends.base import ChatRequest
    from engine.backends.llama_cpp import LlamaCppBackend

    backend = LlamaCppBackend(str(broken_template_gguf), context=1024, threads=2)
    try:
        assert backend.template.family == "chatml" and "does not work" in caplog.text
        text = "".join(backend.stream_chat(ChatRequest(messages=MESSAGES, max_tokens=8, temperature=0.0)))
        assert isinstance(text, str)  # random weights: that it answers, not what
        assert backend.capabilities.chat_template == FAMILY_TEMPLATES["chatml"]
    finally:
        backend.close()


def test_models_use_warns_about_a_broken_template_and_refuses_one_it_cannot_replace(broken_template_gguf, tmp_path):
    import os
    import subprocess
    import sys
    import tomllib

    from engine.backends.llama_cpp import bundled_model_path
    from tests.bench.synthetic_gguf import SHAPES, write

    env = {**os.environ, "DOCDESK_HOME": str(tmp_path / "library"), "DOCDESK_CONFIG": str(tmp_path / "config.toml")}
    root = Path(__file__).resolve().parents[2]

    def use(path: Path):
        command = [sys.executable, "-m", "app.cli.main", "models", "use", str(path)]
        return subprocess.run(command, env=env, cwd=root, capture_output=True, text=True, timeout=120)

    used = use(broken_template_gguf)
    assert used.returncode == 0 and "warning" in used.stderr and "standard chatml template" in used.stderr
    assert "Traceback" not in used.stderr
    hopeless = write(tmp_path / "hopeless.gguf", SHAPES["llama-tiny"], bundled_model_path(), chat_template="{% if %}")
    refused = use(hopeless)
    assert refused.returncode != 0 and "knows no standard template" in refused.stderr
    assert "Traceback" not in refused.stderr
    saved = tomllib.loads((tmp_path / "config.toml").read_text())
    assert saved["llm"]["model"] == str(broken_template_gguf.resolve())  # the refused one was not saved


def test_settings_refuse_a_model_whose_template_cannot_be_replaced_and_warn_of_a_stand_in(
    qtbot, tmp_path, monkeypatch, broken_template_gguf
):
    """The Settings dialog's model, checked on Save as `models use` checks it (a real window)."""
    from PySide6.QtWidgets import QMessageBox

    from app.desk.services import DocDesk
    from app.desk.settings import Settings, load_settings
    from app.gui.main_window import MainWindow
    from engine.backends.llama_cpp import bundled_model_path
    from tests.bench.synthetic_gguf import SHAPES, write

    monkeypatch.setenv("DOCDESK_CONFIG", str(tmp_path / "config.toml"))
    window = MainWindow(DocDesk(Settings(library=tmp_path / "library")), warm_up=False)
    qtbot.addWidget(window)
    window.show()
    window.engine.reload = lambda: None  # this test is about the check, not about loading the model
    changed = window.open_settings().collect()
    changed.llm.backend = "llama_cpp"
    changed.llm.model = str(
        write(tmp_path / "hopeless.gguf", SHAPES["llama-tiny"], bundled_model_path(), chat_template="{% if %}")
    )
    window.settings.apply(changed)
    box = window.settings.refused_box
    assert isinstance(box, QMessageBox) and box.isVisible() and "knows no standard template" in box.text()
    assert not (tmp_path / "config.toml").exists()  # nothing saved
    box.close()
    changed.llm.model = str(broken_template_gguf)
    window.settings.apply(changed)
    assert load_settings().llm.model == str(broken_template_gguf)
    warned = window.settings.warning_box
    assert warned.isVisible() and "standard chatml template" in warned.text()
