<?xml version='1.0' encoding='utf-8'?>
<TS version="2.1" language="zh_CN">
<context>
    <name>ChatController</name>
    <message>
        <location filename="../chat_controller.py" line="120" />
        <source>Waits for the model…</source>
        <translation>等待模型…</translation>
    </message>
    <message>
        <location filename="../chat_controller.py" line="122" />
        <source>Waits for the summary: %1 of %2 blocks left</source>
        <translation>等待摘要完成：还剩 %2 块中的 %1 块</translation>
    </message>
    <message>
        <location filename="../chat_controller.py" line="125" />
        <source>Waits for the summary: combining its blocks</source>
        <translation>等待摘要完成：正在合并各块</translation>
    </message>
    <message>
        <location filename="../chat_controller.py" line="129" />
        <source>(Stop keeps your question)</source>
        <translation>（停止会保留您的问题）</translation>
    </message>
    <message>
        <location filename="../chat_controller.py" line="147" />
        <source>Not asked: your question is back in the question box</source>
        <translation>未提问：您的问题已放回提问框</translation>
    </message>
    <message>
        <location filename="../chat_controller.py" line="173" />
        <source>(stopped)</source>
        <translation>（已停止）</translation>
    </message>
    <message>
        <location filename="../chat_controller.py" line="183" />
        <source>Could not answer: %1</source>
        <translation>无法回答：%1</translation>
    </message>
    <message>
        <location filename="../chat_controller.py" line="198" />
        <source>Retrieved passages</source>
        <translation>检索到的段落</translation>
    </message>
    <message>
        <location filename="../chat_controller.py" line="210" />
        <source>What the model was given for this answer:</source>
        <translation>生成这个回答时提供给模型的内容：</translation>
    </message>
    <message>
        <location filename="../chat_controller.py" line="222" />
        <source>Excerpt: the sentences of this passage that answer, %1; the rest did not fit.</source>
        <translation>节选：此段落中回答问题的句子，%1；其余部分未能放入。</translation>
    </message>
    <message>
        <location filename="../chat_controller.py" line="232" />
        <source>Stages: %1</source>
        <translation>各阶段：%1</translation>
    </message>
    <message>
        <location filename="../chat_controller.py" line="235" />
        <source>relevant</source>
        <translation>相关</translation>
    </message>
    <message>
        <location filename="../chat_controller.py" line="236" />
        <source>nothing relevant</source>
        <translation>没有相关内容</translation>
    </message>
    <message>
        <location filename="../chat_controller.py" line="237" />
        <source>Relevance: %1 (keyword coverage %2, dense score %3, margin %4)</source>
        <translation>相关性：%1（关键词覆盖 %2，向量得分 %3，差距 %4）</translation>
    </message>
    <message>
        <location filename="../chat_controller.py" line="241" />
        <source>answered anyway: %1</source>
        <translation>仍然作答：%1</translation>
    </message>
    <message>
        <location filename="../chat_controller.py" line="244" />
        <source>Skipped (the answer went on without it): %1</source>
        <translation>已跳过（回答照常进行）：%1</translation>
    </message>
</context>
<context>
    <name>ChatPane</name>
    <message>
        <location filename="../chat_pane.py" line="63" />
        <source>New chat</source>
        <translation>新对话</translation>
    </message>
    <message>
        <location filename="../chat_pane.py" line="65" />
        <source>Rename</source>
        <translation>重命名</translation>
    </message>
    <message>
        <location filename="../chat_pane.py" line="67" />
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <location filename="../chat_pane.py" line="86" />
        <source>Ask your documents… (Ctrl+Enter to send)</source>
        <translation>向文档提问…（Ctrl+Enter 发送）</translation>
    </message>
    <message>
        <location filename="../chat_pane.py" line="88" />
        <source>Send</source>
        <translation>发送</translation>
    </message>
    <message>
        <location filename="../chat_pane.py" line="90" />
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location filename="../chat_pane.py" line="93" />
        <source>Only the selected documents</source>
        <translation>仅限选中的文档</translation>
    </message>
    <message>
        <location filename="../chat_pane.py" line="94" />
        <source>Show retrieved passages</source>
        <translation>查看检索到的段落</translation>
    </message>
    <message>
        <location filename="../chat_pane.py" line="145" />
        <source>Rename chat</source>
        <translation>重命名对话</translation>
    </message>
    <message>
        <location filename="../chat_pane.py" line="145" />
        <source>Title:</source>
        <translation>标题：</translation>
    </message>
    <message>
        <location filename="../chat_pane.py" line="55" />
        <source>You</source>
        <translation>你</translation>
    </message>
    <message>
        <location filename="../chat_pane.py" line="55" />
        <source>Sources</source>
        <translation>出处</translation>
    </message>
</context>
<context>
    <name>CitationViewer</name>
    <message>
        <location filename="../viewer.py" line="63" />
        <source>Source</source>
        <translation>出处</translation>
    </message>
    <message>
        <location filename="../viewer.py" line="71" />
        <source>Open in system viewer</source>
        <translation>用系统程序打开</translation>
    </message>
    <message>
        <location filename="../viewer.py" line="73" />
        <source>Whole document</source>
        <translation>整个文档</translation>
    </message>
    <message>
        <location filename="../viewer.py" line="103" />
        <source>page %1</source>
        <translation>第 %1 页</translation>
    </message>
    <message>
        <location filename="../viewer.py" line="158" />
        <source>pages %1–%2</source>
        <translation>第 %1–%2 页</translation>
    </message>
