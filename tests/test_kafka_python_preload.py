"""kafka-python imported in the background (kafka_python.preload) while the command's own
thread imports it too: the command's imports wait for the background one instead of being
handed a partially initialised module (a CLI fuzzer run found `topics describe` failing with
"cannot import name 'ApiVersionsRequest' from partially initialized module"; 4 runs in 30 of
this script without the fix)."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys, time
from kctl.broker import kafka_python
kafka_python.preload()
time.sleep(float(sys.argv[1]))
from kafka.protocol.metadata import ApiVersionsRequest, MetadataRequest
from kafka.protocol.admin import ListPartitionReassignmentsRequest
import builtins, kafka.admin
kafka_python._preloading.join()
assert builtins.__import__ is kafka_python._plain_import  # the hook is gone once loaded
print("ok")
"""


def test_imports_racing_the_background_import_of_kafka_python_all_succeed():
    # Delays from 0 to ~0.1 s put the command's imports at every stage of the background one.
    for i in range(30):
        r = subprocess.run([sys.executable, "-c", SCRIPT, str(i * 0.004)],
                           capture_output=True, text=True, timeout=60)  # fmt: skip
        assert (r.returncode, r.stdout) == (0, "ok\n"), r.stderr[-600:]
