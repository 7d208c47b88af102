"""Lag and time lag over time per group: PNG through matplotlib (``pip install 'kctl[plot]'``),
or a self-contained HTML page with inline SVG (no dependency).

Input: a small list of ``{"group", "ts_ms", "lag", "time_lag_s"}`` points, already bounded by
the caller (a few groups, downsampled in Spark)."""

from __future__ import annotations

import datetime as dt
import html
from collections import defaultdict
from pathlib import Path
from typing import Any

from kctl.errors import KctlError, UsageError

PALETTE = (
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)  # fmt: skip


def plot_kind(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".png":
        return "png"
    if suffix in (".html", ".htm"):
        return "html"
    raise UsageError(f"--plot {path}: name it .png or .html")


def require_backend(path: Path) -> None:
    """Fail before any Spark work when the PNG backend is missing."""
    if plot_kind(path) == "png":
        try:
            import matplotlib  # noqa: F401
        except ImportError as exc:
            raise KctlError(
                "PNG plots need matplotlib", "pip install 'kctl[plot]', or plot to .html"
            ) from exc


def _by_group(points: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in sorted(points, key=lambda p: (p["group"], p["ts_ms"])):
        out[p["group"]].append(p)
    return dict(out)


def draw(points: list[dict[str, Any]], path: Path, title: str = "consumer lag") -> None:
    if plot_kind(path) == "png":
        _png(points, path, title)
    else:
        _html(points, path, title)


def _png(points: list[dict[str, Any]], path: Path, title: str) -> None:
    require_backend(path)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_lag, ax_time) = plt.subplots(2, 1, figsize=(11, 7), sharex=True)
    for i, (group, pts) in enumerate(_by_group(points).items()):
        when = [dt.datetime.fromtimestamp(p["ts_ms"] / 1000, dt.UTC) for p in pts]
        color = PALETTE[i % len(PALETTE)]
        ax_lag.plot(when, [p["lag"] for p in pts], label=group, color=color, linewidth=1.2)
        ax_time.plot(when, [p["time_lag_s"] for p in pts], label=group, color=color, linewidth=1.2)
    ax_lag.set_ylabel("lag (offsets)")
    ax_time.set_ylabel("time lag (s)")
    ax_time.set_xlabel("time (UTC)")
    ax_lag.set_title(title)
    for ax in (ax_lag, ax_time):
        ax.grid(True, alpha=0.3)
    ax_lag.legend(loc="upper left", fontsize="small")
    fig.autofmt_xdate()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _svg_chart(
    series: dict[str, list[tuple[float, float | None]]], label: str, width: int = 900
) -> str:
    height, left, bottom, top, right = 260, 70, 30, 15, 15
    xs = [x for pts in series.values() for x, _ in pts]
    ys = [y for pts in series.values() for _, y in pts if y is not None]
    if not xs:
        return "<p>no data</p>"
    x0, x1 = min(xs), max(xs)
    y1 = max(ys) if ys else 1.0
    y1 = y1 if y1 > 0 else 1.0
    x1 = x1 if x1 > x0 else x0 + 1

    def sx(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * (width - left - right)

    def sy(y: float) -> float:
        return height - bottom - y / y1 * (height - bottom - top)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="11">',
        f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" '
        'stroke="#888"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="#888"/>',
        f'<text x="4" y="{top + 10}">{html.escape(label)}</text>',
        f'<text x="{left - 4}" y="{top + 4}" text-anchor="end">{y1:.4g}</text>',
        f'<text x="{left - 4}" y="{height - bottom}" text-anchor="end">0</text>',
    ]
    for x, anchor in ((x0, "start"), (x1, "end")):
        stamp = dt.datetime.fromtimestamp(x / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
        parts.append(
            f'<text x="{sx(x):.1f}" y="{height - 8}" text-anchor="{anchor}">{stamp}Z</text>'
        )
    for i, (group, pts) in enumerate(series.items()):
        coords = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts if y is not None)
        parts.append(
            f'<polyline fill="none" stroke="{PALETTE[i % len(PALETTE)]}" stroke-width="1.5" '
            f'points="{coords}"><title>{html.escape(group)}</title></polyline>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _html(points: list[dict[str, Any]], path: Path, title: str) -> None:
    groups = _by_group(points)
    lag = {g: [(p["ts_ms"], p["lag"]) for p in pts] for g, pts in groups.items()}
    tlag = {g: [(p["ts_ms"], p["time_lag_s"]) for p in pts] for g, pts in groups.items()}
    legend = "".join(
        f'<span style="color:{PALETTE[i % len(PALETTE)]}">&#9632; {html.escape(g)}</span> '
        for i, g in enumerate(groups)
    )
    doc = (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title></head><body style='font-family:sans-serif'>"
        f"<h2>{html.escape(title)}</h2><p>{legend}</p>"
        f"{_svg_chart(lag, 'lag (offsets)')}<br>{_svg_chart(tlag, 'time lag (s)')}"
        "</body></html>\n"
    )
    path.write_text(doc, encoding="utf-8")
