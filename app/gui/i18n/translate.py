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

ZH = {
    " — open Settings to choose another model": " — 请在“设置”中选择其他模型",
    "%1 added": "已添加 %1 个",
    "1 document": "1 个文档",
    "%1 documents": "%1 个文档",
    "1 passage": "1 个段落",
    "%1 passages": "%1 个段落",
    "building the search index…": "正在建立搜索索引…",
    "building the search index: %1%": "正在建立搜索索引：%1%",
    "%1 from cache": "%1 个来自缓存",
    "%1 tokens/s · first token %2 ms · %3: “%4”": "%1 词元/秒 · 首词元 %2 毫秒 · %3：“%4”",
    "(stopped)": "（已停止）",
    "Add documents": "添加文档",
    "Documents (%1);;All files (*)": "文档 (%1);;所有文件 (*)",
    "DocDesk stopped unexpectedly": "DocDesk 意外退出",
    "⚠ DocDesk stopped unexpectedly last time": "⚠ DocDesk 上次意外退出",
    "read-only": "只读",
    "The library folder %1 cannot be written (a read-only mount, no permission, or a full disk). Search, ask and summarize work; adding, removing and saving chats do not.": "文档库文件夹 %1 无法写入（只读挂载、没有权限或磁盘已满）。搜索、提问和摘要可以使用；添加、删除和保存对话不行。",  # noqa: E501
    "Files are missing from %1: its documents are kept (unmounted?)": "%1 中的文件不见了：其文档已保留（未挂载？）",
    "Add files or folders (Ctrl+O), or drop them anywhere on the window": "添加文件或文件夹（Ctrl+O），也可以直接拖入窗口",
    "Added": "添加时间",
    "Adding %1 item(s)…": "正在添加 %1 项…",
    "Adding documents failed: %1": "添加文档失败：%1",
    "Add…": "添加…",
    "Add documents…": "添加文档…",
    "Filter documents": "筛选文档",
    "Quit": "退出",
    "Ask a question": "提问",
    "Doctor's report": "诊断报告",
    "About DocDesk": "关于 DocDesk",
    "&File": "文件(&F)",
    "&Chat": "对话(&C)",
    "&Help": "帮助(&H)",
    "Documents": "文档",
    "Chats": "对话列表",
    "Conversation": "对话内容",
    "Question": "问题",
    "Engine status": "引擎状态",
    "Library status": "文档库状态",
    "Select a document first": "请先选择文档",
    "DocDesk %1: ask your documents, with answers that cite the page they come from. Everything stays on this computer.": "DocDesk %1：向你的文档提问，回答注明出自哪一页。所有内容都留在这台电脑上。",  # noqa: E501
    "Ask your documents… (Ctrl+Enter to send)": "向文档提问…（Ctrl+Enter 发送）",
    "Backend": "推理后端",
    "Browse…": "浏览…",
    "Bundled model (SmolLM2-135M, CPU)": "自带模型（SmolLM2-135M，CPU）",
    "Cancel": "取消",
    "Check this machine": "检查本机",
    "GGUF file, several answers at once (llama-server, started by DocDesk)": "GGUF 文件，多个回答同时进行（llama-server，由 DocDesk 启动）",
    "Parallel answers (llama-server)": "并行回答数（llama-server）",
    "as many as fit": "显存允许的最大数",
    "Checking this machine…": "正在检查本机…",
    "⚠ The GPU is not used: see the doctor's report": "⚠ 未使用 GPU：查看诊断报告",
    "Choose a GGUF model": "选择 GGUF 模型",
    "Context length": "上下文长度",
    "Copy": "复制",
    "Could not answer: %1": "无法回答：%1",
    "Could not read: %1 (see the Status column)": "无法读取：%1（见“状态”列）",
    "Delete": "删除",
    "Doctor": "诊断",
    "Documents (*.pdf *.docx *.html *.htm *.md *.txt);;All files (*)": "文档 (*.pdf *.docx *.html *.htm *.md *.txt);;所有文件 (*)",
    "Done in %1 s": "用时 %1 秒完成",
    "Drop documents onto the window (%1), then ask questions. "
    "Answers cite the page they come from. Everything stays on this computer.": "把文档拖入窗口（%1），然后提问。回答会注明出处页码。所有内容都留在这台电脑上。",
    "Drop documents on the window (%1), then ask a question below. "
    "Answers cite the document and page they come from; click a citation to see it.": "把文档拖入窗口（%1），然后在下方提问。回答会注明出处文档和页码；点击引用即可查看原文。",
    "Start in three steps": "三步开始",
    "<b>Add documents</b>: drop them on the window, or press %1 (%2).": "<b>添加文档</b>：拖入窗口，或按 %1（%2）。",
    "<b>Ask a question</b> in the box below (Ctrl+Enter). Answers cite the document and page "
    "they come from; click a citation to see it.": "在下方输入框中<b>提问</b>（Ctrl+Enter）。回答会注明出处文档和页码；点击引用即可查看原文。",
    "<b>Choose a model</b> in Settings → Model.": "在“设置 → 模型”中<b>选择模型</b>。",
    "The bundled model is SmolLM2-135M-Instruct, a 135M-parameter demonstration model: it runs "
    "anywhere but answers poorly. For real answers choose, in Settings → Model, a GGUF file such as "
    "Qwen2.5 or Qwen3 (7B) or Gemma 3 at Q4_K_M, or an OpenAI-compatible server.": "自带模型是 SmolLM2-135M-Instruct，一个 1.35 亿参数的演示模型：在哪里都能运行，但回答质量很差。要得到真正的回答，请在“设置 → 模型”中选择一个 GGUF 文件（例如 Q4_K_M 量化的 Qwen2.5、Qwen3（7B）或 Gemma 3），或一个 OpenAI 兼容的服务器。",  # noqa: E501
    "Checking this machine's GPU…": "正在检查本机的 GPU…",
    "No NVIDIA GPU here: answers run on the CPU, so choose a small model (1–4B parameters, Q4_K_M).": "本机没有 NVIDIA GPU：回答在 CPU 上运行，请选择小模型（10–40 亿参数，Q4_K_M）。",  # noqa: E501
    "GPU: %1 (%2 GiB), used for answers: choose a model that fits in its memory.": "GPU：%1（%2 GiB），用于回答：请选择显存放得下的模型。",  # noqa: E501
    "A GPU is here (%1) but this llama.cpp build cannot offload to it: install the CUDA toolkit "
    "(nvcc) and run `make run` again.": "本机有 GPU（%1），但当前的 llama.cpp 版本无法使用它：请安装 CUDA 工具包（nvcc），然后重新运行 `make run`。",  # noqa: E501
    "A GPU is here (%1) but llama-cpp-python is not installed: install the CUDA toolkit (nvcc) and "
    "run `make run`.": "本机有 GPU（%1），但没有安装 llama-cpp-python：请安装 CUDA 工具包（nvcc），然后运行 `make run`。",
    "Answers come from the server at %1: its GPU, not this computer's, does the work.": "回答来自 %1 的服务器：由它的 GPU 而不是本机完成计算。",  # noqa: E501
    "The GPU check failed: see Settings → Doctor.": "GPU 检查失败：请查看“设置 → 诊断”。",
    "Embedding model": "嵌入模型",
    "Engine error: %1": "引擎错误：%1",
    "Engine: loading the models…": "引擎：正在加载模型…",
    "Engine: ready": "引擎：就绪",
    "Engine: working…": "引擎：处理中…",
    "Failed: %1": "失败：%1",
    "Filter documents…": "筛选文档…",
    "Format": "格式",
    "GGUF file (llama.cpp)": "GGUF 文件（llama.cpp）",
    "GPU layers": "GPU 层数",
    "Interface language": "界面语言",
    "KV cache": "KV 缓存",
    "Library": "文档库",
    "Library folder": "文档库文件夹",
    "Main": "主工具栏",
    "Model": "模型",
    "New chat": "新对话",
    "OpenAI-compatible server": "OpenAI 兼容服务器",
    "Only indexed documents can be summarized": "只能为已索引的文档生成摘要",
    "Only the selected documents": "仅限选中的文档",
    "Open in system viewer": "用系统程序打开",
    "Pages": "页数",
    "Re-index": "重新索引",
    "Remove from library": "从文档库移除",
    "Rename": "重命名",
    "Rename chat": "重命名对话",
    "Retrieved passages": "检索到的段落",
    "Save as Markdown…": "另存为 Markdown…",
    "Save summary": "保存摘要",
    "Select a document to summarize": "请先选择要摘要的文档",
    "Send": "发送",
    "Server URL": "服务器地址",
    "Settings": "设置",
    "Settings saved to %1": "设置已保存到 %1",
    "Settings…": "设置…",
    "Show in folder": "在文件夹中显示",
    "Show retrieved passages": "查看检索到的段落",
    "Source": "出处",
    "Sources": "出处",
    "Status": "状态",
    "Stop": "停止",
    "Stopped. Finished blocks are kept: summarize again to resume.": "已停止。已完成的块会保留：再次摘要即可继续。",
    "Stopping…": "正在停止…",
    "Summarize": "摘要",
    "Summarizing…": "正在生成摘要…",
    "Summary failed: %1": "摘要失败：%1",
    "Summary: %1": "摘要：%1",
    "Test": "测试",
    "Testing…": "测试中…",
    "That document is no longer in the library.": "该文档已不在文档库中。",
    "Title": "标题",
    "Type": "类型",
    "Title:": "标题：",
    "What the model was given for this answer:": "生成这个回答时提供给模型的内容：",
    "You": "你",
    "about %1 s left": "约剩 %1 秒",
    "all": "全部",
    "blocks": "块",
    "bundled all-MiniLM-L6-v2": "自带 all-MiniLM-L6-v2",
    "checking": "检查中",
    "combining": "汇总",
    "embedding": "嵌入中",
    "failed: %1": "失败：%1",
    "from the cache": "来自缓存",
    "indexed": "已索引",
    "model default": "模型默认",
    "page %1": "第 %1 页",
    "queued": "排队中",
    "reading": "读取中",
    "reading %1/%2 p.": "读取第 %1/%2 页",
    "OCR p. %1/%2": "OCR 第 %1/%2 页",
    "OCR p. %1": "OCR 第 %1 页",
    "embedding %1/%2": "嵌入 %1/%2",
    "vLLM (started by DocDesk)": "vLLM（由 DocDesk 启动）",
    "vLLM options": "vLLM 选项",
    "writing": "写入中",
    "Serve to editors": "对编辑器开放",
    "Serve the library to editors while DocDesk is open": "DocDesk 打开时，向编辑器开放文档库",
    "none: only programs on this computer can connect": "无：只有本机上的程序可以连接",
    "New token": "生成新令牌",
    "Let other computers connect (needs a token)": "允许其他电脑连接（需要令牌）",
    "Port": "端口",
    "Token": "令牌",
    'Point an OpenAI-compatible editor plugin at %1 with the model "docdesk".': '在兼容 OpenAI 接口的编辑器插件中填写地址 %1，模型填写 "docdesk"。',
    "Other computers can connect only with a token: set one.": "其他电脑必须凭令牌连接：请设置一个令牌。",
    "⚠ Not serving editors": "⚠ 未向编辑器开放",
    "a token is required": "需要令牌",
    "no token: this computer only": "无令牌：仅限本机",
    "Serving editors at %1": "已向编辑器开放：%1",
    'OpenAI-compatible endpoint, model "docdesk" · %1': 'OpenAI 兼容接口，模型 "docdesk" · %1',
    "Choose a program": "选择程序",
    "Waits for the model…": "等待模型…",
    "Waits for the summary: %1 of %2 blocks left": "等待摘要完成：还剩 %2 块中的 %1 块",
    "Waits for the summary: combining its blocks": "等待摘要完成：正在合并各块",
    "(Stop keeps your question)": "（停止会保留您的问题）",
    "Not asked: your question is back in the question box": "未提问：您的问题已放回提问框",
    "Engine: %1": "引擎：%1",
    "working…": "工作中…",
    "answering…": "正在回答…",
    "summarizing, block %1 of %2": "正在摘要，第 %1 块（共 %2 块）",
    "summarizing, combining the blocks": "正在摘要，合并各块",
    "DocDesk could not start again: start it yourself.": "DocDesk 无法自动重启：请手动启动。",
    "p. %1": "第 %1 页",
    "Restart DocDesk?": "重启 DocDesk？",
    "The new interface language or library folder is used from the next start. Restart DocDesk now?": "新的界面语言或文档库文件夹将在下次启动时生效。现在重启 DocDesk 吗？",
    "Restart now": "立即重启",
    "Whole document": "整个文档",
    "pages %1–%2": "第 %1–%2 页",
    "Later": "稍后",
    "The change takes effect when DocDesk starts again": "更改将在 DocDesk 下次启动时生效",
    "A new library folder or language takes effect after a restart (DocDesk offers one); a new model loads at once.": "新的文档库文件夹或界面语言在重启后生效（DocDesk 会提示重启）；新模型会立即加载。",
    "Models": "模型",
    "Checking this computer…": "正在检查这台电脑…",
    "Card": "显卡",
    "Size": "大小",
    "Licence": "许可证",
    "Thinks": "思考",
    "On this computer": "在这台电脑上",
    "Cancel download": "取消下载",
    "Download": "下载",
    "Use": "使用",
    "Use a GGUF file I have…": "使用我已有的 GGUF 文件…",
    "always": "总是",
    "on or off": "可开可关",
    "no": "否",
    "Reading its header…": "正在读取文件头…",
    "%1 (%2 GiB)": "%1（%2 GiB）",
    "no GPU that llama.cpp can use here": "这里没有 llama.cpp 能用的 GPU",
    "This computer: %1; %2 GiB memory; memory bandwidth measured here: %3 GB/s.": "这台电脑：%1；内存 %2 GiB；在此测得的内存带宽：%3 GB/s。",
    "Unknown: %1": "未知：%1",
    "Fits: %1 tokens of context, %2 answers at once": "可以运行：上下文 %1 个词元，可同时回答 %2 个问题",
    "Fits with a short context: %1 tokens, one answer at a time": "只能用较短的上下文：%1 个词元，一次回答一个问题",
    "Does not fit: needs %3 GiB of GPU memory, the card has %4 GiB": "放不下：需要 %3 GiB 显存，显卡只有 %4 GiB",
    "CPU only: at most about %5 tokens/s": "仅用 CPU：最多约每秒 %5 个词元",
    "Does not fit: needs %3 GiB of memory, %4 GiB are free for it": "放不下：需要 %3 GiB 内存，可用的只有 %4 GiB",
    "Asking the Hub for %1…": "正在向 Hub 查询 %1…",
    "Checking the file's sha256 against the Hub's…": "正在将文件的 sha256 与 Hub 上的核对…",
    "%1 of %2 GB · %3 MB/s": "%1 / %2 GB · %3 MB/s",
    "%1 left": "剩余 %1",
    "Downloaded and checked: %1": "已下载并校验：%1",
    "Download cancelled; the part already downloaded is kept for next time.": "下载已取消；已下载的部分会保留，下次接着下载。",
    "Download failed: %1": "下载失败：%1",
    "DocDesk now uses %1.": "DocDesk 现在使用 %1。",
    "DocDesk now uses %1: %2": "DocDesk 现在使用 %1：%2",
    "Warning: %1": "注意：%1",
    "Not used: %1": "未使用：%1",
    "Model not used": "未使用该模型",
    "Chat template replaced": "聊天模板已替换",
    "Models…": "模型…",
    "Get a model that fits this computer, or use a GGUF file you have": "获取适合这台电脑的模型，或使用你已有的 GGUF 文件",
    "<a href=\"%1\">Get one that fits this computer</a>.": "<a href=\"%1\">获取一个适合这台电脑的模型</a>。",
    "Thinking… (%1 words)": "思考中…（%1 个词）",
    "Thought for %1 s": "思考了 %1 秒",
    "Thoughts": "思考过程",
    "The selected documents fit: the model read them whole.": "所选文档放得下：模型读取了完整文档。",
    "Unknown: the Hub cannot be reached from here": "未知：这里无法连接 Hub",
    "bundled: MiniLM with the multilingual USE": "内置：MiniLM 与多语言 USE",
    "Stages: %1": "各阶段：%1",
    "relevant": "相关",
    "nothing relevant": "没有相关内容",
    "Relevance: %1 (keyword coverage %2, dense score %3, margin %4)": "相关性：%1（关键词覆盖 %2，向量得分 %3，差距 %4）",
    "answered anyway: %1": "仍然作答：%1",
    "Skipped (the answer went on without it): %1": "已跳过（回答照常进行）：%1",
}

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
