"""A seeded mutation fuzzer over every decoder of :mod:`kctl.logfmt`, in-process.

Seeds are the real files of ``tests/data/`` (segments, KRaft snapshots, indexes, producer
snapshots, checkpoints, properties, quorum-state, ``__consumer_offsets`` records) plus record
batches built by kafka-python's record builders in every codec (v0/v1 message sets, v2 batches)
and hand-assembled ``__transaction_state`` records. Each input is a seed mutated by bit flips,
byte sets, length fields set to 0/-1/2^31-1/2^31/random, truncation, insertion, deletion and
splices of two seeds; input ``i`` of seed ``s`` is a pure function of (s, i), so any finding is
reproduced with ``--seed s --only i``.

Per input it counts:

- a **crash**: any exception other than what kctl reports as a problem of the file
  (:class:`kctl.logfmt.wire.DecodeError` / :class:`kctl.logfmt.codecs.CodecError`, both
  ValueError; for the log decoders any ValueError, which the dump pipeline reports), including a
  result the JSON writer cannot take back (orjson's TypeError on an integer past 64 bits);
- a **hang**: more than ``--hang-seconds`` (1 s) for one input (all inputs are < 64 KB);
- an **over-allocation**: a tracemalloc peak above 64 x the input size + 1 MiB (a length field
  of 2 GB must never allocate 2 GB). Allocations made outside Python's allocator (the Rust and C
  codecs) are caught by the address-space limit the runner sets (``--rlimit-mb``): a failed
  allocation there aborts the worker, which the runner counts as a crash and names the input.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import struct
import sys
import time
import traceback
import tracemalloc
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, is_dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
MAX_INPUT = 64 << 10

# -- seeds ------------------------------------------------------------------------------------


def _kind_of(path: Path) -> str | None:
    from kctl.dump.files import detect_type

    return detect_type(path)


def kafka_python_snappy() -> None:
    """kafka-python frames snappy itself (xerial blocks) but compresses through python-snappy,
    which is not installed here: give it cramjam's raw snappy compressor for that one call."""
    import types

    import kafka.codec

    if kafka.codec.snappy is None:
        import cramjam

        kafka.codec.snappy = types.SimpleNamespace(  # type: ignore[attr-defined]
            compress=lambda b: bytes(cramjam.snappy.compress_raw(bytes(b))),
            decompress=lambda b: bytes(cramjam.snappy.decompress_raw(bytes(b))),
        )


def _built_batches() -> list[bytes]:
    """v0/v1 message sets and v2 batches in every codec, by kafka-python's builders."""
    from kafka.record.default_records import DefaultRecordBatchBuilder
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    kafka_python_snappy()
    out = []
    rnd = random.Random(7)
    for codec in range(5):
        for txn in (False, True):
            b = DefaultRecordBatchBuilder(
                2, codec, txn, 5 if txn else -1, 0, 0 if txn else -1, 1 << 20
            )
            for i in range(6):
                b.append(
                    i,
                    1_700_000_000_000 + i,
                    None if i % 3 == 0 else f"k{i}".encode(),
                    rnd.randbytes(20 + 10 * i).hex().encode(),
                    [("h", b"v")] if i % 2 else [],
                )
            out.append(bytes(b.build()))
        if codec == 4:
            continue  # zstd has no v0/v1 form
        for magic in (0, 1):
            lb = LegacyRecordBatchBuilder(magic, codec, 1 << 20)
            for i in range(4):
                lb.append(i, 1_700_000_000_000 + i if magic else None, b"k", f"v{i}".encode() * 20)
            out.append(bytes(lb.build()))
    return out


