"""Chat templates rendered within bounds: a GGUF's template is code from whoever made the file.

jinja2's sandbox keeps a template from reaching Python, but not from running for hours or writing
gigabytes: `range(10**5)` nested twice, `'a' * 3000000000`, `x|tojson(indent=100000000)`, a string
doubled by `~` forty times. `BoundedEnvironment` puts a budget on every render (`RenderBudget`):

- a deadline (2 s; a real template renders a long conversation in milliseconds), checked on every
  call, attribute lookup, operator and loop step, so an endless loop ends in DocDesk's words;
- a cancel event (Stop, Ctrl-C) checked at the same places: it raises Cancelled;
- a cap on the size of every value a template makes (operators `*` `+` `%` `**` and `~`, every
  filter's result, `range`) and of the whole output, proportional to the conversation
  (`output_cap`): nothing is built that would not fit in a prompt;
- widths that filters would pad to (`indent`, `center`, `tojson(indent=)`, `format`) capped
  before anything is allocated.

Exceeding a bound raises `TemplateOverrun` (a ChatTemplateError): the model's import refuses the
template (engine/backends/template_check.py), a render in use fails the request with the reason.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Sequence

from engine.errors import EngineError

RENDER_SECONDS = 2.0
MIN_OUTPUT_CHARS = 1 << 20  # even a short conversation may get a long system prompt from its template
MAX_RANGE = 100_000  # as jinja2's sandbox: range(10**9) is refused outright
MAX_WIDTH = 1_000  # indent, center, tojson's indent, format widths
MAX_EXPONENT = 1_000
_WIDE_PERCENT = re.compile(r"%[-+ #0]*(\*|\d{4,})")  # "%*s" or a width of 4 digits or more
_WIDE_FORMAT = re.compile(r"\{[^{}]*:[^{}]*?(\*|\d{4,})[^{}]*\}")


class ChatTemplateError(EngineError, ValueError):
    """The template cannot render these messages (it raised, or is not valid Jinja)."""


class TemplateOverrun(ChatTemplateError):
    """The template ran past its time or size budget."""


class _Local(threading.local):
    budget: RenderBudget | None = None


_current = _Local()


def output_cap(messages: list[dict]) -> int:
    """What a render of `messages` may write: twice their text, and at least MIN_OUTPUT_CHARS."""
    chars = sum(len(str(m.get("content") or "")) for m in messages)
    return max(MIN_OUTPUT_CHARS, 2 * chars)


class RenderBudget:
    """One render's limits; `active()` makes it the one the environment checks on this thread."""

    def __init__(self, max_chars: int, seconds: float = RENDER_SECONDS, cancel: threading.Event | None = None):
        self.max_chars, self.seconds, self.cancel = max_chars, seconds, cancel
        self.deadline = time.monotonic() + seconds
        self.written = 0

    def check(self) -> None:
        if time.monotonic() > self.deadline:
            raise _overrun(f"it ran longer than {self.seconds:g} s (an endless loop?)")
        if self.cancel is not None and self.cancel.is_set():
            from engine.errors import Cancelled

            raise Cancelled("stopped")

    def size(self, n: int, what: str = "a value") -> None:
        if n > self.max_chars:
            raise _overrun(f"{what} of {n:,} characters or items (more than {self.max_chars:,})")

    def wrote(self, text: str) -> None:
        self.written += len(text)
        self.size(self.written, "its output")
        self.check()

    def active(self):
        return _Active(self)


class _Active:
    def __init__(self, budget: RenderBudget) -> None:
        self.budget, self.before = budget, None

    def __enter__(self) -> RenderBudget:
        self.before, _current.budget = _current.budget, self.budget
        return self.budget

    def __exit__(self, *_exc) -> None:
        _current.budget = self.before


_SIZES_ONLY = RenderBudget(MIN_OUTPUT_CHARS, seconds=float("inf"))


def _overrun(reason: str) -> TemplateOverrun:
    return TemplateOverrun(f"the model's chat template was stopped: {reason}")


def _budget() -> RenderBudget:
    """The render's budget; outside one (a template compiled or used directly), sizes only."""
    return _current.budget or _SIZES_ONLY


def _bounded_iter(values):
    """What a `{% for %}` loop walks: the budget checked at every step."""
    budget = _budget()
    for value in values:
        budget.check()
        yield value


def _sized(value):
    if isinstance(value, str | bytes | list | tuple | dict):
        _budget().size(len(value))
    return value


def _width(value, name: str) -> None:
    if isinstance(value, int | float) and abs(value) > MAX_WIDTH:
        raise _overrun(f"{name} {value!r} (at most {MAX_WIDTH})")
    if isinstance(value, str) and len(value) > MAX_WIDTH:
        raise _overrun(f"{name} of {len(value):,} characters (at most {MAX_WIDTH})")


class BoundedRange(Sequence):
    """`range` for templates: at most MAX_RANGE items, the budget checked at every step."""

    def __init__(self, *args) -> None:
        self._range = range(*args)
        if len(self._range) > MAX_RANGE:
            raise _overrun(f"range of {len(self._range):,} items (at most {MAX_RANGE:,})")

    def __len__(self) -> int:
        return len(self._range)

    def __getitem__(self, index):
        return self._range[index]

    def __iter__(self):
        budget = _budget()
        for value in self._range:
            budget.check()
            yield value


