"""The same analysis on a standalone Spark master and worker (spark://, loopback) as on
local[*]: the --master path runs unchanged and gives the same answer."""

from __future__ import annotations

import json

from test_analytics_cli import SPARK, _stopped_and_fine, _write_jsonl


def test_a_standalone_cluster_gives_the_same_rows_as_local(offline_kctl, tmp_path):
    from spark_standalone import standalone_cluster

    src = _write_jsonl(tmp_path / "lag.jsonl", _stopped_and_fine())
    args = ("analytics", "lag", str(src), "--level", "partition", "--window", "5", "-o", "json")
    local = offline_kctl(*args, *SPARK, timeout=240)
    assert local.code == 0, local
    with standalone_cluster(cores=1, memory="1g", log_dir=tmp_path) as url:
        remote = offline_kctl(
            *args, "--master", url, "--conf", "spark.executor.memory=512m",
            "--conf", "spark.sql.shuffle.partitions=2", timeout=300,
        )  # fmt: skip
    assert remote.code == 0, remote
    assert f"starting Spark ({url})" in remote.stderr
    assert json.loads(remote.stdout) == json.loads(local.stdout)
    assert {r["status"] for r in json.loads(remote.stdout)["partitions"]} == {"STOP", "OK"}
