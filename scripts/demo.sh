#!/usr/bin/env bash
# kctl end to end on a local broker: makes .venv, installs kctl with the local broker and the
# Spark extra, starts the broker on a free loopback port, walks through the commands, analyses
# the recorded lag on local Spark (when Java is installed), and stops the broker.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[local,spark]'

K="$PWD/.venv/bin/kctl"
export KCTL_STATE_DIR="$(mktemp -d)"
export KCTL_CONFIG="$KCTL_STATE_DIR/config.yaml"
port=$(.venv/bin/python -c 'from kctl.local.broker import free_port; print(free_port())')

step() { printf '\n\033[1m$ kctl %s\033[0m\n' "$*" >&2; "$K" "$@"; }

step local up --port "$port"
trap '"$K" local down; rm -rf "$KCTL_STATE_DIR"' EXIT
export KCTL_BOOTSTRAP_SERVERS="127.0.0.1:$port"

step profile add local -b "$KCTL_BOOTSTRAP_SERVERS" --use
step profile show
step cluster describe
step cluster api-versions -o table --no-headers | head -n 5
step topics create orders --partitions 3 --config retention.ms=86400000 --config cleanup.policy=delete
step topics list
step topics describe orders
step topics describe --under-replicated -o json
step configs set --topic orders max.message.bytes=2097152
step configs describe --topic orders --all
step -o json topics describe orders
# Records: keyed lines in, JSON lines out; a consumer group commits what it read.
printf 'k%s\tvalue-%s\n' $(seq 1 20 | sed 'p') | step produce orders --key-separator $'\t' --compression zstd
# The local broker (Tansu) answers ListOffsets(latest) with the first offset of the last batch + 1
# when that batch holds several records, so LATEST below can read low; Apache Kafka does not.
step offsets get orders
step consume orders --group demo-readers -n 12 -o jsonl --consumer-property session.timeout.ms=6000
step consume orders --from -2 --template '{partition}:{offset} {key}={value}'
step groups lag demo-readers
step groups reset-offsets demo-readers --topic orders --to-earliest
# Lag history: four samples while production goes on and nobody reads, then Burrow's verdict,
# time lag, rates and trend on Spark (local[*]; the same command runs on a cluster with --master).
samples="$KCTL_STATE_DIR/lag.jsonl"
for round in 1 2 3 4; do
  seq 1 10 | sed "s/.*/r$round-&\tlate-&/" | "$K" produce orders --key-separator $'\t' 2>/dev/null
  "$K" groups lag demo-readers --record "$samples" >/dev/null
done
if command -v java >/dev/null 2>&1 || [ -n "${JAVA_HOME:-}" ]; then
  step analytics lag "$samples" --window 4 --level partition --master 'local[2]'
fi
# A real segment, written by an Apache Kafka 3.8 broker (shared fixtures), decoded offline:
seg="../shared/fixtures/kafka-3.8-kraft-logs/foo-0/00000000000000000000.log"
if "$K" dump-segment --help >/dev/null 2>&1 && [ -f "$seg" ]; then
  step dump-segment --deep-iteration --print-data-log "$seg"
fi
step topics delete orders --yes
printf '\ndone: every step above ran against a real Kafka-protocol broker on 127.0.0.1:%s\n' "$port" >&2
