#!/usr/bin/env bash
# Installs everything (kctl with the local engines, Spark extra and dev tools into .venv; Apache
# Kafka's jars and the Schema Registry through Maven into kctl's cache) and runs the lint checks
# and the whole test suite against a real 3-broker Apache Kafka cluster and a real Schema
# Registry on loopback, after ruff and the type checker.
# .ci/run calls this.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev]'
# The broker and Kafka's own tools (the reference in tests), and the Schema Registries the tests
# start (Apicurio Registry 2.6.13.Final and 3.3.3: tar.gz apps of 142 and 159 MB unpacked into
# kctl's cache; 3.3.3 runs on a Java 21+ found on the machine), from Maven Central, once: no
# test downloads.
.venv/bin/kctl local fetch --schema-registry \
    ${KCTL_TEST_KAFKA_VERSION:+--kafka-version "$KCTL_TEST_KAFKA_VERSION"}
.venv/bin/kctl local fetch --schema-registry --registry-version 3.3.3 \
    ${KCTL_TEST_KAFKA_VERSION:+--kafka-version "$KCTL_TEST_KAFKA_VERSION"}
# Keycloak 25.0.6 (146 MB zip, Maven Central), the OpenID Connect server behind the registry's
# own basic auth in tests/test_local_registry.py: unpacked and pre-built into kctl's cache once.
.venv/bin/python tests/keycloak_server.py fetch >/dev/null

# A real Prometheus server scrapes kctl's lag exporter in tests/test_lag_exporter.py: Debian's
# `prometheus` package, installed when missing and apt-get can run as root (RUNLEVEL=1: the
# package's service is not started). Never fatal: without it that test skips, naming what is
# missing.
if ! command -v prometheus >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    install_prometheus() {
        DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 apt-get install -y -qq \
            --no-install-recommends prometheus >/dev/null 2>&1
    }
    install_prometheus || { apt-get update -qq >/dev/null 2>&1 && install_prometheus; } \
        || echo "scripts/test.sh: prometheus not installed (apt-get failed); its test skips" >&2
fi

.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy   # every kctl module; strict on the pure layers (pyproject.toml [tool.mypy])
# kctl._native (setup.py) must have been built here: its test fails otherwise.
KCTL_REQUIRE_NATIVE=1 .venv/bin/python -m pytest -rs -q "$@"
