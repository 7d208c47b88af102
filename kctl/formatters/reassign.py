"""The progress of ``reassign execute --wait`` (a :class:`~kctl.reassign.run.ProgressView`):
JSON lines on stdout (``-o jsonl``: the output itself), a rich bar on stderr when it is a
terminal, else nothing until the end (the run then notes each wave it completes)."""

from __future__ import annotations

import json
import sys
from typing import Any

from kctl.reassign.progress import ProgressLine
from kctl.reassign.report import human_bytes, human_seconds


class WaveProgress:
    """``jsonl``: each line as JSON on stdout; else, with ``terminal`` (stderr is one), a bar."""

    def __init__(self, jsonl: bool, terminal: bool) -> None:
        self.jsonl = jsonl
        self.bar: Any = None
        self.task: Any = None
        self.stuck: list[str] = []
        if not jsonl and terminal:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn

            self.bar = Progress(
                TextColumn("wave {task.fields[wave]}/{task.fields[waves]}"),
                BarColumn(),
                TextColumn("{task.fields[parts]} partitions"),
                TextColumn("{task.fields[bytes]}"),
                TextColumn("{task.fields[rate]}"),
                TextColumn("ETA {task.fields[eta]}"),
                console=Console(stderr=True),
                transient=False,
            )

    @property
    def live(self) -> bool:
        return self.jsonl or self.bar is not None

    def __enter__(self) -> WaveProgress:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def __call__(self, line: ProgressLine) -> None:
        if self.jsonl:
            sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
            sys.stdout.flush()
            return
        fields = {
            "wave": line["wave"],
            "waves": line["waves"],
            "parts": f"{line['partitions_done']}/{line['partitions_total']}",
            "bytes": f"{human_bytes(line['bytes_copied'])}/{human_bytes(line['bytes_total'])}",
            "rate": f"{human_bytes(line['rate_bytes_per_s'])}/s",
            "eta": human_seconds(line["eta_seconds"]),
        }
        if self.bar is not None:
            total = max(1, line["bytes_total"])
            if self.task is None:
                self.task = self.bar.add_task("reassign", total=total, **fields)
            self.bar.update(self.task, completed=line["bytes_copied"], total=total, **fields)
            if line["stuck"] and line["stuck"] != self.stuck:
                self.bar.console.print(f"no progress on {', '.join(line['stuck'][:10])}")
            self.stuck = line["stuck"]
