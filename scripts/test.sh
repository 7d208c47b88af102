#!/usr/bin/env bash
# Installs everything (kctl with the local engines, Spark extra and dev tools into .venv; Apache
# Kafka's jars through Maven into kctl's cache) and runs the lint checks and the whole test suite
# against a real 3-broker Apache Kafka cluster on loopback, after ruff and the type checker.
# .ci/run calls this.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev]'
# The broker and Kafka's own tools (the reference in tests), from Maven Central, once.
.venv/bin/kctl local fetch ${KCTL_TEST_KAFKA_VERSION:+--kafka-version "$KCTL_TEST_KAFKA_VERSION"}

.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy   # every kctl module; strict on the pure layers (pyproject.toml [tool.mypy])
# kctl._native (setup.py) must have been built here: its test fails otherwise.
KCTL_REQUIRE_NATIVE=1 .venv/bin/python -m pytest -rs -q "$@"
