"""vLLM through DocDesk, on a GPU: DocDesk's own `vllm` backend starts vLLM as its child, then one
lease measures, against that one server and side by side:

- `vllm bench serve` direct (vLLM's own client, random prompts of exactly N tokens) and DocDesk's
  backend (its OpenAI client, the same generator of prompts, vLLM's RandomDataset) at each
  concurrency and prompt length, 256-token answers; every run draws its prompts with a seed of its
  own after a throw-away warm-up, and vLLM's prefix-cache counters (/metrics) are read around each
  run, so a figure that reused cached prompt tokens says so;
- the 117-page book's summary through the backend (--book-library);
- `docdesk serve` in front of the same server with 8 and 16 streaming clients, against DocDesk
  in process answering the same questions at the same concurrency (--serve-library: a library
  embedded with the tests' stand-in embedder, tests/standin_embedder.py, so no embedding model
  travels to the GPU machine);
- then close(): the whole process group gone, GPU memory back.

    python tests/bench/bench_vllm.py --model DIR --quantization gptq --load-format dummy \\
        --max-model-len 8192 --max-num-seqs 16 --gpu-memory-utilization 0.9 \\
        --prompt-tokens 1024 3000 --answer-tokens 256 --concurrency 1 4 8 16 --seed 1000 \\
        [--speculative-config JSON] [--book-library DIR] [--serve-library DIR] --out FILE

With `--load-format dummy` the weights are random: the figures are speed only, and the
summary's text is noise (each step runs to its token cap, so its time is an upper bound).
`--command` replaces vLLM with another OpenAI-compatible server for a dry run on a machine
without vLLM (then there is no direct `vllm bench serve` and no /metrics).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

# vLLM's log lines worth keeping beside the figures: what it chose and what it holds
LOG_FACTS = re.compile(
    r"quantiz|kernel|Model loading took|KV cache|attention backend|Using .*backend|CUDA graph|"
    r"torch.compile|speculative|ngram|maximum concurrency|draft acceptance|accept|"
    r"offloaded|model buffer size|n_ctx_slot|n_slots|flash_attn|compute capability",
    re.IGNORECASE,
)


# -- vLLM's own counters ----------------------------------------------------------------------------------
def counters(url: str) -> dict[str, float]:
    """The server's cumulative counters that matter here, vLLM's or llama-server's under the same
    names (an empty dict where there is no /metrics)."""
    wanted = {
        "llamacpp:prompt_tokens_total": "prompt_tokens",
        "llamacpp:tokens_predicted_total": "generation_tokens",
        "llamacpp:prompt_tokens_cached_total": "prefix_cache_hits",  # prompt tokens served from a slot's cache
        "llamacpp:spec_decode_num_draft_tokens_total": "draft_tokens",
        "llamacpp:spec_decode_num_accepted_tokens_total": "accepted_tokens",
        "vllm:prefix_cache_queries_total": "prefix_cache_queries",
        "vllm:prefix_cache_hits_total": "prefix_cache_hits",
        "vllm:prompt_tokens_total": "prompt_tokens",
        "vllm:generation_tokens_total": "generation_tokens",
        "vllm:spec_decode_num_draft_tokens_total": "draft_tokens",
        "vllm:spec_decode_num_accepted_tokens_total": "accepted_tokens",
    }
    try:
        text = urllib.request.urlopen(f"{url}/metrics", timeout=10).read().decode()
    except OSError:
        return {}
    found: dict[str, float] = {}
    for line in text.splitlines():
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in wanted:
            found[wanted[name]] = found.get(wanted[name], 0.0) + float(line.rsplit(" ", 1)[1])
    return found


def prompt_eval_rates(lines: list[str]) -> dict | None:
    """llama-server's own prefill timings ("prompt eval time = 812.3 ms / 1024 tokens"), so a slow
    first token can be told apart: the server's prefill, or time spent before it."""
    found = [re.search(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens", line) for line in lines]
    pairs = [(float(m[1]), int(m[2])) for m in found if m and int(m[2]) >= 256]
    if not pairs:
        return None
    rates = sorted(tokens / ms * 1000 for ms, tokens in pairs)
    return {
        "prompts": len(pairs), "tokens_per_s_p50": round(statistics.median(rates)),
        "tokens_per_s_min": round(rates[0]), "ms_max": round(max(ms for ms, _ in pairs)),
    }  # fmt: skip


def delta(before: dict[str, float], after: dict[str, float]) -> dict[str, int]:
    return {key: int(after[key] - before.get(key, 0.0)) for key in after}


def gpu_memory_used_mib() -> list[int]:
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=20, check=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return []
    return [int(v) for v in out.split()]


# -- prompts --------------------------------------------------------------------------------------------
def random_prompts(tokenizer, count: int, tokens: int, seed: int) -> list[str]:
    """`count` prompts of `tokens` tokens each: vLLM's RandomDataset (what `vllm bench serve
    --dataset-name random` sends) where vLLM is importable, else random token ids decoded."""
    try:
        from vllm.benchmarks.datasets import RandomDataset
    except ImportError:
        import random

        rng = random.Random(seed)
        size = tokenizer.vocab_size
        return [tokenizer.decode([rng.randrange(1000, size - 1000) for _ in range(tokens)]) for _ in range(count)]
    samples = RandomDataset(random_seed=seed).sample(
        tokenizer, count, input_len=tokens, output_len=256, range_ratio=0.0
    )
    return [s.prompt for s in samples]


def load_tokenizer(model: str):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model)


# -- the two clients ------------------------------------------------------------------------------------
def through_docdesk(backend, prompts: list[str], concurrency: int, answer_tokens: int) -> dict:
    """DocDesk's backend: `concurrency` threads, each streaming its prompts' answers."""
    from engine.backends.base import ChatRequest

    ttfts: list[float] = []
    tokens: list[int] = []
    lock = threading.Lock()

    def one(prompt: str) -> None:
        request = ChatRequest([{"role": "user", "content": prompt}], max_tokens=answer_tokens, temperature=0.0)
        started, first = time.perf_counter(), None
        for _ in backend.stream_chat(request):
            if first is None:
                first = time.perf_counter()
        with lock:
            ttfts.append(((first or time.perf_counter()) - started) * 1000)
            tokens.append(request.stats.completion_tokens)

    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, prompts))
    wall = time.perf_counter() - started
    return {
        "requests": len(prompts),
        "output_tokens": sum(tokens),
        "wall_s": round(wall, 2),
        "output_tps": round(sum(tokens) / wall, 1),
        "ttft_ms_p50": round(statistics.median(ttfts), 1),
        "ttft_ms_max": round(max(ttfts), 1),
        "tpot_ms_p50": None,  # DocDesk's client sees pieces, not tokens: per-token time from vLLM's bench only
    }


