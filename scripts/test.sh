#!/usr/bin/env bash
# Install everything the test suite needs, then run all of it: lint, types, tests, benchmark.
# Python packages go to .venv (the project plus its [test] extra, incl. mcp-server-time from PyPI);
# installing the project builds the JupyterLab extension (labextension/, from its yarn.lock, with jlpm);
# the third-party Node MCP servers and the official MCP conformance suite go to tests/node/node_modules
# (pinned by its package-lock.json; tests/conformance_support.py runs the suite on Node 20).
# Extra arguments are passed to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
# The extension's npm packages exactly as its yarn.lock says (jlpm comes from PyPI's jupyter-builder); the
# project's install below then builds the extension from them.
.venv/bin/python -m pip install --quiet "jupyter-builder>=1.2,<2"
(cd labextension && PATH="$PWD/../.venv/bin:$PATH" jlpm install --immutable)
.venv/bin/python -m pip install --quiet -e ".[test]"
(cd tests/node && npm ci --no-audit --no-fund --loglevel=error)

# The browser test (tests/browser) drives Debian's chromium: Playwright's own browser download cannot
# work where only the package registries are reachable, so never `playwright install`.
if [ ! -x /usr/bin/chromium ]; then
  echo "== installing Debian's chromium for the browser test"
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null; then
      echo "scripts/test.sh: /usr/bin/chromium is missing and installing it needs root (no sudo here):" >&2
      echo "  apt-get install -y --no-install-recommends chromium" >&2
      exit 1
    fi
    sudo=(sudo)
  fi
  if ! command -v apt-get >/dev/null \
    || ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q \
    || ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -q --no-install-recommends chromium \
    || [ ! -x /usr/bin/chromium ]; then
    echo "scripts/test.sh: could not install Debian's chromium (/usr/bin/chromium) with apt-get;" >&2
    echo "  the browser test needs it: apt-get install -y --no-install-recommends chromium" >&2
    exit 1
  fi
fi

echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "== mypy"
.venv/bin/mypy
echo "== import contracts"
.venv/bin/lint-imports --no-cache
echo "== jest (the extension's own tests)"
(cd labextension && PATH="$PWD/../.venv/bin:$PATH" jlpm test)
echo "== pytest"
.venv/bin/python -m pytest --durations=20 "$@"
echo "== bench (timings never fail; an execution that fails does)"
.venv/bin/python bench/tool_call.py
.venv/bin/python bench/large_result.py --quick
.venv/bin/python bench/executor.py --quick
.venv/bin/python bench/agent_tokens.py --quick
.venv/bin/python bench/inferred_shapes.py
.venv/bin/python bench/render.py --quick
.venv/bin/python bench/serve.py --quick
.venv/bin/python bench/oauth_signin.py --logins 5 --rounds 5