</context>
<context>
    <name>DocumentOpener</name>
    <message>
        <location filename="../document_opener.py" line="51" />
        <source>That document is no longer in the library.</source>
        <translation>该文档已不在文档库中。</translation>
    </message>
</context>
<context>
    <name>EngineController</name>
    <message>
        <location filename="../engine_controller.py" line="31" />
        <source>Engine: loading the models…</source>
        <translation>引擎：正在加载模型…</translation>
    </message>
    <message>
        <location filename="../engine_controller.py" line="32" />
        <source>Engine: ready</source>
        <translation>引擎：就绪</translation>
    </message>
    <message>
        <location filename="../engine_controller.py" line="33" />
        <source>Engine: %1</source>
        <translation>引擎：%1</translation>
    </message>
    <message>
        <location filename="../engine_controller.py" line="33" />
        <source>working…</source>
        <translation>工作中…</translation>
    </message>
    <message>
        <location filename="../engine_controller.py" line="34" />
        <source>Engine error: %1</source>
        <translation>引擎错误：%1</translation>
    </message>
    <message>
        <location filename="../engine_controller.py" line="51" />
        <source>answering…</source>
        <translation>正在回答…</translation>
    </message>
    <message>
        <location filename="../engine_controller.py" line="58" />
        <source>summarizing, block %1 of %2</source>
        <translation>正在摘要，第 %1 块（共 %2 块）</translation>
    </message>
    <message>
        <location filename="../engine_controller.py" line="61" />
        <source>summarizing, combining the blocks</source>
        <translation>正在摘要，合并各块</translation>
    </message>
    <message>
        <location filename="../engine_controller.py" line="71" />
        <source> — open Settings to choose another model</source>
        <translation> — 请在“设置”中选择其他模型</translation>
    </message>
    <message>
        <location filename="../engine_controller.py" line="88" />
        <source>⚠ The GPU is not used: see the doctor's report</source>
        <translation>⚠ 未使用 GPU：查看诊断报告</translation>
    </message>
    <message>
        <location filename="../engine_controller.py" line="93" />
        <source>Doctor</source>
        <translation>诊断</translation>
    </message>
    <message>
        <location filename="../engine_controller.py" line="96" />
        <source>Checking this machine…</source>
        <translation>正在检查本机…</translation>
    </message>
</context>
<context>
    <name>FirstRunGuide</name>
    <message>
        <location filename="../first_run.py" line="34" />
        <source>&lt;b&gt;Add documents&lt;/b&gt;: drop them on the window, or press %1 (%2).</source>
        <translation>&lt;b&gt;添加文档&lt;/b&gt;：拖入窗口，或按 %1（%2）。</translation>
    </message>
    <message>
        <location filename="../first_run.py" line="39" />
        <source>&lt;b&gt;Ask a question&lt;/b&gt; in the box below (Ctrl+Enter). Answers cite the document and page they come from; click a citation to see it.</source>
        <translation>在下方输入框中&lt;b&gt;提问&lt;/b&gt;（Ctrl+Enter）。回答会注明出处文档和页码；点击引用即可查看原文。</translation>
    </message>
    <message>
        <location filename="../first_run.py" line="41" />
        <source>&lt;b&gt;Choose a model&lt;/b&gt; in Settings → Model.</source>
        <translation>在“设置 → 模型”中&lt;b&gt;选择模型&lt;/b&gt;。</translation>
    </message>
    <message>
        <location filename="../first_run.py" line="42" />
        <source>&lt;a href="%1"&gt;Get one that fits this computer&lt;/a&gt;.</source>
        <translation>&lt;a href="%1"&gt;获取一个适合这台电脑的模型&lt;/a&gt;。</translation>
    </message>
    <message>
        <location filename="../first_run.py" line="50" />
        <source>The bundled model is SmolLM2-135M-Instruct, a 135M-parameter demonstration model: it runs anywhere but answers poorly. For real answers choose, in Settings → Model, a GGUF file such as Qwen2.5 or Qwen3 (7B) or Gemma 3 at Q4_K_M, or an OpenAI-compatible server.</source>
        <translation>自带模型是 SmolLM2-135M-Instruct，一个 1.35 亿参数的演示模型：在哪里都能运行，但回答质量很差。要得到真正的回答，请在“设置 → 模型”中选择一个 GGUF 文件（例如 Q4_K_M 量化的 Qwen2.5、Qwen3（7B）或 Gemma 3），或一个 OpenAI 兼容的服务器。</translation>
    </message>
    <message>
        <location filename="../first_run.py" line="50" />
        <source>Checking this machine's GPU…</source>
        <translation>正在检查本机的 GPU…</translation>
    </message>
    <message>
        <location filename="../first_run.py" line="52" />
        <source>Start in three steps</source>
        <translation>三步开始</translation>
    </message>
    <message>
        <location filename="../first_run.py" line="61" />
        <source>No NVIDIA GPU here: answers run on the CPU, so choose a small model (1–4B parameters, Q4_K_M).</source>
        <translation>本机没有 NVIDIA GPU：回答在 CPU 上运行，请选择小模型（10–40 亿参数，Q4_K_M）。</translation>
    </message>
    <message>
        <location filename="../first_run.py" line="64" />
        <source>GPU: %1 (%2 GiB), used for answers: choose a model that fits in its memory.</source>
        <translation>GPU：%1（%2 GiB），用于回答：请选择显存放得下的模型。</translation>
    </message>
    <message>
        <location filename="../first_run.py" line="71" />
        <source>A GPU is here (%1) but this llama.cpp build cannot offload to it: install the CUDA toolkit (nvcc) and run `make run` again.</source>
        <translation>本机有 GPU（%1），但当前的 llama.cpp 版本无法使用它：请安装 CUDA 工具包（nvcc），然后重新运行 `make run`。</translation>
    </message>
    <message>
        <location filename="../first_run.py" line="75" />
        <source>A GPU is here (%1) but llama-cpp-python is not installed: install the CUDA toolkit (nvcc) and run `make run`.</source>
        <translation>本机有 GPU（%1），但没有安装 llama-cpp-python：请安装 CUDA 工具包（nvcc），然后运行 `make run`。</translation>
    </message>
    <message>
        <location filename="../first_run.py" line="78" />
        <source>Answers come from the server at %1: its GPU, not this computer's, does the work.</source>
        <translation>回答来自 %1 的服务器：由它的 GPU 而不是本机完成计算。</translation>
    </message>
    <message>
        <location filename="../first_run.py" line="95" />
        <source>The GPU check failed: see Settings → Doctor.</source>
        <translation>GPU 检查失败：请查看“设置 → 诊断”。</translation>
    </message>
