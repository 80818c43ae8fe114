#!/usr/bin/env bash
# Install everything the test suite needs, then run all of it: lint, types, tests, benchmark.
# Python packages go to .venv (the project plus its [test] extra, incl. mcp-server-time from PyPI);
# the third-party Node MCP servers go to tests/node/node_modules (pinned by its package-lock.json).
# Extra arguments are passed to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[test]"
(cd tests/node && npm ci --no-audit --no-fund --loglevel=error)

echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "== mypy"
.venv/bin/mypy
echo "== pytest"
.venv/bin/python -m pytest "$@"
echo "== bench (timings never fail; an execution that fails does)"
.venv/bin/python bench/tool_call.py
.venv/bin/python bench/executor.py --quick