def _txn_records() -> list[tuple[bytes, bytes]]:
    """``__transaction_state`` key/value pairs assembled by hand per TransactionLogKey/Value."""
    out = []
    for tid in ("t1", "transactional-id-with-a-longer-name"):
        key = struct.pack(">hh", 0, len(tid)) + tid.encode()
        # v0: producer id, epoch, timeout, status, partitions [topic, [partition]], 2 timestamps
        parts = struct.pack(">i", 1) + struct.pack(">h", 3) + b"foo" + struct.pack(">ii", 1, 0)
        v0 = struct.pack(">hqhib", 0, 1000, 3, 60000, 1) + parts + struct.pack(">qq", 1, 2)
        out.append((key, v0))
        out.append(
            (
                key,
                struct.pack(">hqhib", 0, 1000, 3, 60000, 4)
                + struct.pack(">i", -1)
                + struct.pack(">qq", 1, 2),
            )
        )
    return out


@dataclass
class Seeds:
    by_target: dict[str, list[bytes]] = field(default_factory=dict)

    def add(self, target: str, data: bytes) -> None:
        if data and len(data) <= MAX_INPUT:
            self.by_target.setdefault(target, []).append(data)


def _records_of(seg: bytes) -> list[tuple[bytes | None, bytes | None, bool]]:
    from kctl.logfmt import batch as B

    out = []
    for item in B.scan(seg):
        if isinstance(item, B.Batch):
            try:
                for r in B.records(seg, item):
                    out.append((r.key, r.value, item.is_control))
            except ValueError:
                pass
    return out


def _pair(key: bytes | None, value: bytes | None) -> bytes:
    """A key and a value in one input: int32 key length (-1 null), key, value (rest; an input
    ending at the key is a null value)."""
    k = b"" if key is None else key
    return struct.pack(">i", -1 if key is None else len(k)) + k + (value or b"")


def _unpair(data: bytes) -> tuple[bytes | None, bytes | None]:
    if len(data) < 4:
        return None, None
    (n,) = struct.unpack_from(">i", data, 0)
    if n < 0:
        return None, data[4:] or None
    key = data[4 : 4 + n]
    rest = data[4 + n :]
    return key, rest if rest else None


def load_seeds() -> Seeds:
    s = Seeds()
    for path in sorted(DATA.rglob("*")):
        if not path.is_file() or path.name == "README.md":
            continue
        data = path.read_bytes()
        kind = _kind_of(path)
        if kind in ("log", "kraft-snapshot"):
            s.add("log", data)
            for key, value, control in _records_of(data):
                if control:
                    s.add("control", _pair(key, value))
                elif "__cluster_metadata" in str(path) or kind == "kraft-snapshot":
                    s.add("metadata", value or b"")
            # single batches too: small inputs mutate more densely
            from kctl.logfmt import batch as B

            for item in B.scan(data):
                if isinstance(item, B.Batch):
                    s.add("log", data[item.position : item.next_position])
        elif kind in ("index", "timeindex"):
            s.add(kind, data)
            s.add("txnindex", data)
        elif kind == "producer-snapshot":
            s.add("producer-snapshot", data)
        elif kind in ("leader-epoch-checkpoint", "offset-checkpoint"):
            s.add(kind, data)
        elif kind in ("partition-metadata", "meta-properties"):
            s.add("properties", data)
        elif kind == "quorum-state":
            s.add("quorum-state", data)
    offsets = DATA / "consumer-offsets-records"
    for key_file in sorted(offsets.glob("*.key")):
        value_file = key_file.with_suffix(".payload")
        s.add("offsets", _pair(key_file.read_bytes(), value_file.read_bytes()))
    for key, value in _txn_records():
        s.add("txn", _pair(key, value))
    batches = _built_batches()
    for b in batches:
        s.add("log", b)
    s.add("log", b"".join(batches))
    s.add("txnindex", struct.pack(">hqqqq", 0, 5, 10, 20, 21) * 3)
    return s


# -- mutation ---------------------------------------------------------------------------------

_INTERESTING32 = (0, -1, 1, 0x7FFFFFFF, -0x80000000, 0x80000000 - 61, 0xFFFF, 64 << 20)