def _predicted_size(operator: str, left, right) -> int:
    """The size `left operator right` would have, before computing it."""
    if operator == "*":
        seq, times = (left, right) if isinstance(left, str | list | tuple) else (right, left)
        if isinstance(seq, str | list | tuple) and isinstance(times, int):
            return len(seq) * max(times, 0)
    if operator == "+" and isinstance(left, str | list | tuple) and isinstance(right, str | list | tuple):
        return len(left) + len(right)
    return 0


def _bounded_filter(name: str, func):
    """A filter with its padding widths capped beforehand and its result's size after."""
    import functools

    from jinja2 import Environment
    from jinja2.nodes import EvalContext
    from jinja2.runtime import Context

    @functools.wraps(func)
    def bounded(*given, **kwargs):
        budget = _budget()
        budget.check()
        # the filter's own arguments, after the context some filters are passed first (replace)
        args = given[1:] if given and isinstance(given[0], EvalContext | Environment | Context) else given
        if name in ("indent", "center"):
            for value in (*args[1:], *kwargs.values()):
                if not isinstance(value, bool):
                    _width(value, f"{name} width")
        elif name == "tojson":
            _width(kwargs.get("indent", args[1] if len(args) > 1 else None), "tojson indent")
        elif name == "format":
            _format_guard(args[0] if args else "")
        elif name == "replace" and len(args) >= 3 and isinstance(args[0], str):
            old, new = str(args[1]), str(args[2])
            pieces = len(args[0]) + 1 if not old else args[0].count(old)
            budget.size(len(args[0]) + pieces * len(new), "replace's result")
        return _sized(func(*given, **kwargs))

    return bounded


def _format_guard(fmt) -> None:
    if isinstance(fmt, str) and (_WIDE_PERCENT.search(fmt) or _WIDE_FORMAT.search(fmt)):
        raise _overrun(f"a format width wider than {MAX_WIDTH} in {fmt[:40]!r}")


class _Bounds:
    """The checks, mixed in before jinja2's sandboxed environment (see bounded_environment_class)."""

    intercepted_binops = frozenset(["*", "+", "%", "**"])
    bounded_iter = staticmethod(_bounded_iter)

    def __init__(self, **options) -> None:
        # no constant folding: a filter or call on constants would otherwise run while compiling
        super().__init__(optimized=False, **options)
        self.globals["range"] = BoundedRange
        self.globals.pop("lipsum", None)  # lipsum(n=10**9): no chat template needs filler text
        self.filters = {name: _bounded_filter(name, f) for name, f in self.filters.items()}

    def bounded_concat(self, values) -> str:
        budget = _budget()
        budget.check()
        texts = [str(v) for v in values]
        budget.size(sum(map(len, texts)), "a joined string")
        return "".join(texts)

    def call_binop(self, context, operator, left, right):
        budget = _budget()
        budget.check()
        budget.size(_predicted_size(operator, left, right))
        if operator == "**" and isinstance(right, int | float) and abs(right) > MAX_EXPONENT:
            raise _overrun(f"a power of {right!r}")
        if operator == "%":
            _format_guard(left)
        return _sized(super().call_binop(context, operator, left, right))

    def call(__self, __context, __obj, *args, **kwargs):  # noqa: N805 (jinja2's own signature)
        _budget().check()
        return _sized(super().call(__context, __obj, *args, **kwargs))

    def wrap_str_format(self, value):
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None

        def guarded(*args, **kwargs):
            _format_guard(value.__self__)  # "{:100000000}".format(x), before anything is padded
            return _sized(wrapped(*args, **kwargs))

        return guarded

    def getattr(self, obj, attribute):
        _budget().check()
        return super().getattr(obj, attribute)

    def getitem(self, obj, argument):
        _budget().check()
        return super().getitem(obj, argument)


def bounded_environment_class():
    """The sandboxed environment class with the bounds above (jinja2 imported only when needed)."""
    from jinja2 import nodes
    from jinja2.compiler import CodeGenerator
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class BoundedCodeGenerator(CodeGenerator):
        """`a ~ b` through the environment's `bounded_concat`, which checks the size first; every
        `{% for %}` over `bounded_iter`, which checks the budget at each step (two loops over a
        long string that write nothing would otherwise never meet a check)."""

        def visit_For(self, node, frame) -> None:
            node.iter = nodes.Call(nodes.EnvironmentAttribute("bounded_iter"), [node.iter], [], None, None)
            super().visit_For(node, frame)

        def visit_Concat(self, node, frame) -> None:
            self.write("environment.bounded_concat((")
            for argument in node.nodes:
                self.visit(argument, frame)
                self.write(", ")
            self.write("))")

    class BoundedEnvironment(_Bounds, ImmutableSandboxedEnvironment):
        code_generator_class = BoundedCodeGenerator

    return BoundedEnvironment