</context>
<context>
    <name>LibraryController</name>
    <message>
        <location filename="../library_controller.py" line="69" />
        <source>reading</source>
        <translation>读取中</translation>
    </message>
    <message>
        <location filename="../library_controller.py" line="70" />
        <source>embedding</source>
        <translation>嵌入中</translation>
    </message>
    <message>
        <location filename="../library_controller.py" line="71" />
        <source>writing</source>
        <translation>写入中</translation>
    </message>
    <message>
        <location filename="../library_controller.py" line="72" />
        <source>checking</source>
        <translation>检查中</translation>
    </message>
    <message>
        <location filename="../library_controller.py" line="110" />
        <source>1 document</source>
        <translation>1 个文档</translation>
    </message>
    <message>
        <location filename="../library_controller.py" line="110" />
        <source>%1 documents</source>
        <translation>%1 个文档</translation>
    </message>
    <message>
        <location filename="../library_controller.py" line="115" />
        <source>1 passage</source>
        <translation>1 个段落</translation>
    </message>
    <message>
        <location filename="../library_controller.py" line="115" />
        <source>%1 passages</source>
        <translation>%1 个段落</translation>
    </message>
    <message>
        <location filename="../library_controller.py" line="120" />
        <source>read-only</source>
        <translation>只读</translation>
    </message>
    <message>
        <location filename="../library_controller.py" line="122" />
        <source>The library folder %1 cannot be written (a read-only mount, no permission, or a full disk). Search, ask and summarize work; adding, removing and saving chats do not.</source>
        <translation>文档库文件夹 %1 无法写入（只读挂载、没有权限或磁盘已满）。搜索、提问和摘要可以使用；添加、删除和保存对话不行。</translation>
    </message>
    <message>
        <location filename="../library_controller.py" line="137" />
        <source>building the search index…</source>
        <translation>正在建立搜索索引…</translation>
    </message>
    <message>
        <location filename="../library_controller.py" line="138" />
        <source>building the search index: %1%</source>
        <translation>正在建立搜索索引：%1%</translation>
    </message>
    <message>
        <location filename="../library_controller.py" line="146" />
        <source>Adding %1 item(s)…</source>
        <translation>正在添加 %1 项…</translation>
    </message>
    <message>
        <location filename="../library_controller.py" line="188" />
        <source>OCR p. %1/%2</source>
        <translation>OCR 第 %1/%2 页</translation>
    </message>
    <message>
        <location filename="../library_controller.py" line="190" />
        <source>OCR p. %1</source>
        <translation>OCR 第 %1 页</translation>
    </message>
    <message>
        <location filename="../library_controller.py" line="192" />
        <source>reading %1/%2 p.</source>
        <translation>读取第 %1/%2 页</translation>
    </message>
    <message>
        <location filename="../library_controller.py" line="196" />
        <source>embedding %1/%2</source>
        <translation>嵌入 %1/%2</translation>
    </message>
    <message>
        <location filename="../library_controller.py" line="209" />
        <source>Files are missing from %1: its documents are kept (unmounted?)</source>
        <translation>%1 中的文件不见了：其文档已保留（未挂载？）</translation>
    </message>
    <message>
        <location filename="../library_controller.py" line="213" />
        <source>Could not read: %1 (see the Status column)</source>
        <translation>无法读取：%1（见“状态”列）</translation>
    </message>
    <message>
        <location filename="../library_controller.py" line="215" />
        <source>%1 added</source>
        <translation>已添加 %1 个</translation>
    </message>
    <message>
        <location filename="../library_controller.py" line="221" />
        <source>Adding documents failed: %1</source>
        <translation>添加文档失败：%1</translation>
    </message>
