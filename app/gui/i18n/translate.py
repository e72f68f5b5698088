"""Fill docdesk_zh_CN.ts from the table below and compile it to .qm.

    python app/gui/i18n/translate.py

Run after changing a user-visible string: it re-extracts the strings (pyside6-lupdate), fills
in the Chinese, and compiles with pyside6-lrelease. Strings without an entry stay English.
"""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
GUI = HERE.parent
TS = HERE / "docdesk_zh_CN.ts"
BIN = Path(sys.executable).parent

from zh_strings import ZH  # noqa: E402  (beside this script: the window's strings in Chinese)

# The backends' labels and help (engine/backends/registry.py), context "Backends": not in the
# GUI's sources, so lupdate does not see them; main() adds the ones below to the .ts.
BACKENDS_ZH = {
    "A small model that comes with DocDesk: no download, no GPU needed.": "DocDesk 自带的小模型：无需下载，无需 GPU。",
    "tokens the model sees at once": "模型一次能看到的词元数",
    "CPU threads": "CPU 线程数",
    "threads for the model on the CPU": "模型在 CPU 上使用的线程数",
    "automatic": "自动",
    "A model file of your own, run inside DocDesk.": "你自己的模型文件，在 DocDesk 内运行。",
    "a .gguf file": "一个 .gguf 文件",
    "layers put on the GPU; 0: CPU only": "放到 GPU 上的层数；0：只用 CPU",
    "Batch size": "批大小",
    "prompt tokens read per step": "每步读取的提示词元数",
    "Flash attention": "Flash Attention",
    "auto: on where a GPU is": "自动：有 GPU 时开启",
    "auto": "自动",
    "on": "开",
    "off": "关",
    "q8_0 halves the cache's memory (needs flash attention)": "q8_0 让缓存占用的内存减半（需要 Flash Attention）",
    "Keep the model in memory (mlock)": "把模型锁定在内存中（mlock）",
    "never swap the model out": "模型永不换出到磁盘",
    "Repacked CPU weights": "CPU 重排权重",
    "llama.cpp's AMX/AVX layout; auto: off on AMX CPUs": "llama.cpp 的 AMX/AVX 布局；自动：AMX CPU 上关闭",
    "DocDesk starts llama-server and stops it on exit.": "DocDesk 启动 llama-server，并在退出时停止它。",
    "empty: the bundled model": "留空：使用自带模型",
    "the bundled model": "自带模型",
    "llama-server program": "llama-server 程序",
    "empty: llama-server on PATH, else the one DocDesk built": "留空：使用 PATH 中的 llama-server，否则使用 DocDesk 构建的",
    "answers run at once": "同时进行的回答数",
    "the port llama-server listens on": "llama-server 监听的端口",
    "a free one": "任一空闲端口",
    "DocDesk starts a vLLM server on the GPU and stops it on exit.": "DocDesk 在 GPU 上启动 vLLM 服务器，并在退出时停止它。",
    "a Hugging Face model id or folder": "Hugging Face 模型 ID 或文件夹",
    "vLLM's max_model_len": "vLLM 的 max_model_len",
    "key=value pairs of vLLM's settings": "vLLM 设置的 键=值 对",
    "A server that is already running (llama.cpp, vLLM, Ollama, LM Studio…).": "一个已在运行的服务器（llama.cpp、vLLM、Ollama、LM Studio…）。",  # noqa: E501
    "where the server listens": "服务器的监听地址",
    "Model name": "模型名",
    "the model the server serves; empty: its first one": "服务器提供的模型；留空：第一个",
    "API key": "API 密钥",
    "sent as a Bearer token; empty: none": "作为 Bearer 令牌发送；留空：不发送",
    "ask the server": "询问服务器",
    "Parallel answers": "并行回答数",
    "requests sent to the server at once": "同时发给服务器的请求数",
    "Connect timeout (s)": "连接超时（秒）",
    "Read timeout (s)": "读取超时（秒）",
    "longest wait for the next words": "等待下一段文字的最长时间",
    "Thinking (reasoning models)": "思考（推理模型）",
    "Qwen3, QwQ, DeepSeek-R1: think before answering; the answer is kept apart from the thinking": "Qwen3、QwQ、DeepSeek-R1：先思考再回答；回答与思考过程分开保存",
    "Thinking budget": "思考预算",
    "tokens of thinking per answer at most": "每个回答最多用于思考的词元数",
    "no limit": "不限",
    "Prompt-lookup speculation": "提示查找推测解码",
    "drafts copied from the sources, checked in one pass: faster where answers quote (auto: as measured)": "从来源中复制草稿并一次校验：回答引用原文时更快（自动：按实测）",
    "model default": "模型默认",
    "CPU threads for prompts": "读取提示的 CPU 线程数",
    "threads that read the prompt; automatic: all cores": "读取提示的线程数；自动：全部核心",
    "threads that write the answer; automatic: measured for this machine": "生成回答的线程数；自动：按本机实测选定",
}