def through_vllm_bench(python: str, url: str, model: str, prompt_tokens: int, answer_tokens: int,
                       concurrency: int, count: int, seed: int) -> dict:  # fmt: skip
    """`vllm bench serve` against the running server: its own client, its random dataset."""
    with tempfile.TemporaryDirectory() as tmp:
        command = [
            python, "-m", "vllm.entrypoints.cli.main", "bench", "serve",
            "--backend", "openai-chat", "--base-url", url, "--endpoint", "/v1/chat/completions",
            "--model", model, "--tokenizer", model,
            "--dataset-name", "random", "--random-input-len", str(prompt_tokens),
            "--random-output-len", str(answer_tokens), "--random-range-ratio", "0",
            "--ignore-eos", "--temperature", "0", "--max-concurrency", str(concurrency),
            "--num-prompts", str(count), "--seed", str(seed), "--disable-tqdm",
            "--save-result", "--result-dir", tmp, "--result-filename", "bench.json",
        ]  # fmt: skip
        run = subprocess.run(command, capture_output=True, text=True, timeout=900)
        if run.returncode != 0:
            return {"error": f"vllm bench serve exited {run.returncode}: {run.stderr[-1500:]}"}
        result = json.loads((Path(tmp) / "bench.json").read_text())
    return {
        "requests": result.get("completed"),
        "output_tokens": result.get("total_output_tokens"),
        "wall_s": round(result.get("duration", 0.0), 2),
        "output_tps": round(result.get("output_throughput", 0.0), 1),
        "ttft_ms_p50": round(result.get("median_ttft_ms", 0.0), 1),
        "ttft_ms_max": round(max(result.get("ttfts") or [0.0]) * 1000, 1),
        "tpot_ms_p50": round(result.get("median_tpot_ms", 0.0), 2),
        "command": shlex.join(command[1:]).replace(tmp, "TMP"),
    }