</context>
<context>
    <name>LibraryPane</name>
    <message>
        <location filename="../library_pane.py" line="42" />
        <source>Filter documents…</source>
        <translation>筛选文档…</translation>
    </message>
    <message>
        <location filename="../library_pane.py" line="43" />
        <source>Add…</source>
        <translation>添加…</translation>
    </message>
    <message>
        <location filename="../library_pane.py" line="44" />
        <source>Add files or folders (Ctrl+O), or drop them anywhere on the window</source>
        <translation>添加文件或文件夹（Ctrl+O），也可以直接拖入窗口</translation>
    </message>
    <message>
        <location filename="../library_pane.py" line="51" />
        <source>Title</source>
        <translation>标题</translation>
    </message>
    <message>
        <location filename="../library_pane.py" line="51" />
        <source>Pages</source>
        <translation>页数</translation>
    </message>
    <message>
        <location filename="../library_pane.py" line="51" />
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location filename="../library_pane.py" line="51" />
        <source>Added</source>
        <translation>添加时间</translation>
    </message>
    <message>
        <location filename="../library_pane.py" line="103" />
        <source>failed: %1</source>
        <translation>失败：%1</translation>
    </message>
    <message>
        <location filename="../library_pane.py" line="81" />
        <location filename="../library_pane.py" line="105" />
        <source>queued</source>
        <translation>排队中</translation>
    </message>
    <message>
        <location filename="../library_pane.py" line="51" />
        <source>Type</source>
        <translation>类型</translation>
    </message>
    <message>
        <location filename="../library_pane.py" line="78" />
        <source>reading %1/%2 p.</source>
        <translation>读取第 %1/%2 页</translation>
    </message>
    <message>
        <location filename="../library_pane.py" line="79" />
        <source>embedding %1/%2</source>
        <translation>嵌入 %1/%2</translation>
    </message>
    <message>
        <location filename="../library_pane.py" line="80" />
        <location filename="../library_pane.py" line="108" />
        <source>indexed</source>
        <translation>已索引</translation>
    </message>
    <message>
        <location filename="../library_pane.py" line="178" />
        <source>Summarize</source>
        <translation>摘要</translation>
    </message>
    <message>
        <location filename="../library_pane.py" line="179" />
        <source>Re-index</source>
        <translation>重新索引</translation>
    </message>
    <message>
        <location filename="../library_pane.py" line="180" />
        <source>Show in folder</source>
        <translation>在文件夹中显示</translation>
    </message>
    <message>
        <location filename="../library_pane.py" line="181" />
        <source>Remove from library</source>
        <translation>从文档库移除</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <location filename="../main_window.py" line="132" />
        <source>Main</source>
        <translation>主工具栏</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="127" />
        <source>Add…</source>
        <translation>添加…</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="126" />
        <location filename="../main_window.py" line="194" />
        <source>Add documents…</source>
        <translation>添加文档…</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="128" />
        <source>Summarize</source>
        <translation>摘要</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="130" />
        <source>Settings…</source>
        <translation>设置…</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="142" />
        <location filename="../main_window.py" line="192" />
        <source>Filter documents</source>
        <translation>筛选文档</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="143" />
        <source>Re-index</source>
        <translation>重新索引</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="145" />
        <source>Show in folder</source>
        <translation>在文件夹中显示</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="148" />
        <source>Remove from library</source>
        <translation>从文档库移除</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="150" />
        <source>Quit</source>
        <translation>退出</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="151" />
        <source>New chat</source>
        <translation>新对话</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="152" />
        <source>Ask a question</source>
        <translation>提问</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="153" />
        <location filename="../main_window.py" line="199" />
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="156" />
        <source>Doctor's report</source>
        <translation>诊断报告</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="157" />
        <location filename="../main_window.py" line="310" />
        <source>About DocDesk</source>
        <translation>关于 DocDesk</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="158" />
        <source>Models…</source>
        <translation>模型…</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="171" />
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="172" />
        <source>&amp;Chat</source>
        <translation>对话(&amp;C)</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="173" />
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="193" />
        <source>Documents</source>
        <translation>文档</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="195" />
        <source>Chats</source>
        <translation>对话列表</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="196" />
        <source>Conversation</source>
        <translation>对话内容</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="197" />
        <source>Question</source>
        <translation>问题</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="198" />
        <source>Send</source>
        <translation>发送</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="200" />
        <source>Only the selected documents</source>
        <translation>仅限选中的文档</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="201" />
        <source>Show retrieved passages</source>
        <translation>查看检索到的段落</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="202" />
        <source>Engine status</source>
        <translation>引擎状态</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="203" />
        <source>Library status</source>
        <translation>文档库状态</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="250" />
        <source>DocDesk stopped unexpectedly</source>
        <translation>DocDesk 意外退出</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="253" />
        <source>⚠ DocDesk stopped unexpectedly last time</source>
        <translation>⚠ DocDesk 上次意外退出</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="291" />
        <source>Add documents</source>
        <translation>添加文档</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="293" />
        <source>Documents (%1);;All files (*)</source>
        <translation>文档 (%1);;所有文件 (*)</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="309" />
        <source>DocDesk %1: ask your documents, with answers that cite the page they come from. Everything stays on this computer.</source>
        <translation>DocDesk %1：向你的文档提问，回答注明出自哪一页。所有内容都留在这台电脑上。</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="319" />
        <source>Select a document first</source>
        <translation>请先选择文档</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="330" />
        <source>Select a document to summarize</source>
        <translation>请先选择要摘要的文档</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="348" />
        <source>DocDesk could not start again: start it yourself.</source>
        <translation>DocDesk 无法自动重启：请手动启动。</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="352" />
        <source>Stopping…</source>
        <translation>正在停止…</translation>
    </message>
