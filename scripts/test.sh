#!/usr/bin/env bash
# Installs everything (kctl with the local broker, Spark extra and dev tools into .venv) and runs
# the lint checks and the whole test suite against a real local broker. .ci/run calls this.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev]'

.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/python -m pytest -rs -q "$@"