# -- the book and the front door -------------------------------------------------------------------------
def book_summary(backend, library_dir: Path) -> dict:
    from tests.bench.bench_server import map_step

    return map_step(backend, library_dir, backend.max_concurrency)


def serve_config(folder: Path, url: str, model: str, slots: int, answer_tokens: int) -> Path:
    """A config.toml naming the running server as an OpenAI-compatible backend."""
    path = folder / "config.toml"
    path.write_text(
        f'[llm]\nbackend = "openai"\nurl = "{url}"\nmodel = "{model}"\nmax_concurrency = {slots}\n'
        f"read_timeout = 600\n\n[answers]\nanswer_tokens = {answer_tokens}\n",
        encoding="utf-8",
    )
    return path


def in_process_load(config: Path, library: Path, clients: int, seconds: float) -> dict:
    """DocDesk in process, `clients` threads asking the load test's questions for `seconds`: the
    same backend and library as `serve`, without the HTTP front door."""
    from app.desk.answering import final_answer
    from app.desk.services import DocDesk
    from app.desk.settings import load_settings
    from tests.bench.load_serve import QUESTIONS
    from tests.standin_embedder import HashingEmbedder

    desk = DocDesk(load_settings(config, str(library)), embedder=HashingEmbedder())
    ttfts: list[float] = []
    done = [0]
    errors: list[str] = []
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def client(n: int) -> None:
        i = n
        while time.monotonic() < end:
            question = QUESTIONS[i % len(QUESTIONS)]
            i += 1
            started, first = time.monotonic(), []

            def on_text(_piece: str, started=started, first=first) -> None:
                if not first:
                    first.append(time.monotonic() - started)

            try:
                final_answer(desk.answer(question, save_chat=False), on_text)
            except Exception as exc:  # counted, as the load test counts a failed request
                with lock:
                    errors.append(f"{type(exc).__name__}: {exc}"[:200])
                continue
            with lock:
                done[0] += 1
                ttfts.extend(v * 1000 for v in first)

    try:
        with ThreadPoolExecutor(clients) as pool:
            list(pool.map(client, range(clients)))
    finally:
        desk.close()
    ordered = sorted(ttfts)
    return {
        "clients": clients,
        "completed": done[0],
        "errors": errors[:5],
        "ttft_ms_p50": round(statistics.median(ordered), 1) if ordered else None,
        "ttft_ms_p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 1) if ordered else None,
    }


def front_door(url: str, model: str, library: Path, clients: list[int], seconds: float, slots: int,
               answer_tokens: int) -> dict:  # fmt: skip
    from tests.bench.load_serve import Server, run_load

    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        config = serve_config(Path(tmp), url, model, slots, answer_tokens)
        for n in clients:
            before = counters(url)
            started = time.perf_counter()
            direct = in_process_load(config, library, n, seconds)
            direct_wall = time.perf_counter() - started
            direct["generation_tokens"] = delta(before, counters(url)).get("generation_tokens")
            direct["wall_s"] = round(direct_wall, 1)
            server = Server(library, config=config, standin_embedder=True, queue=64)
            try:
                before = counters(url)
                started = time.perf_counter()
                served = run_load(server.url, n, seconds, server.process.pid).summary()
                served_wall = time.perf_counter() - started
                served["generation_tokens"] = delta(before, counters(url)).get("generation_tokens")
                served["wall_s"] = round(served_wall, 1)
            finally:
                served["server_exit"] = server.stop()
            for run in (direct, served):
                tokens = run.get("generation_tokens")
                run["output_tps"] = round(tokens / run["wall_s"], 1) if tokens else None
            ratio = (
                served["output_tps"] / direct["output_tps"] if served["output_tps"] and direct["output_tps"] else None
            )
            added = (
                round(served["ttft_ms_p50"] - direct["ttft_ms_p50"], 1)
                if served.get("ttft_ms_p50") is not None and direct.get("ttft_ms_p50") is not None
                else None
            )
            runs.append({
                "clients": n, "in_process": direct, "serve": served,
                "serve_tps_share": round(ratio, 3) if ratio else None, "serve_adds_ttft_p50_ms": added,
            })  # fmt: skip
    return {"seconds_each": seconds, "answer_tokens": answer_tokens, "runs": runs}