</context>
<context>
    <name>ModelsDialog</name>
    <message>
        <location filename="../models_dialog.py" line="45" />
        <source>Models</source>
        <translation>模型</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="52" />
        <source>Checking this computer…</source>
        <translation>正在检查这台电脑…</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="55" />
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="55" />
        <source>Card</source>
        <translation>显卡</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="55" />
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="55" />
        <source>Licence</source>
        <translation>许可证</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="55" />
        <source>Thinks</source>
        <translation>思考</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="57" />
        <source>On this computer</source>
        <translation>在这台电脑上</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="78" />
        <source>Cancel download</source>
        <translation>取消下载</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="88" />
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="89" />
        <source>Use</source>
        <translation>使用</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="90" />
        <source>Use a GGUF file I have…</source>
        <translation>使用我已有的 GGUF 文件…</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="151" />
        <source>always</source>
        <translation>总是</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="151" />
        <source>on or off</source>
        <translation>可开可关</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="152" />
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="160" />
        <source>Reading its header…</source>
        <translation>正在读取文件头…</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="177" />
        <source>%1 (%2 GiB)</source>
        <translation>%1（%2 GiB）</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="180" />
        <source>no GPU that llama.cpp can use here</source>
        <translation>这里没有 llama.cpp 能用的 GPU</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="183" />
        <source>This computer: %1; %2 GiB memory; memory bandwidth measured here: %3 GB/s.</source>
        <translation>这台电脑：%1；内存 %2 GiB；在此测得的内存带宽：%3 GB/s。</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="193" />
        <source>Unknown: %1</source>
        <translation>未知：%1</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="193" />
        <source>Unknown: the Hub cannot be reached from here</source>
        <translation>未知：这里无法连接 Hub</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="196" />
        <source>Fits: %1 tokens of context, %2 answers at once</source>
        <translation>可以运行：上下文 %1 个词元，可同时回答 %2 个问题</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="197" />
        <source>Fits with a short context: %1 tokens, one answer at a time</source>
        <translation>只能用较短的上下文：%1 个词元，一次回答一个问题</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="198" />
        <source>Does not fit: needs %3 GiB of GPU memory, the card has %4 GiB</source>
        <translation>放不下：需要 %3 GiB 显存，显卡只有 %4 GiB</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="199" />
        <source>CPU only: at most about %5 tokens/s</source>
        <translation>仅用 CPU：最多约每秒 %5 个词元</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="200" />
        <source>Does not fit: needs %3 GiB of memory, %4 GiB are free for it</source>
        <translation>放不下：需要 %3 GiB 内存，可用的只有 %4 GiB</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="230" />
        <source>Asking the Hub for %1…</source>
        <translation>正在向 Hub 查询 %1…</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="248" />
        <source>Checking the file's sha256 against the Hub's…</source>
        <translation>正在将文件的 sha256 与 Hub 上的核对…</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="249" />
        <source>%1 of %2 GB · %3 MB/s</source>
        <translation>%1 / %2 GB · %3 MB/s</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="253" />
        <source>%1 left</source>
        <translation>剩余 %1</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="258" />
        <source>Downloaded and checked: %1</source>
        <translation>已下载并校验：%1</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="264" />
        <source>Download cancelled; the part already downloaded is kept for next time.</source>
        <translation>下载已取消；已下载的部分会保留，下次接着下载。</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="265" />
        <source>Download failed: %1</source>
        <translation>下载失败：%1</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="285" />
        <source>DocDesk now uses %1.</source>
        <translation>DocDesk 现在使用 %1。</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="288" />
        <source>Choose a GGUF model</source>
        <translation>选择 GGUF 模型</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="305" />
        <source>DocDesk now uses %1: %2</source>
        <translation>DocDesk 现在使用 %1：%2</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="307" />
        <source>Warning: %1</source>
        <translation>注意：%1</translation>
    </message>
    <message>
        <location filename="../models_dialog.py" line="310" />
        <source>Not used: %1</source>
        <translation>未使用：%1</translation>
    </message>
</context>
<context>
    <name>Pages</name>
    <message>
        <location filename="../transcript.py" line="91" />
        <source>p. %1</source>
        <translation>第 %1 页</translation>
    </message>
</context>
<context>
    <name>ServeController</name>
    <message>
        <location filename="../serve_controller.py" line="48" />
        <source>⚠ Not serving editors</source>
        <translation>⚠ 未向编辑器开放</translation>
    </message>
    <message>
        <location filename="../serve_controller.py" line="51" />
        <source>a token is required</source>
        <translation>需要令牌</translation>
    </message>
    <message>
        <location filename="../serve_controller.py" line="52" />
        <source>no token: this computer only</source>
        <translation>无令牌：仅限本机</translation>
    </message>
    <message>
        <location filename="../serve_controller.py" line="53" />
        <source>Serving editors at %1</source>
        <translation>已向编辑器开放：%1</translation>
    </message>
    <message>
        <location filename="../serve_controller.py" line="54" />
        <source>OpenAI-compatible endpoint, model "docdesk" · %1</source>
        <translation>OpenAI 兼容接口，模型 "docdesk" · %1</translation>
    </message>