def mutate(rnd: random.Random, data: bytes, pool: list[bytes]) -> bytes:
    buf = bytearray(data)
    for _ in range(rnd.choice((1, 1, 1, 2, 3, 5, 8))):
        op = rnd.randrange(11)
        n = len(buf)
        if op == 0 and n:  # bit flip
            i = rnd.randrange(n)
            buf[i] ^= 1 << rnd.randrange(8)
        elif op == 1 and n:  # random byte
            buf[rnd.randrange(n)] = rnd.randrange(256)
        elif op in (2, 3) and n >= 4:  # a length-like int32 set to an interesting value
            i = rnd.randrange(n - 3)
            v = rnd.choice(_INTERESTING32)
            buf[i : i + 4] = struct.pack(">I", v & 0xFFFFFFFF)
        elif op == 4 and n >= 2:  # int16
            i = rnd.randrange(n - 1)
            buf[i : i + 2] = struct.pack(">H", rnd.choice((0, 0xFFFF, 0x7FFF, 1, 2, 3)))
        elif op == 5 and n:  # varint: a long one
            i = rnd.randrange(n)
            buf[i : i + 1] = rnd.choice(
                (
                    b"\xff\xff\xff\xff\x0f",
                    b"\xfe\xff\xff\xff\x0f",
                    b"\x01",
                    b"\x00",
                    b"\x80" * 10 + b"\x01",
                )
            )
        elif op == 6 and n:  # truncation
            del buf[rnd.randrange(n) :]
        elif op == 7 and n:  # delete a stretch
            i = rnd.randrange(n)
            del buf[i : i + rnd.randrange(1, 64)]
        elif op == 8:  # insert
            i = rnd.randrange(n + 1)
            buf[i:i] = rnd.randbytes(rnd.randrange(1, 16))
        elif op == 9 and pool:  # splice with another seed
            other = rnd.choice(pool)
            if other:
                a = rnd.randrange(len(other))
                i = rnd.randrange(n + 1)
                buf[i:] = other[a : a + rnd.randrange(1, 4096)] + buf[i:]
        elif op == 10 and n:  # duplicate a stretch
            i = rnd.randrange(n)
            buf[i:i] = buf[i : i + rnd.randrange(1, 256)]
        if len(buf) > MAX_INPUT:
            del buf[MAX_INPUT:]
    return bytes(buf)


# -- targets ----------------------------------------------------------------------------------


def _json(doc: Any) -> None:
    """What the dump writer does with a decoded result: JSON it (orjson refuses ints past
    64 bits and nesting past 255)."""
    from kctl.formatters import to_json

    if is_dataclass(doc) and not isinstance(doc, type):
        doc = asdict(doc)
    to_json(doc, indent=False)


def t_log(data: bytes) -> None:
    from kctl.logfmt import batch as B
    from kctl.logfmt.fast import records_json

    B.v2_headers(data, 0, len(data))
    for item in B.scan(data):
        _json(item)
        if not isinstance(item, B.Batch):
            continue
        try:
            rows_data, rows = B.decode_records(data, item, 1 << 20)
        except ValueError:
            continue
        for row in rows:
            _json(list(row))
        if item.magic == 2 and not item.codec_id:
            records_json(
                data[item.position + B.V2_HEADER : item.next_position],
                item.base_offset,
                item.first_timestamp or 0,
                item.count or 0,
                item.base_sequence if item.base_sequence is not None else -1,
            )
        if item.is_control:
            for r in rows:
                kp, kl = r[B.REC_KEY_POS], r[B.REC_KEY_LEN]
                vp, vl = r[B.REC_VALUE_POS], r[B.REC_VALUE_LEN]
                with contextlib.suppress(ValueError):
                    _json(
                        B.control_record(
                            None if kl < 0 else bytes(rows_data[kp : kp + kl]),
                            None if vl < 0 else bytes(rows_data[vp : vp + vl]),
                        )
                    )