# -- main ------------------------------------------------------------------------------------------------
def start_llama_server(args, logs: Path):
    """The same measures through DocDesk's llama_server backend (--gguf): llama.cpp beside vLLM."""
    from engine.backends.llama_server import LlamaServer, LlamaServerSettings

    settings = LlamaServerSettings(
        args.gguf, args.llama_server, slots=args.max_num_seqs, context=args.max_model_len,
        kv_cache=args.kv_cache, flash_attention=True, extra_args=list(args.extra_arg), startup_timeout=900,
    )  # fmt: skip
    return LlamaServer(settings, logs).start()


def start_backend(args, logs: Path):
    from engine.backends import LlmSettings, create_backend

    if args.gguf:
        return start_llama_server(args, logs)

    extra = ["--load-format", args.load_format, "--seed", str(args.seed)] if args.load_format else []
    if args.speculative_config:
        extra += ["--speculative-config", args.speculative_config]
    vllm = {
        "max_num_seqs": args.max_num_seqs,
        "gpu_memory_utilization": args.gpu_memory_utilization,
        "quantization": args.quantization,
        "extra_args": extra + list(args.extra_arg),
        "startup_timeout": 900,
    }
    if args.command:
        vllm["command"] = shlex.split(args.command)
    settings = LlmSettings(backend="vllm", model=str(args.model), context=args.max_model_len, vllm=vllm)
    return create_backend(settings, log_dir=logs)