</context>
<context>
    <name>SettingsController</name>
    <message>
        <location filename="../settings_controller.py" line="61" />
        <source>Settings saved to %1</source>
        <translation>设置已保存到 %1</translation>
    </message>
    <message>
        <location filename="../settings_controller.py" line="64" />
        <source>Chat template replaced</source>
        <translation>聊天模板已替换</translation>
    </message>
    <message>
        <location filename="../settings_controller.py" line="89" />
        <source>Model not used</source>
        <translation>未使用该模型</translation>
    </message>
    <message>
        <location filename="../settings_controller.py" line="99" />
        <source>Restart DocDesk?</source>
        <translation>重启 DocDesk？</translation>
    </message>
    <message>
        <location filename="../settings_controller.py" line="100" />
        <source>The new interface language or library folder is used from the next start. Restart DocDesk now?</source>
        <translation>新的界面语言或文档库文件夹将在下次启动时生效。现在重启 DocDesk 吗？</translation>
    </message>
    <message>
        <location filename="../settings_controller.py" line="104" />
        <source>Restart now</source>
        <translation>立即重启</translation>
    </message>
    <message>
        <location filename="../settings_controller.py" line="105" />
        <source>Later</source>
        <translation>稍后</translation>
    </message>
    <message>
        <location filename="../settings_controller.py" line="116" />
        <source>The change takes effect when DocDesk starts again</source>
        <translation>更改将在 DocDesk 下次启动时生效</translation>
    </message>
    <message>
        <location filename="../settings_controller.py" line="119" />
        <source>Testing…</source>
        <translation>测试中…</translation>
    </message>
    <message>
        <location filename="../settings_controller.py" line="125" />
        <source>%1 tokens/s · first token %2 ms · %3: “%4”</source>
        <translation>%1 词元/秒 · 首词元 %2 毫秒 · %3：“%4”</translation>
    </message>
    <message>
        <location filename="../settings_controller.py" line="132" />
        <source>Failed: %1</source>
        <translation>失败：%1</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <location filename="../settings_dialog.py" line="53" />
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="146" />
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="97" />
        <source>Backend</source>
        <translation>推理后端</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="56" />
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="58" />
        <source>Serve to editors</source>
        <translation>对编辑器开放</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="64" />
        <source>Drop documents onto the window (%1), then ask questions. Answers cite the page they come from. Everything stays on this computer.</source>
        <translation>把文档拖入窗口（%1），然后提问。回答会注明出处页码。所有内容都留在这台电脑上。</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="99" />
        <source>Test</source>
        <translation>测试</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="175" />
        <source>Library folder</source>
        <translation>文档库文件夹</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="176" />
        <source>Embedding model</source>
        <translation>嵌入模型</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="177" />
        <source>Interface language</source>
        <translation>界面语言</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="57" />
        <source>Library</source>
        <translation>文档库</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="222" />
        <source>Check this machine</source>
        <translation>检查本机</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="59" />
        <source>Doctor</source>
        <translation>诊断</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="91" />
        <source>Models…</source>
        <translation>模型…</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="92" />
        <source>Get a model that fits this computer, or use a GGUF file you have</source>
        <translation>获取适合这台电脑的模型，或使用你已有的 GGUF 文件</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="170" />
        <source>bundled: MiniLM with the multilingual USE</source>
        <translation>内置：MiniLM 与多语言 USE</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="178" />
        <source>A new library folder or language takes effect after a restart (DocDesk offers one); a new model loads at once.</source>
        <translation>新的文档库文件夹或界面语言在重启后生效（DocDesk 会提示重启）；新模型会立即加载。</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="186" />
        <source>Serve the library to editors while DocDesk is open</source>
        <translation>DocDesk 打开时，向编辑器开放文档库</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="190" />
        <source>none: only programs on this computer can connect</source>
        <translation>无：只有本机上的程序可以连接</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="191" />
        <source>New token</source>
        <translation>生成新令牌</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="196" />
        <source>Let other computers connect (needs a token)</source>
        <translation>允许其他电脑连接（需要令牌）</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="203" />
        <source>Port</source>
        <translation>端口</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="204" />
        <source>Token</source>
        <translation>令牌</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="211" />
        <source>Point an OpenAI-compatible editor plugin at %1 with the model "docdesk".</source>
        <translation>在兼容 OpenAI 接口的编辑器插件中填写地址 %1，模型填写 "docdesk"。</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="216" />
        <source>Other computers can connect only with a token: set one.</source>
        <translation>其他电脑必须凭令牌连接：请设置一个令牌。</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="230" />
        <source>Choose a GGUF model</source>
        <translation>选择 GGUF 模型</translation>
    </message>
    <message>
        <location filename="../settings_dialog.py" line="232" />
        <source>Choose a program</source>
        <translation>选择程序</translation>
    </message>
</context>
<context>
    <name>SummaryController</name>
    <message>
        <location filename="../summary_controller.py" line="53" />
        <source>Only indexed documents can be summarized</source>
        <translation>只能为已索引的文档生成摘要</translation>
    </message>
    <message>
        <location filename="../summary_controller.py" line="78" />
        <source>Stopped. Finished blocks are kept: summarize again to resume.</source>
        <translation>已停止。已完成的块会保留：再次摘要即可继续。</translation>
    </message>
    <message>
        <location filename="../summary_controller.py" line="82" />
        <source>Summary failed: %1</source>
        <translation>摘要失败：%1</translation>
    </message>
