# DocDesk: `make run` starts it, `make test` runs the whole suite, `make test-fast` the part that
# needs no model, GPU, window or child process (a few minutes). They set up .venv themselves, from
# requirements.lock (every package pinned, with hashes); `make lock` refreshes the lock.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

# llama-cpp-python is built for this machine: CUDA for the compute capability nvidia-smi reports
# (7.0 -> sm_70 for a V100), the CPU otherwise. `make run GPU=cpu` forces the CPU build;
# `make -n run` shows the flags. Each build is kept under ~/.cache/docdesk/wheels.
GPU ?= auto
CUDA_ARCHS := $(if $(filter cpu,$(GPU)),,$(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null \
	| tr -d ' .' | grep -E '^[0-9]+$$' | sort -u | paste -sd';'))
# The CUDA compiler must build for every card: CUDA 13 cannot compile for a V100 (sm_70), so
# packaging/cuda_toolchain.py picks one that can (DOCDESK_NVCC, CUDACXX, PATH, /usr/local/cuda*)
# or says what to install, and make stops before compiling. `make NVCC=path` names one.
TOOLCHAIN := $(PYTHON) packaging/cuda_toolchain.py --archs "$(CUDA_ARCHS)"
ifeq ($(origin NVCC),command line)
TOOLCHAIN += --only "$(NVCC)"
endif
NVCC_CHOSEN := $(if $(CUDA_ARCHS),$(shell $(TOOLCHAIN) --print nvcc))
NVCC_ERROR := $(if $(CUDA_ARCHS),$(if $(NVCC_CHOSEN),,$(shell $(TOOLCHAIN) --print error)))
LLAMA_CMAKE_ARGS := -DLLAVA_BUILD=OFF
LLAMA_FLAVOUR := cpu
LLAMA_NOTE := llama-cpp-python: CPU build
ifneq ($(CUDA_ARCHS),)
ifneq ($(NVCC_CHOSEN),)
LLAMA_CMAKE_ARGS := -DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=$(CUDA_ARCHS) -DLLAVA_BUILD=OFF
LLAMA_FLAVOUR := cuda-sm$(subst ;,-,$(CUDA_ARCHS))
LLAMA_NOTE := llama-cpp-python: CUDA build for sm_$(CUDA_ARCHS) (nvcc: $(shell $(TOOLCHAIN) --print note))
export CUDACXX := $(NVCC_CHOSEN)
else ifneq ($(NVCC_ERROR),)
LLAMA_FLAVOUR := cuda-unbuildable
LLAMA_ERROR := $(NVCC_ERROR)
else
LLAMA_NOTE := llama-cpp-python: CPU build. An NVIDIA GPU is here but nvcc is not: install the CUDA toolkit \
(NVIDIA's cuda-toolkit package, or Debian/Ubuntu nvidia-cuda-toolkit) and run make again for GPU speed
endif
endif
# Stop within seconds, before any venv or compiler runs; `make llama-flags` still says why.
ifneq ($(LLAMA_ERROR),)
ifneq ($(filter-out llama-flags clean lock,$(or $(MAKECMDGOALS),run)),)
$(error $(LLAMA_ERROR))
endif
endif
INSTALLED := $(VENV)/.installed-$(LLAMA_FLAVOUR)

# The lock is the resolution for CPython $(LOCK_PYTHON) on Linux x86-64 (what CI and `make dist` use).
LOCK_PYTHON := 3.11
UV := uv==0.13.9
LOCK_FIND_LINKS = $(shell $(PYTHON) -m pip config get global.find-links 2>/dev/null)
TORCH_SOURCE = $(if $(LOCK_FIND_LINKS),$(addprefix --find-links ,$(LOCK_FIND_LINKS)),--extra-index-url https://download.pytorch.org/whl/cpu)

.PHONY: run test test-fast lint bench eval clean samples screenshots dist dist-test wheel-test lock llama-flags llama-server

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(INSTALLED): requirements.lock pyproject.toml packaging/install_locked.py | $(BIN)/python
	@echo "$(LLAMA_NOTE)"
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python packaging/install_locked.py --flavour $(LLAMA_FLAVOUR) --python $(LOCK_PYTHON)
	rm -f $(VENV)/.installed-*
	touch $@

run: $(INSTALLED)
	@echo "$(LLAMA_NOTE); CMAKE_ARGS=$(LLAMA_CMAKE_ARGS)"
	$(BIN)/docdesk

# llama.cpp's own server (the llama_server backend), built from the llama.cpp that the locked
# llama-cpp-python vendors, with the same flags, into ~/.cache/docdesk/llama-server/.
llama-server: $(INSTALLED)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python packaging/install_locked.py --llama-server --flavour $(LLAMA_FLAVOUR)

llama-flags:  # what this machine's llama-cpp-python build gets: flavour, then CMake flags (the compiler on stderr)
	@if [ -n "$(LLAMA_ERROR)" ]; then echo "$(LLAMA_ERROR)" >&2; exit 2; fi
	@echo "$(LLAMA_FLAVOUR) $(LLAMA_CMAKE_ARGS)"
	@echo "$(LLAMA_NOTE)" >&2

lock: | $(BIN)/python
	$(BIN)/python -m pip install --quiet "$(UV)"
	$(BIN)/uv pip compile pyproject.toml packaging/tools.in --extra dev --generate-hashes --upgrade \
		--python-version $(LOCK_PYTHON) --python-platform x86_64-manylinux_2_28 $(TORCH_SOURCE) \
		--no-emit-find-links --no-emit-index-url --custom-compile-command "make lock" -o requirements.lock

lint: $(INSTALLED)
	$(BIN)/ruff check app engine ingest tests packaging
	$(BIN)/lint-imports

test: lint llama-server
	@echo "$(LLAMA_NOTE); CMAKE_ARGS=$(LLAMA_CMAKE_ARGS)"
	$(BIN)/python -m pytest

# The tests that need no model, GPU, window or child process (markers set from the fixtures a test
# uses: tests/markers.py). Only the venv is needed (installed if missing, not refreshed: `make test`
# does that), no lint or llama-server build.
FAST_TESTS := not models and not gpu and not gui and not subprocess and not slow
test-fast:
	@ls $(VENV)/.installed-* >/dev/null 2>&1 || $(MAKE) $(INSTALLED)
	$(BIN)/python -m pytest -m "$(FAST_TESTS)"

bench: $(INSTALLED)
	$(BIN)/python tests/bench/bench_ingest.py
	$(BIN)/python tests/bench/bench_search.py
	$(BIN)/python tests/bench/bench_backends.py
	$(BIN)/python tests/bench/bench_sampling.py
	$(BIN)/python tests/bench/bench_answer.py
	$(BIN)/python tests/bench/bench_summarize.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python tests/bench/bench_gui.py

eval: $(INSTALLED)
	$(BIN)/python tests/eval/eval_retrieval.py
	$(BIN)/python tests/eval/eval_heldout.py --split both --json tests/eval/results/heldout-sets.json
	$(BIN)/python tests/eval/calibrate_relevance.py
	$(BIN)/python tests/eval/eval_answers.py

samples: $(INSTALLED)
	$(BIN)/python assets/samples/make_samples.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build dist *.egg-info

screenshots: $(INSTALLED)
	apt-get install -y -qq xvfb fonts-noto-cjk libxcb-icccm4 libxcb-cursor0 libxcb-keysyms1 libxcb-image0 \
		libxcb-render-util0 libxcb-xkb1 libxkbcommon-x11-0 libxcb-shape0 libxcb-randr0 libegl1
	xvfb-run -a -s "-screen 0 1366x768x24" $(BIN)/python assets/screenshots/take_screenshots.py en
	xvfb-run -a -s "-screen 0 1366x768x24" $(BIN)/python assets/screenshots/take_screenshots.py zh

dist: $(INSTALLED)
	$(BIN)/pyinstaller --noconfirm --log-level WARN --distpath dist --workpath build packaging/docdesk.spec

dist-test: dist
	bash packaging/test_dist.sh dist/DocDesk

# The wheel as pip users get it: built with its sdist from the checkout's files, checked to hold every
# package and the translations, installed with the lock into a new venv, then `docdesk --version`,
# `serve` and `mcp` run from outside the checkout (packaging/test_wheel.sh; a few minutes).
wheel-test: $(INSTALLED)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" BUILD_PYTHON=$(BIN)/python VENV_PYTHON=$(PYTHON) LLAMA_FLAVOUR=$(LLAMA_FLAVOUR) \
		LOCK_PYTHON=$(LOCK_PYTHON) bash packaging/test_wheel.sh