def t_control(data: bytes) -> None:
    from kctl.logfmt import batch as B

    _json(B.control_record(*_unpair(data)))


def t_index(data: bytes) -> None:
    from kctl.logfmt import indexes as X

    for e in X.offset_entries(data, 0):
        _json(e)
    X.offset_index_sanity(data, 0)


def t_timeindex(data: bytes) -> None:
    from kctl.logfmt import indexes as X

    for e in X.time_entries(data, 0):
        _json(e)
    X.time_index_sanity(data, 0)


def t_txnindex(data: bytes) -> None:
    from kctl.logfmt import indexes as X

    for t in X.aborted_txns(data):
        _json(t)


def t_producer_snapshot(data: bytes) -> None:
    from kctl.logfmt import snapshot as S

    _json(S.producer_snapshot(data))


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def t_leader_epoch(data: bytes) -> None:
    from kctl.logfmt import snapshot as S

    _json(S.checkpoint(_text(data), "leader-epoch"))


def t_offset_checkpoint(data: bytes) -> None:
    from kctl.logfmt import snapshot as S

    _json(S.checkpoint(_text(data), "offset"))


def t_properties(data: bytes) -> None:
    from kctl.logfmt import snapshot as S

    _json(S.properties(_text(data)))


def t_quorum_state(data: bytes) -> None:
    from kctl.logfmt import snapshot as S

    _json(S.quorum_state(_text(data)))


def t_offsets(data: bytes) -> None:
    from kctl.logfmt import internal

    _json(internal.decode_offsets_record(*_unpair(data)))


def t_txn(data: bytes) -> None:
    from kctl.logfmt import internal

    _json(internal.decode_transaction_record(*_unpair(data)))


def t_metadata(data: bytes) -> None:
    from kctl.logfmt import metadata

    _json(metadata.decode_metadata_record(data))


def t_codec(data: bytes) -> None:
    from kctl.logfmt.codecs import decompress

    if data:
        decompress(1 + data[0] % 4, data[1:], 1 << 20)


TARGETS: dict[str, Callable[[bytes], None]] = {
    "log": t_log,
    "control": t_control,
    "index": t_index,
    "timeindex": t_timeindex,
    "txnindex": t_txnindex,
    "producer-snapshot": t_producer_snapshot,
    "leader-epoch-checkpoint": t_leader_epoch,
    "offset-checkpoint": t_offset_checkpoint,
    "properties": t_properties,
    "quorum-state": t_quorum_state,
    "offsets": t_offsets,
    "txn": t_txn,
    "metadata": t_metadata,
    "codec": t_codec,
}
# Where any ValueError is a reported problem (the dump pipeline catches ValueError there); the
# small files' reader catches DecodeError only.
_VALUE_ERROR_OK = {"log", "control", "offsets", "txn", "metadata", "codec"}
# How often each target is drawn (the log decoders hold the most code).
_WEIGHTS = {"log": 8, "codec": 2, "offsets": 3, "txn": 2, "metadata": 3, "control": 2}


def _codec_seeds(seeds: Seeds) -> list[bytes]:
    """Compressed payloads of the built batches, prefixed with their codec id."""
    from kctl.logfmt import batch as B

    out = []
    for data in seeds.by_target.get("log", []):
        for item in B.scan(data):
            if isinstance(item, B.Batch) and item.codec_id and item.magic == 2:
                payload = data[item.position + B.V2_HEADER : item.next_position]
                out.append(bytes([item.codec_id - 1]) + payload)
    return out


# -- running ----------------------------------------------------------------------------------


@dataclass
class Stats:
    inputs: int = 0
    crashes: int = 0
    hangs: int = 0
    overalloc: int = 0
    by_target: dict[str, int] = field(default_factory=dict)
    findings: list[dict[str, Any]] = field(default_factory=list)  # first few of each signature
    signatures: dict[str, int] = field(default_factory=dict)
    peak_bytes: int = 0
    peak_ratio: float = 0.0
    seconds: float = 0.0
    slowest: float = 0.0