</context>
<context>
    <name>SummaryPanel</name>
    <message>
        <location filename="../summary_panel.py" line="39" />
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../summary_panel.py" line="44" />
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <location filename="../summary_panel.py" line="46" />
        <source>Save as Markdown…</source>
        <translation>另存为 Markdown…</translation>
    </message>
    <message>
        <location filename="../summary_panel.py" line="66" />
        <source>Summary: %1</source>
        <translation>摘要：%1</translation>
    </message>
    <message>
        <location filename="../summary_panel.py" line="67" />
        <source>Summarizing…</source>
        <translation>正在生成摘要…</translation>
    </message>
    <message>
        <location filename="../summary_panel.py" line="79" />
        <source>blocks</source>
        <translation>块</translation>
    </message>
    <message>
        <location filename="../summary_panel.py" line="80" />
        <source>combining</source>
        <translation>汇总</translation>
    </message>
    <message>
        <location filename="../summary_panel.py" line="82" />
        <source>about %1 s left</source>
        <translation>约剩 %1 秒</translation>
    </message>
    <message>
        <location filename="../summary_panel.py" line="83" />
        <source>%1 from cache</source>
        <translation>%1 个来自缓存</translation>
    </message>
    <message>
        <location filename="../summary_panel.py" line="92" />
        <source>from the cache</source>
        <translation>来自缓存</translation>
    </message>
    <message>
        <location filename="../summary_panel.py" line="94" />
        <source>Done in %1 s</source>
        <translation>用时 %1 秒完成</translation>
    </message>
    <message>
        <location filename="../summary_panel.py" line="106" />
        <source>Save summary</source>
        <translation>保存摘要</translation>
    </message>
</context>
<context>
    <name>Transcript</name>
    <message>
        <location filename="../transcript.py" line="116" />
        <source>Thinking… (%1 words)</source>
        <translation>思考中…（%1 个词）</translation>
    </message>
    <message>
        <location filename="../transcript.py" line="120" />
        <source>Thought for %1 s</source>
        <translation>思考了 %1 秒</translation>
    </message>
    <message>
        <location filename="../transcript.py" line="123" />
        <source>Thoughts</source>
        <translation>思考过程</translation>
    </message>
    <message>
        <location filename="../transcript.py" line="142" />
        <source>The selected documents fit: the model read them whole.</source>
        <translation>所选文档放得下：模型读取了完整文档。</translation>
    </message>
