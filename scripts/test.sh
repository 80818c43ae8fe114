#!/usr/bin/env bash
# Install everything the test suite needs, then run all of it: lint, types, tests, benchmark.
# Python packages go to .venv (the project plus its [test] extra, incl. mcp-server-time from PyPI);
# installing the project builds the JupyterLab extension (labextension/, from its yarn.lock, with jlpm);
# the third-party Node MCP servers and the official MCP conformance suite go to tests/node/node_modules
# (pinned by its package-lock.json; tests/conformance_support.py runs the suite on Node 20).
# pytest runs on CODEMODE_TEST_WORKERS workers (default 4: most tests wait on processes, so even 2 cores
# keep 4 busy); extra arguments are passed to pytest (`-n 0` runs it in one process).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
stage() { echo "== $1 (at $((SECONDS - started)) s)"; }

# The browser test (tests/browser) drives Debian's chromium: Playwright's own browser download cannot
# work where only the package registries are reachable, so never `playwright install`.
install_chromium() {
  [ -x /usr/bin/chromium ] && return 0
  echo "== installing Debian's chromium for the browser test"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null; then
      echo "scripts/test.sh: /usr/bin/chromium is missing and installing it needs root (no sudo here):" >&2
      echo "  apt-get install -y --no-install-recommends chromium" >&2
      return 1
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
    return 1
  fi
}

# What needs no Python runs beside the Python installs: chromium and the Node servers (waited for below).
stage "installing (chromium and the Node MCP servers in the background)"
chromium_log=$(mktemp)
install_chromium > "$chromium_log" 2>&1 &
chromium_job=$!
(cd tests/node && npm ci --no-audit --no-fund --loglevel=error) &
node_job=$!

python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
# The extension's npm packages exactly as its yarn.lock says (jlpm comes from PyPI's jupyter-builder); the
# project's install below then builds the extension from them.
.venv/bin/python -m pip install --quiet "jupyter-builder>=1.2,<2"
(cd labextension && PATH="$PWD/../.venv/bin:$PATH" jlpm install --immutable)
.venv/bin/python -m pip install --quiet -e ".[test]"
wait "$node_job"
if ! wait "$chromium_job"; then
  cat "$chromium_log" >&2
  exit 1
fi
cat "$chromium_log"
rm -f "$chromium_log"

stage "ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
stage "mypy"
.venv/bin/mypy
stage "import contracts"
.venv/bin/lint-imports --no-cache
stage "jest (the extension's own tests)"
(cd labextension && PATH="$PWD/../.venv/bin:$PATH" jlpm test)
stage "pytest"
# loadscope: a module's tests stay on one worker, so its fixtures (a kernel, a JupyterLab) start once;
# tests/conftest.py orders the slow suites first and keeps tests/browser on one worker.
.venv/bin/python -m pytest -n "${CODEMODE_TEST_WORKERS:-4}" --dist loadscope --no-loadscope-reorder \
  --durations=20 "$@"
stage "bench (timings never fail; an execution that fails does)"
.venv/bin/python bench/tool_call.py
.venv/bin/python bench/large_result.py --quick
.venv/bin/python bench/executor.py --quick
.venv/bin/python bench/agent_tokens.py --quick
.venv/bin/python bench/inferred_shapes.py
.venv/bin/python bench/render.py --quick
.venv/bin/python bench/serve.py --quick
.venv/bin/python bench/oauth_signin.py --logins 5 --rounds 5
stage "done"
