# DocDesk: `make run` starts it, `make test` runs the whole suite. Both set up .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The CPU build of torch: embeddings run on the CPU, and an unpinned torch pulls a multi-GB CUDA build.
TORCH ?= torch==2.13.0
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: run test lint bench eval clean samples screenshots dist dist-test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet "$(TORCH)"
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $@

run: $(VENV)/.installed
	$(BIN)/docdesk

lint: $(VENV)/.installed
	$(BIN)/ruff check app engine ingest tests
	$(BIN)/lint-imports

test: lint
	$(BIN)/python -m pytest

bench: $(VENV)/.installed
	$(BIN)/python tests/bench/bench_ingest.py
	$(BIN)/python tests/bench/bench_search.py
	$(BIN)/python tests/bench/bench_backends.py
	$(BIN)/python tests/bench/bench_answer.py
	$(BIN)/python tests/bench/bench_summarize.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python tests/bench/bench_gui.py

eval: $(VENV)/.installed
	$(BIN)/python tests/eval/eval_retrieval.py
	$(BIN)/python tests/eval/calibrate_relevance.py
	$(BIN)/python tests/eval/eval_answers.py

samples: $(VENV)/.installed
	$(BIN)/python assets/samples/make_samples.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build dist *.egg-info

screenshots: $(VENV)/.installed
	apt-get install -y -qq xvfb fonts-noto-cjk libxcb-icccm4 libxcb-cursor0 libxcb-keysyms1 libxcb-image0 \
		libxcb-render-util0 libxcb-xkb1 libxkbcommon-x11-0 libxcb-shape0 libxcb-randr0 libegl1
	xvfb-run -a -s "-screen 0 1440x900x24" $(BIN)/python assets/screenshots/take_screenshots.py en
	xvfb-run -a -s "-screen 0 1440x900x24" $(BIN)/python assets/screenshots/take_screenshots.py zh

dist: $(VENV)/.installed
	$(BIN)/pip install --quiet "pyinstaller>=6.10"
	$(BIN)/pyinstaller --noconfirm --log-level WARN --distpath dist --workpath build packaging/docdesk.spec

dist-test: dist
	bash packaging/test_dist.sh dist/DocDesk