</context>
<context>
    <name>Backends</name>
    <message>
        <source>Bundled model (SmolLM2-135M, CPU)</source>
        <translation>自带模型（SmolLM2-135M，CPU）</translation>
    </message>
    <message>
        <source>A small model that comes with DocDesk: no download, no GPU needed.</source>
        <translation>DocDesk 自带的小模型：无需下载，无需 GPU。</translation>
    </message>
    <message>
        <source>Context length</source>
        <translation>上下文长度</translation>
    </message>
    <message>
        <source>tokens the model sees at once</source>
        <translation>模型一次能看到的词元数</translation>
    </message>
    <message>
        <source>model default</source>
        <translation>模型默认</translation>
    </message>
    <message>
        <source>CPU threads</source>
        <translation>CPU 线程数</translation>
    </message>
    <message>
        <source>threads that write the answer; automatic: measured for this machine</source>
        <translation>生成回答的线程数；自动：按本机实测选定</translation>
    </message>
    <message>
        <source>automatic</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>GGUF file (llama.cpp)</source>
        <translation>GGUF 文件（llama.cpp）</translation>
    </message>
    <message>
        <source>A model file of your own, run inside DocDesk.</source>
        <translation>你自己的模型文件，在 DocDesk 内运行。</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>a .gguf file</source>
        <translation>一个 .gguf 文件</translation>
    </message>
    <message>
        <source>GPU layers</source>
        <translation>GPU 层数</translation>
    </message>
    <message>
        <source>layers put on the GPU; 0: CPU only</source>
        <translation>放到 GPU 上的层数；0：只用 CPU</translation>
    </message>
    <message>
        <source>all</source>
        <translation>全部</translation>
    </message>
    <message>
        <source>CPU threads for prompts</source>
        <translation>读取提示的 CPU 线程数</translation>
    </message>
    <message>
        <source>threads that read the prompt; automatic: all cores</source>
        <translation>读取提示的线程数；自动：全部核心</translation>
    </message>
    <message>
        <source>Batch size</source>
        <translation>批大小</translation>
    </message>
    <message>
        <source>prompt tokens read per step</source>
        <translation>每步读取的提示词元数</translation>
    </message>
    <message>
        <source>Flash attention</source>
        <translation>Flash Attention</translation>
    </message>
    <message>
        <source>auto: on where a GPU is</source>
        <translation>自动：有 GPU 时开启</translation>
    </message>
    <message>
        <source>auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>on</source>
        <translation>开</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关</translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation>KV 缓存</translation>
    </message>
    <message>
        <source>q8_0 halves the cache's memory (needs flash attention)</source>
        <translation>q8_0 让缓存占用的内存减半（需要 Flash Attention）</translation>
    </message>
    <message>
        <source>Keep the model in memory (mlock)</source>
        <translation>把模型锁定在内存中（mlock）</translation>
    </message>
    <message>
        <source>never swap the model out</source>
        <translation>模型永不换出到磁盘</translation>
    </message>
    <message>
        <source>Repacked CPU weights</source>
        <translation>CPU 重排权重</translation>
    </message>
    <message>
        <source>llama.cpp's AMX/AVX layout; auto: off on AMX CPUs</source>
        <translation>llama.cpp 的 AMX/AVX 布局；自动：AMX CPU 上关闭</translation>
    </message>
    <message>
        <source>Thinking (reasoning models)</source>
        <translation>思考（推理模型）</translation>
    </message>
    <message>
        <source>Qwen3, QwQ, DeepSeek-R1: think before answering; the answer is kept apart from the thinking</source>
        <translation>Qwen3、QwQ、DeepSeek-R1：先思考再回答；回答与思考过程分开保存</translation>
    </message>
    <message>
        <source>Thinking budget</source>
        <translation>思考预算</translation>
    </message>
    <message>
        <source>tokens of thinking per answer at most</source>
        <translation>每个回答最多用于思考的词元数</translation>
    </message>
    <message>
        <source>no limit</source>
        <translation>不限</translation>
    </message>
    <message>
        <source>Prompt-lookup speculation</source>
        <translation>提示查找推测解码</translation>
    </message>
    <message>
        <source>drafts copied from the sources, checked in one pass: faster where answers quote (auto: as measured)</source>
        <translation>从来源中复制草稿并一次校验：回答引用原文时更快（自动：按实测）</translation>
    </message>
    <message>
        <source>GGUF file, several answers at once (llama-server, started by DocDesk)</source>
        <translation>GGUF 文件，多个回答同时进行（llama-server，由 DocDesk 启动）</translation>
    </message>
    <message>
        <source>DocDesk starts llama-server and stops it on exit.</source>
        <translation>DocDesk 启动 llama-server，并在退出时停止它。</translation>
    </message>
    <message>
        <source>empty: the bundled model</source>
        <translation>留空：使用自带模型</translation>
    </message>
    <message>
        <source>the bundled model</source>
        <translation>自带模型</translation>
    </message>
    <message>
        <source>llama-server program</source>
        <translation>llama-server 程序</translation>
    </message>
    <message>
        <source>empty: llama-server on PATH, else the one DocDesk built</source>
        <translation>留空：使用 PATH 中的 llama-server，否则使用 DocDesk 构建的</translation>
    </message>
    <message>
        <source>Parallel answers (llama-server)</source>
        <translation>并行回答数（llama-server）</translation>
    </message>
    <message>
        <source>answers run at once</source>
        <translation>同时进行的回答数</translation>
    </message>
    <message>
        <source>as many as fit</source>
        <translation>显存允许的最大数</translation>
    </message>
    <message>
        <source>Port</source>
        <translation>端口</translation>
    </message>
    <message>
        <source>the port llama-server listens on</source>
        <translation>llama-server 监听的端口</translation>
    </message>
    <message>
        <source>a free one</source>
        <translation>任一空闲端口</translation>
    </message>
    <message>
        <source>vLLM (started by DocDesk)</source>
        <translation>vLLM（由 DocDesk 启动）</translation>
    </message>
    <message>
        <source>DocDesk starts a vLLM server on the GPU and stops it on exit.</source>
        <translation>DocDesk 在 GPU 上启动 vLLM 服务器，并在退出时停止它。</translation>
    </message>
    <message>
        <source>a Hugging Face model id or folder</source>
        <translation>Hugging Face 模型 ID 或文件夹</translation>
    </message>
    <message>
        <source>vLLM's max_model_len</source>
        <translation>vLLM 的 max_model_len</translation>
    </message>
    <message>
        <source>vLLM options</source>
        <translation>vLLM 选项</translation>
    </message>
    <message>
        <source>key=value pairs of vLLM's settings</source>
        <translation>vLLM 设置的 键=值 对</translation>
    </message>
    <message>
        <source>OpenAI-compatible server</source>
        <translation>OpenAI 兼容服务器</translation>
    </message>
    <message>
        <source>A server that is already running (llama.cpp, vLLM, Ollama, LM Studio…).</source>
        <translation>一个已在运行的服务器（llama.cpp、vLLM、Ollama、LM Studio…）。</translation>
    </message>
    <message>
        <source>Server URL</source>
        <translation>服务器地址</translation>
    </message>
    <message>
        <source>where the server listens</source>
        <translation>服务器的监听地址</translation>
    </message>
    <message>
        <source>Model name</source>
        <translation>模型名</translation>
    </message>
    <message>
        <source>the model the server serves; empty: its first one</source>
        <translation>服务器提供的模型；留空：第一个</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <source>sent as a Bearer token; empty: none</source>
        <translation>作为 Bearer 令牌发送；留空：不发送</translation>
    </message>
    <message>
        <source>ask the server</source>
        <translation>询问服务器</translation>
    </message>
    <message>
        <source>Parallel answers</source>
        <translation>并行回答数</translation>
    </message>
    <message>
        <source>requests sent to the server at once</source>
        <translation>同时发给服务器的请求数</translation>
    </message>
    <message>
        <source>Connect timeout (s)</source>
        <translation>连接超时（秒）</translation>
    </message>
    <message>
        <source>Read timeout (s)</source>
        <translation>读取超时（秒）</translation>
    </message>
    <message>
        <source>longest wait for the next words</source>
        <translation>等待下一段文字的最长时间</translation>
    </message>
</context>
<context>
    <name>Formats</name>
    <message>
        <source>text</source>
        <translation>文本</translation>
    </message>
    <message>
        <source>images</source>
        <translation>图片</translation>
    </message>
    <message>
        <source>OpenDocument text</source>
        <translation>OpenDocument 文本</translation>
    </message>
    <message>
        <source>OpenDocument spreadsheet</source>
        <translation>OpenDocument 电子表格</translation>
    </message>
    <message>
        <source>OpenDocument presentation</source>
        <translation>OpenDocument 演示文稿</translation>
    </message>
    <message>
        <source>image</source>
        <translation>图片</translation>
    </message>
    <message>
        <source>, </source>
        <translation>、</translation>
    </message>
    <message>
        <source>%1 and %2</source>
        <translation>%1和%2</translation>
    </message>
</context>
</TS>