def _expected(target: str, exc: BaseException) -> bool:
    from kctl.logfmt.wire import DecodeError

    if target in _VALUE_ERROR_OK:
        return isinstance(exc, ValueError)
    return isinstance(exc, DecodeError)


def _input(
    seed: int, i: int, seeds: Seeds, names: list[str], weights: list[int]
) -> tuple[str, bytes]:
    rnd = random.Random(seed * 1_000_003 + i)
    target = rnd.choices(names, weights)[0]
    pool = seeds.by_target[target]
    return target, mutate(rnd, rnd.choice(pool), pool)


def run(
    n: int,
    seed: int = 0,
    start: int = 0,
    step: int = 1,
    *,
    hang_seconds: float = 1.0,
    time_limit: float | None = None,
    alloc_check: bool = True,
    progress: Callable[[Stats], None] | None = None,
) -> Stats:
    """Inputs ``start, start+step, ...`` below ``n`` of ``seed``."""
    seeds = load_seeds()
    seeds.by_target["codec"] = _codec_seeds(seeds)
    names = sorted(TARGETS)
    weights = [_WEIGHTS.get(t, 1) for t in names]
    st = Stats()
    for name in names:  # warm up: imports and lazily built tables are not the input's doing
        with contextlib.suppress(Exception):
            TARGETS[name](seeds.by_target[name][0])
    began = time.monotonic()
    if alloc_check:
        tracemalloc.start()
    for i in range(start, n, step):
        target, data = _input(seed, i, seeds, names, weights)
        if alloc_check:
            tracemalloc.reset_peak()
            base, _ = tracemalloc.get_traced_memory()
        t0 = time.perf_counter()
        kind = None
        detail = ""
        try:
            TARGETS[target](data)
        except Exception as exc:  # the point: anything unexpected is counted
            if not _expected(target, exc):
                kind = "crash"
                tb = traceback.extract_tb(exc.__traceback__)[-1]
                where = f"{Path(tb.filename).name}:{tb.lineno}"
                detail = f"{type(exc).__name__}: {str(exc)[:200]} at {where}"
        elapsed = time.perf_counter() - t0
        st.slowest = max(st.slowest, elapsed)
        if kind is None and elapsed > hang_seconds:
            kind, detail = "hang", f"{elapsed:.2f} s"
        if alloc_check:
            _, peak = tracemalloc.get_traced_memory()
            used = peak - base
            st.peak_bytes = max(st.peak_bytes, used)
            st.peak_ratio = max(st.peak_ratio, used / max(len(data), 1))
            if kind is None and used > 64 * len(data) + (1 << 20):
                kind, detail = "overalloc", f"{used} bytes for {len(data)}"
        st.inputs += 1
        st.by_target[target] = st.by_target.get(target, 0) + 1
        if kind is not None:
            counter = {"crash": "crashes", "hang": "hangs", "overalloc": "overalloc"}[kind]
            setattr(st, counter, getattr(st, counter) + 1)
            where = detail.split(" at ")[-1] if kind == "crash" else ""
            sig = f"{kind} {target} {where} {detail.split(':')[0]}"
            st.signatures[sig] = st.signatures.get(sig, 0) + 1
            if st.signatures[sig] <= 3:
                st.findings.append(
                    {
                        "kind": kind,
                        "target": target,
                        "seed": seed,
                        "input": i,
                        "detail": detail,
                        "hex": data[:256].hex(),
                    }
                )
        if progress is not None and st.inputs % 10000 == 0:
            progress(st)
        if time_limit is not None and time.monotonic() - began > time_limit:
            break
    st.seconds = time.monotonic() - began
    if alloc_check:
        tracemalloc.stop()
    return st


def reproduce(seed: int, i: int) -> tuple[str, bytes]:
    seeds = load_seeds()
    seeds.by_target["codec"] = _codec_seeds(seeds)
    names = sorted(TARGETS)
    return _input(seed, i, seeds, names, [_WEIGHTS.get(t, 1) for t in names])


