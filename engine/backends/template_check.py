"""Which chat template a model gets: its own when it renders a probe conversation within bounds,
else its family's well-known one (with a warning), else none (the model is refused).

A GGUF's template is checked when the model is chosen (`docdesk models use`, the Models dialog,
Settings) and again when a backend loads it, with the same probe, so both agree: a template
that raises, is not valid Jinja, writes nothing, leaves the question out, or overruns its time or
size budget (engine/backends/template_limits.py) is not used. The family is read from the broken
template's own special tokens (`<|im_start|>` is ChatML whatever the architecture says), then
from the architecture; where neither tells, DocDesk refuses rather than guess a format the model
was never trained on.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.backends.chat_template import ChatTemplate, ChatTemplateError

PROBE_QUESTION = "Where is the probe question?"
PROBE = [
    {"role": "system", "content": "Answer from the sources."},
    {"role": "user", "content": "First question."},
    {"role": "assistant", "content": "First answer."},
    {"role": "user", "content": PROBE_QUESTION},
]

# The families' own formats, as their models' templates write them (without tool calls).
FAMILY_TEMPLATES = {
    "chatml": (
        "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
        "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
    ),
    "llama3": (
        "{{ bos_token }}{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'"
        " + message['content'] | trim + '<|eot_id|>' }}{% endfor %}"
        "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}"
    ),
    "gemma": (
        "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'system' %}"
        "{{ raise_exception('System role not supported') }}{% endif %}"
        "{% set role = 'model' if message['role'] == 'assistant' else message['role'] %}"
        "{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}{% endfor %}"
        "{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}"
    ),
    "phi3": (
        "{% for message in messages %}{{ '<|' + message['role'] + '|>\\n' + message['content'] + '<|end|>\\n' }}"
        "{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}"
    ),
    "mistral": (
        "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'system' %}"
        "{{ raise_exception('System role not supported') }}{% elif message['role'] == 'user' %}"
        "{{ '[INST] ' + message['content'] + ' [/INST]' }}{% else %}{{ message['content'] + eos_token }}{% endif %}"
        "{% endfor %}"
    ),
}
_MARKERS = [  # a special token a family's template writes, in the order they are tried
    ("<|im_start|>", "chatml"),
    ("<|start_header_id|>", "llama3"),
    ("<start_of_turn>", "gemma"),
    ("<|end|>", "phi3"),
    ("[INST]", "mistral"),
]
_ARCHITECTURES = {  # GGUF general.architecture -> family, where the architecture alone tells
    "qwen2": "chatml", "qwen2moe": "chatml", "qwen3": "chatml", "qwen3moe": "chatml", "internlm2": "chatml",
    "gemma": "gemma", "gemma2": "gemma", "gemma3": "gemma", "phi3": "phi3",
}  # fmt: skip


@dataclass(frozen=True)
class TemplateChoice:
    source: str  # the template to render with
    family: str | None = None  # set when it is the family's, not the model's own
    warning: str | None = None  # why the model's own is not used


def family_of(source: str, architecture: str) -> str | None:
    for marker, family in _MARKERS:
        if marker in source:
            return family
    return _ARCHITECTURES.get(architecture)


def probe(source: str) -> str:
    """The probe conversation rendered; raises ChatTemplateError when the template is not usable."""
    prompt = ChatTemplate(source).render(PROBE).prompt
    if not prompt.strip():
        raise ChatTemplateError("it writes nothing")
    if PROBE_QUESTION not in prompt:
        raise ChatTemplateError("it leaves the question out of the prompt")
    return prompt


def choose_template(source: str, architecture: str, name: str) -> TemplateChoice:
    """The template `name` (a model) is run with; raises ChatTemplateError in DocDesk's words
    when it has none (a base model, not made for chat) or its own does not work and its family
    is unknown."""
    if not source.strip():
        raise ChatTemplateError(
            f"{name} has no chat template in its GGUF metadata: use a chat/instruct model or a GGUF "
            "converted with its template"
        )
    try:
        probe(source)
        return TemplateChoice(source)
    except ChatTemplateError as exc:
        reason = str(exc).removeprefix("the model's chat template ")
        family = family_of(source, architecture)
        if family is None:
            raise ChatTemplateError(
                f"{name} cannot be used: its chat template does not work ({reason}), and DocDesk knows no "
                f"standard template for its architecture ({architecture or 'not named'}): use a GGUF converted "
                "with a working template"
            ) from exc
        return TemplateChoice(
            FAMILY_TEMPLATES[family],
            family,
            f"{name}: its own chat template does not work ({reason}); DocDesk uses the standard {family} "
            "template of its family instead",
        )
