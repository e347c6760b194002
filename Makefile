# MBS Studio — `make run` opens the GUI, `make test` runs the whole suite headless.
# Both create .venv and install everything needed on a fresh Debian machine with Python 3.11.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
SAMPLE ?= sample_models/slider_crank.mbs.json

.PHONY: all setup run test test-fast bench contract clean

all: test

$(STAMP): pyproject.toml tools/system-libs.sh
	bash tools/system-libs.sh
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@# the model-independent compiled code (solver.codegen.build.runtime_library) built once now, so that a
	@# model's first run compiles only its own kernels
	$(PY) -c "from solver.codegen.build import runtime_library; runtime_library()" \
	    || echo "generated kernels unavailable (no C compiler?): runs use the generic path"
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	bash tools/system-libs.sh --desktop
	$(VENV)/bin/mbs-studio $(SAMPLE)

# --dist worksteal: a worker that runs out of tests takes queued ones from the other (the slow tests
# no longer leave one core idle at the end)
test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -p no:cacheprovider -n 2 --dist worksteal -m "not sweep" --durations=15
	@# the numerically sensitive tests again under another OpenBLAS kernel (tools/other_blas_kernel.py):
	@# green here should mean green on a CPU whose BLAS rounds differently
	OPENBLAS_CORETYPE=$$($(PY) tools/other_blas_kernel.py) QT_QPA_PLATFORM=offscreen \
	    $(PY) -m pytest -q -p no:cacheprovider -n 2 -m "numerics and not slow"
	$(VENV)/bin/lint-imports
	$(VENV)/bin/ruff check solver app tests bench tools
	$(VENV)/bin/mypy solver/__init__.py solver/compile.py solver/errors.py solver/analysis/dynamics.py \
	    solver/analysis/linearize.py solver/analysis/equilibrium.py

test-fast: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -x -n 2 --dist worksteal -m "not slow" -p no:cacheprovider

# the bench set of tools/bench_tables.py (≈ 25 min at load 12–18; BENCH_HEAVY=1 adds ≈ 5 min) rewrites
# docs/performance.md's generated tables, each with its command, commit and load average
bench: $(STAMP)
	$(PY) tools/bench_tables.py $(if $(BENCH_HEAVY),--heavy)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