# The format table's words for the window's format list (app/gui/format_list.py), context
# "Formats": names such as PDF or Word stay as they are.
FORMATS_ZH = {
    "text": "文本",
    "image": "图片",
    "images": "图片",
    "OpenDocument text": "OpenDocument 文本",
    "OpenDocument spreadsheet": "OpenDocument 电子表格",
    "OpenDocument presentation": "OpenDocument 演示文稿",
    ", ": "、",
    "%1 and %2": "%1和%2",
}


def add_format_strings(tree: ET.ElementTree) -> None:
    """A "Formats" context with the format table's words that have a translation."""
    sys.path.insert(0, str(GUI.parent.parent))
    from ingest.readers.registry import format_groups, supported_formats

    words = dict.fromkeys([*format_groups(), *supported_formats(), ", ", "%1 and %2"])  # groups, labels
    add_context(tree, "Formats", list(words), FORMATS_ZH)


def add_context(tree: ET.ElementTree, context_name: str, sources: list[str], table: dict[str, str]) -> None:
    context = ET.SubElement(tree.getroot(), "context")
    context.text, context.tail = "\n    ", "\n"
    name = ET.SubElement(context, "name")
    name.text, name.tail = context_name, "\n    "
    message = name
    for source in sources:
        if source in table:
            message = ET.SubElement(context, "message")
            message.text, message.tail = "\n        ", "\n    "
            element = ET.SubElement(message, "source")
            element.text, element.tail = source, "\n        "
            element = ET.SubElement(message, "translation")
            element.text, element.tail = table[source], "\n    "
    message.tail = "\n"


def add_backend_strings(tree: ET.ElementTree) -> list[str]:
    """A "Backends" context with the registry's strings that have a translation (the others show
    in English anyway); returns those without one."""
    sys.path.insert(0, str(GUI.parent.parent))
    from engine.backends.registry import strings

    table = {**ZH, **BACKENDS_ZH}
    add_context(tree, "Backends", list(strings()), table)
    return [source for source in strings() if source not in table]


def main() -> int:
    sources = sorted(str(p) for p in GUI.glob("*.py"))
    subprocess.run([str(BIN / "pyside6-lupdate"), *sources, "-no-obsolete", "-ts", str(TS)], check=True)
    tree = ET.parse(TS)
    missing = []
    for message in tree.iter("message"):
        source = message.findtext("source")
        translation = message.find("translation")
        if source in ZH:
            translation.text = ZH[source]
            translation.attrib.pop("type", None)
        else:
            missing.append(source)
    missing += add_backend_strings(tree)
    add_format_strings(tree)
    tree.write(TS, encoding="utf-8", xml_declaration=True)
    subprocess.run([str(BIN / "pyside6-lrelease"), str(TS), "-qm", str(TS.with_suffix(".qm"))], check=True)
    for source in missing:
        print(f"untranslated: {source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