def save_partial(out: Path, report: dict, log: Path) -> None:
    """The report so far, marked partial, with the server log's last lines (what a cut-short run
    needs to be understood), written where the whole report will go."""
    try:
        tail = log.read_text(errors="replace").splitlines()[-40:]
    except OSError:
        tail = []
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = {**report, "partial": "written after each row; the run had not finished", "server_log_tail": tail}
    out.write_text(json.dumps(partial, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True, help="a model folder (config.json, tokenizer)")
    parser.add_argument("--quantization", help="vLLM's --quantization (default: as the config says)")
    parser.add_argument("--load-format", help="e.g. dummy: random weights, speed only")
    parser.add_argument("--max-model-len", type=int, required=True)
    parser.add_argument("--max-num-seqs", type=int, required=True)
    parser.add_argument("--gpu-memory-utilization", type=float, required=True)
    parser.add_argument("--speculative-config", help="vLLM's --speculative-config JSON, e.g. ngram")
    parser.add_argument("--extra-arg", action="append", default=[], help="one more vLLM argument (repeatable)")
    parser.add_argument("--prompt-tokens", type=int, nargs="+", required=True)
    parser.add_argument("--answer-tokens", type=int, required=True)
    parser.add_argument("--concurrency", type=int, nargs="*", required=True, help="none: only the serve part")
    parser.add_argument("--rounds", type=int, default=2, help="prompts per run: rounds x concurrency (at least 2)")
    parser.add_argument("--seed", type=int, required=True, help="the first run's seed; each run takes its own")
    parser.add_argument("--book-library", type=Path)
    parser.add_argument("--serve-library", type=Path, help="a library embedded with the stand-in embedder")
    parser.add_argument("--serve-clients", type=int, nargs="+", default=[8, 16])
    parser.add_argument("--serve-seconds", type=float, default=30)
    parser.add_argument("--serve-answer-tokens", type=int, default=256)
    parser.add_argument("--gguf", type=Path, help="measure DocDesk's llama_server backend on this GGUF instead")
    parser.add_argument("--llama-server", help="with --gguf: the llama-server executable")
    parser.add_argument("--kv-cache", choices=["f16", "q8_0"], default="f16", help="with --gguf")
    parser.add_argument("--command", help="a dry run: this OpenAI-compatible server instead of vLLM")
    parser.add_argument("--no-direct", action="store_true", help="skip `vllm bench serve`")
    parser.add_argument("--weights", help="what the weights are, for the report (e.g. random: speed only)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)

    logs = Path(tempfile.mkdtemp(prefix="docdesk-vllm-logs-"))
    report: dict = {
        "bench": "tests/bench/bench_vllm.py",
        "argv": sys.argv[1:] if argv is None else argv,
        "weights": args.weights
        or ("random (--load-format dummy): speed only" if args.load_format == "dummy" else "real"),
        "gpu_memory_before_mib": gpu_memory_used_mib(),
    }
    try:
        import vllm

        report["vllm"] = vllm.__version__
    except ImportError:
        report["vllm"] = None
    started = time.perf_counter()
    backend = start_backend(args, logs)
    report["startup_s"] = round(time.perf_counter() - started, 1)
    url = backend.url
    report["command"] = shlex.join(backend.command)
    seed = args.seed
    try:
        tokenizer = load_tokenizer(str(args.model))
        # A throw-away warm-up (CUDA graphs, compiled kernels), with prompts of its own seed.
        widest = max(args.concurrency, default=max(args.serve_clients))
        warm = random_prompts(tokenizer, widest, max(args.prompt_tokens), seed)
        through_docdesk(backend, warm, widest, 16)
        seed += 1
        runs = []
        for length in args.prompt_tokens:
            for concurrency in args.concurrency:
                count = max(2, args.rounds * concurrency)
                row: dict = {"prompt_tokens": length, "concurrency": concurrency, "requests": count}
                if not args.no_direct and report["vllm"] and not args.gguf:
                    before = counters(url)
                    row["vllm_bench_serve"] = through_vllm_bench(
                        sys.executable, url, str(args.model), length, args.answer_tokens, concurrency, count, seed
                    )
                    row["vllm_bench_serve"]["vllm_counters"] = delta(before, counters(url))
                    seed += 1
                before = counters(url)
                prompts = random_prompts(tokenizer, count, length, seed)
                seed += 1
                row["docdesk_backend"] = through_docdesk(backend, prompts, concurrency, args.answer_tokens)
                row["docdesk_backend"]["vllm_counters"] = delta(before, counters(url))
                print(json.dumps(row), flush=True)
                runs.append(row)
                report["runs"] = runs
                save_partial(args.out, report, backend.log_path)  # a lease that ends mid-run still leaves these
        report["runs"] = runs
        if args.book_library:
            before = counters(url)
            report["book_summary"] = book_summary(backend, args.book_library)
            report["book_summary"]["vllm_counters"] = delta(before, counters(url))
            print(json.dumps(report["book_summary"]), flush=True)
        if args.serve_library:
            report["serve"] = front_door(
                url, backend.model or str(args.model), args.serve_library, args.serve_clients,
                args.serve_seconds, args.max_num_seqs, args.serve_answer_tokens,
            )  # fmt: skip
            print(json.dumps(report["serve"]), flush=True)
        report["speculative_counters_total"] = {
            k: v for k, v in counters(url).items() if k in ("draft_tokens", "accepted_tokens")
        }
    finally:
        log = backend.log_path
        process = backend._process
        started = time.perf_counter()
        backend.close()
        report["close_s"] = round(time.perf_counter() - started, 1)
        if process is not None:
            import os

            try:
                os.killpg(process.pid, 0)
                report["process_group_left"] = True
            except ProcessLookupError:
                report["process_group_left"] = False
        time.sleep(2)
        report["gpu_memory_after_mib"] = gpu_memory_used_mib()
        try:
            lines = log.read_text(errors="replace").splitlines()
            report["vllm_log_facts"] = [line[-300:] for line in lines if LOG_FACTS.search(line)][:40]
            report["vllm_log_tail"] = lines[-15:]
            # llama-server's per-answer speculation line: "draft acceptance = ... (A accepted / G generated)"
            drafts = [re.search(r"\(\s*(\d+) accepted /\s*(\d+) generated\)", line) for line in lines]
            drafts = [(int(m[1]), int(m[2])) for m in drafts if m]
            prefill = prompt_eval_rates(lines)
            if prefill:
                report["log_prompt_eval"] = prefill
            if drafts:
                report["log_drafts"] = {"accepted": sum(a for a, _ in drafts), "drafted": sum(g for _, g in drafts)}
        except OSError:
            pass
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        if "vllm_log_tail" not in report:  # nothing read from it: no log worth keeping
            shutil.rmtree(logs, ignore_errors=True)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
