# `make demo` and `make test` work on a fresh machine with Python >= 3.11, a C compiler and make.
# Each target creates .venv and installs what it needs once; a second run does no set-up work.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.rldp-installed

.PHONY: demo test test-fast test-client-only js-test lint lint-ruff lint-types lint-imports lint-js docs dashboard-png bench clean

# The TypeScript SDK (js/) is tested after pytest when Node >= 20 is present; make runs `npm ci` once.
NODE_OK  := $(shell node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' 2>/dev/null && echo yes)
JS_STAMP := js/node_modules/.rldp-npm-ci

# The C accelerators are built by the install: a changed source re-installs.
$(STAMP): pyproject.toml shared/_string_index.c client/_alias.c
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "rldp needs Python >= 3.11; set PYTHON=python3.11 (or newer)")'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[all,test,lint,docs]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/rldp demo $(ARGS)

# With Node, the SDK's packages are installed first: the browser test (tests/browser) bundles it.
# The suite runs on every core (pytest-xdist; a test module stays on one worker, so its fixtures are
# built once); TEST_WORKERS=0 runs it in this process.
TEST_WORKERS ?= auto
# The JS tests run even when pytest fails (one failure must not hide the other's), and make fails at the end.
test: $(STAMP) $(if $(NODE_OK),$(JS_STAMP))
	@py=0; $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile $(ARGS) || py=$$?; \
	js=0; $(MAKE) --no-print-directory js-test || js=$$?; \
	if [ $$py -ne 0 ] || [ $$js -ne 0 ]; then echo "make test: pytest exit $$py, JavaScript tests exit $$js" >&2; exit 1; fi

$(JS_STAMP): js/package.json js/package-lock.json
	cd js && npm ci --no-audit --no-fund --loglevel=error
	touch $(JS_STAMP)

JS_TEST ?= cd js && npx tsc -p tsconfig.json && RLDP_PYTHON=$(abspath $(PY)) node --test test/
js-test:
ifeq ($(NODE_OK),yes)
	@$(MAKE) --no-print-directory $(JS_STAMP)
	$(JS_TEST)
else
	@echo "Node >= 20 not found: the JavaScript SDK's tests (js/) are skipped"
endif

# Everything but the slow tests and the live ones (a server process, a database, a browser), on
# every core like `make test` (TEST_WORKERS=0: in this process).
test-fast: $(STAMP)
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile -m "not slow and not live" $(ARGS)

# The client's unit tests on an install with no extra (what `pip install rldp` gives: no scipy,
# no flask), against the stub aggregator: the client must not need the aggregator to be tested.
CLIENT_VENV := build/client-only-venv
test-client-only:
	test -x $(CLIENT_VENV)/bin/python || $(PYTHON) -m venv $(CLIENT_VENV)
	$(CLIENT_VENV)/bin/python -m pip install --quiet -e . pytest hypothesis
	$(CLIENT_VENV)/bin/python -m pytest -q -p no:cacheprovider -m "not slow and not live" tests/client tests/admin $(ARGS)

# Static checks (CI runs them before the tests): ruff lint + format, mypy (strict on
# rldp.shared, rldp.client, rldp.admin and rldp.cli), the import contracts of pyproject.toml, and (with
# Node) no import cycle in the TypeScript SDK (madge, a devDependency of js/).
# The first three are also the hooks of .pre-commit-config.yaml.
lint: lint-ruff lint-types lint-imports lint-js

lint-ruff: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

lint-types: $(STAMP)
	$(PY) tools/package_tree.py >/dev/null
	cd build/package-tree && ../../$(VENV)/bin/mypy --config-file ../../pyproject.toml -p rldp

lint-imports: $(STAMP)
	$(PY) tools/package_tree.py >/dev/null
	cd build/package-tree && PYTHONPATH=. ../../$(VENV)/bin/lint-imports --config ../../pyproject.toml --no-cache

lint-js:
ifeq ($(NODE_OK),yes)
	@$(MAKE) --no-print-directory $(JS_STAMP)
	cd js && npx madge --circular --extensions ts src
else
	@echo "Node >= 20 not found: the JavaScript SDK's import-cycle check (js/) is skipped"
endif

# The API reference, built from the docstrings (Sphinx autodoc; docs/api/conf.py lists the modules)
# into build/docs; every warning is an error. -E: every page is read again, so no warning is hidden.
docs: $(STAMP)
	$(PY) -m sphinx -E -W --keep-going -q -b html docs/api build/docs
	@echo "API reference: build/docs/index.html"

# The README's picture of the dashboard (docs/dashboard.png): a collection's estimate page in headless Chromium,
# taken by its browser test (needs chromium and chromium-driver).
dashboard-png: $(STAMP)
	RLDP_REQUIRE_BROWSER=1 RLDP_DASHBOARD_PNG=$(CURDIR)/docs/dashboard.png $(PY) -m pytest -q -p no:xdist \
		tests/browser/test_dashboard_collection_browser.py

bench: $(STAMP)
	$(PY) bench/run.py $(ARGS)

clean:
	rm -rf $(VENV) build *.egg-info demo-output js/node_modules js/dist