def _worker(args: argparse.Namespace) -> int:
    import resource

    if args.rlimit_mb:
        lim = args.rlimit_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    out = Path(args.out)

    def save(st: Stats) -> None:
        tmp = out.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(st)))
        os.replace(tmp, out)

    st = run(
        args.inputs,
        args.seed,
        args.start,
        args.step,
        hang_seconds=args.hang_seconds,
        time_limit=args.time_limit,
        alloc_check=not args.no_alloc_check,
        progress=save,
    )
    save(st)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--inputs", type=int, default=20000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--time-limit", type=float, default=None, help="seconds, per worker")
    p.add_argument("--hang-seconds", type=float, default=1.0)
    p.add_argument("--rlimit-mb", type=int, default=2048)
    p.add_argument("--no-alloc-check", action="store_true")
    p.add_argument("--only", type=int, default=None, help="run input I alone, with a traceback")
    p.add_argument("--out", default="fuzz-result.json")
    # worker mode (spawned by the runner)
    p.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--step", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.only is not None:
        target, data = reproduce(args.seed, args.only)
        print(f"target {target}, {len(data)} bytes: {data[:128].hex()}", file=sys.stderr)
        TARGETS[target](data)
        print("no exception", file=sys.stderr)
        return 0
    if args.worker:
        return _worker(args)
    import subprocess

    procs = []
    outs = []
    for w in range(args.workers):
        o = Path(f"{args.out}.w{w}")
        outs.append(o)
        cmd = [
            sys.executable,
            __file__,
            "--worker",
            "--inputs",
            str(args.inputs),
            "--seed",
            str(args.seed),
            "--start",
            str(w),
            "--step",
            str(args.workers),
            "--out",
            str(o),
            "--hang-seconds",
            str(args.hang_seconds),
            "--rlimit-mb",
            str(args.rlimit_mb),
        ]
        if args.time_limit:
            cmd += ["--time-limit", str(args.time_limit)]
        if args.no_alloc_check:
            cmd.append("--no-alloc-check")
        procs.append(subprocess.Popen(cmd))
    total: dict[str, Any] = {
        "inputs": 0,
        "crashes": 0,
        "hangs": 0,
        "overalloc": 0,
        "worker_deaths": [],
        "findings": [],
        "signatures": {},
        "by_target": {},
        "peak_bytes": 0,
        "peak_ratio": 0.0,
        "seconds": 0.0,
        "slowest": 0.0,
    }
    for w, (proc, o) in enumerate(zip(procs, outs, strict=True)):
        rc = proc.wait()
        st = json.loads(o.read_text()) if o.exists() else {}
        if rc != 0:
            # Died (an abort in a C/Rust codec under the address-space limit): the input after
            # the last one saved is where to look; rerun the worker's range from there.
            done = st.get("inputs", 0)
            total["worker_deaths"].append(
                {"worker": w, "rc": rc, "after_inputs": done, "next_input": w + done * args.workers}
            )
            total["crashes"] += 1
        for k in ("inputs", "crashes", "hangs", "overalloc"):
            total[k] += st.get(k, 0)
        for k in ("peak_bytes", "peak_ratio", "seconds", "slowest"):
            total[k] = max(total[k], st.get(k, 0))
        total["findings"] += st.get("findings", [])
        for k, v in st.get("signatures", {}).items():
            total["signatures"][k] = total["signatures"].get(k, 0) + v
        for k, v in st.get("by_target", {}).items():
            total["by_target"][k] = total["by_target"].get(k, 0) + v
        o.unlink(missing_ok=True)
    Path(args.out).write_text(json.dumps(total, indent=2))
    print(json.dumps({k: v for k, v in total.items() if k != "findings"}, indent=2))
    return 1 if total["crashes"] or total["hangs"] or total["overalloc"] else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
