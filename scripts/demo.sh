#!/usr/bin/env bash
# kctl end to end on a local cluster: makes .venv, installs kctl with the local engines and the
# Spark and schemas extras, starts a real 3-broker Apache Kafka cluster and a Schema Registry on
# free loopback ports (Tansu, without a registry, when there is no Java 17), walks through the
# commands, writes and reads a typed (Avro) topic, rehearses a broker going down, scales the
# cluster out by a broker with a planned, throttled reassignment, analyses the recorded lag on
# local Spark, and stops the cluster.
set -euo pipefail
cd "$(dirname "$0")/.."

# The install's own output (pip's progress and notices, the build of kctl's C extension) goes to
# a log, shown only if the install fails: what follows on the terminal is kctl's.
install_log="$(mktemp -t kctl-demo-install.XXXXXX)"
printf 'installing kctl and its local, spark and schemas extras into .venv ...\n' >&2
if ! {
  python3 -m venv .venv &&
    .venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip &&
    .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[local,spark,schemas]'
} >"$install_log" 2>&1; then
  cat "$install_log" >&2
  printf 'demo: installing kctl failed (the log above, kept in %s)\n' "$install_log" >&2
  exit 1
fi
rm -f "$install_log"

K="$PWD/.venv/bin/kctl"
export KCTL_STATE_DIR="$(mktemp -d)"
export KCTL_CONFIG="$KCTL_STATE_DIR/config.yaml"

step() { printf '\n\033[1m$ kctl %s\033[0m\n' "$*" >&2; "$K" "$@"; }

# With Java, a Schema Registry too (Apicurio Registry from Maven Central, in memory): the
# profile 'local' that local up writes then carries both addresses.
registry=()
if command -v java >/dev/null 2>&1 || [ -n "${JAVA_HOME:-}" ]; then
  registry=(--schema-registry --registry-port 0)
fi
printf '\n\033[1m$ kctl local up --port 0 --no-headers %s\033[0m\n' "${registry[*]}" >&2
trap '"$K" local down --purge; rm -rf "$KCTL_STATE_DIR"' EXIT
KCTL_BOOTSTRAP_SERVERS=$("$K" local up --port 0 --no-headers "${registry[@]}")
export KCTL_BOOTSTRAP_SERVERS
echo "$KCTL_BOOTSTRAP_SERVERS"
step local status

if [ ${#registry[@]} -eq 0 ]; then
  step profile add local -b "$KCTL_BOOTSTRAP_SERVERS" --use
fi
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
step offsets get orders
step consume orders --group demo-readers -n 12 -o jsonl --consumer-property session.timeout.ms=6000
step consume orders --from -2 --template '{partition}:{offset} {key}={value}'
step groups lag demo-readers --time-lag   # TIME-LAG: how old the first unread record is
if [ ${#registry[@]} -gt 0 ]; then
  # A typed topic, as most production topics are: JSON data in, Avro on the wire (the schema
  # registered in the local registry under payments-avro-value), the same JSON out.
  cat >"$KCTL_STATE_DIR/payment.avsc" <<'AVSC'
{"type": "record", "name": "Payment", "namespace": "demo", "fields": [
  {"name": "id", "type": "long"},
  {"name": "customer", "type": "string"},
  {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
  {"name": "paid_at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
  {"name": "note", "type": ["null", "string"], "default": null}]}
AVSC
  step topics create payments-avro --partitions 3
  printf '%s\n' \
    '{"id": 1, "customer": "ada", "amount": "12.30", "paid_at": "2026-11-26T09:00:00.000Z", "note": null}' \
    '{"id": 2, "customer": "grace", "amount": "7.05", "paid_at": "2026-11-26T09:00:01.500Z", "note": "gift"}' |
    step produce payments-avro --value-format avro --value-schema "$KCTL_STATE_DIR/payment.avsc"
  step schemas list
  step schemas describe payments-avro-value
  step consume payments-avro --value-format avro -o jsonl   # Avro bytes read back as JSON data
fi
step groups reset-offsets demo-readers --topic orders --to-earliest
# Lag history: four samples while production goes on and nobody reads, then Burrow's verdict,
# time lag, rates and trend on Spark (local[*]; the same command runs on a cluster with --master).
samples="$KCTL_STATE_DIR/lag.jsonl"
for round in 1 2 3 4; do
  seq 1 10 | sed "s/.*/r$round-&\tlate-&/" | "$K" produce orders --key-separator $'\t' 2>/dev/null
  "$K" groups lag demo-readers --time-lag --record "$samples" >/dev/null
done
if command -v java >/dev/null 2>&1 || [ -n "${JAVA_HOME:-}" ]; then
  step analytics lag "$samples" --window 4 --level partition --master 'local[2]'
fi
# A real segment, written by an Apache Kafka 3.8 broker (tests/data, with its provenance), decoded offline:
seg="tests/data/kafka-3.8-kraft-logs/foo-0/00000000000000000000.log"
if "$K" dump-segment --help >/dev/null 2>&1 && [ -f "$seg" ]; then
  step dump-segment --deep-iteration --print-data-log "$seg"
fi
# Rehearse a failure (Apache Kafka only): a broker goes down, replicas fall out of sync,
# kctl names them; the broker comes back and the preferred leaders are elected again (plan only).
if "$K" local status -o json | grep -q '"engine": "kafka"'; then
  step topics create payments --partitions 3 --replication-factor 3 --config min.insync.replicas=2
  step local stop-broker 2
  step topics describe --under-replicated
  step replicas validate || echo "(exit $?: problems found, as expected with a broker down)" >&2
  step local start-broker 2
  step partitions elect-leaders --preferred --topic payments
  # Scale out: a fourth broker joins; kctl plans only the moves the goal needs (the table: each
  # broker before and after), then runs them in waves of two partitions under a throttle that
  # is removed when the plan completes.
  step local add-broker
  step partitions reassign generate --add-broker 4
  "$K" partitions reassign generate --add-broker 4 -o json >"$KCTL_STATE_DIR/scale-out.json" 2>/dev/null
  step partitions reassign execute --file "$KCTL_STATE_DIR/scale-out.json" \
    --max-concurrent 2 --throttle 50MB --wait --execute
fi
step topics delete orders --yes
printf '\ndone: every step above ran against a real cluster (%s)\n' "$KCTL_BOOTSTRAP_SERVERS" >&2
