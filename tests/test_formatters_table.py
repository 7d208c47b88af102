"""``-o table`` writes rich's layout at a cost linear in the rows: its output is byte for byte
what rich draws when it measures and renders every cell (``_render_table_rich``), for narrow and
wide consoles, folded cells, right-justified columns, titles, footers, hidden headers, colour,
terminals and text rich would interpret (markup, emoji codes, non-ASCII)."""

from __future__ import annotations

import io
import random

import pytest

from kctl.formatters import Column, Output, View, _render_table, _render_table_rich, cols


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _both(out: Output, view: View, terminal: bool = False) -> tuple[str, str]:
    made = _Terminal if terminal else io.StringIO
    fast, slow = made(), made()
    _render_table(out, fast, view)
    _render_table_rich(out, slow, view)
    return fast.getvalue(), slow.getvalue()


_WORDS = ["a", "orders", "scale-00", "1,2,3", "x y", "+4 -1", "", "none", "a-very-long-topic-name"]


def _value(rng: random.Random) -> object:
    kind = rng.randrange(7)
    if kind == 0:
        return rng.randrange(-5, 100_000)
    if kind == 1:
        return [rng.randrange(6) for _ in range(rng.randrange(4))]
    if kind == 2:
        return None
    if kind == 3:
        return rng.choice([True, False])
    if kind == 4:
        return " ".join(rng.choice(_WORDS) for _ in range(rng.randrange(1, 6)))
    if kind == 5:
        return "".join(rng.choice("abcxyz-._ ") for _ in range(rng.randrange(0, 60)))
    return rng.choice(_WORDS)


@pytest.mark.parametrize("seed", range(100))
def test_table_is_what_rich_draws(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    monkeypatch.setenv("COLUMNS", str(rng.choice([12, 30, 50, 80, 120, 250])))
    n = rng.randrange(1, 6)
    columns = [
        Column(f"col_{j}", justify=rng.choice(["left", "right"]), header=rng.choice([None, "H"]))
        for j in range(n)
    ]

    def row() -> dict[str, object]:
        # col_0 groups the rows (footer_by): a name, as group names are
        return {f"col_{j}": _value(rng) if j else rng.choice(_WORDS) for j in range(n)}

    rows = [row() for _ in range(rng.randrange(1, 30))]
    footer = [row() for _ in range(rng.randrange(0, 2))]
    out = Output(
        rows,
        columns,
        title=rng.choice([None, "Title", "a long title that is wider than the table itself"]),
        footer=footer,
        footer_by=rng.choice([None, "col_0"]),
    )
    view = View("table", headers=rng.random() < 0.8, color=rng.random() < 0.3)
    terminal = rng.random() < 0.3
    fast, slow = _both(out, view, terminal)
    assert fast == slow


@pytest.mark.parametrize(
    "text",
    ["[bold]x[/bold]", "ünïcode", "tab\there", "two\nlines", ":smile: face", "host:9092", "[1, 2]"],
)
def test_text_rich_interprets_is_drawn_as_rich_draws_it(text: str) -> None:
    out = Output([{"a": text, "b": 1}, {"a": "plain", "b": 22}], cols("a", "b:>"))
    fast, slow = _both(out, View("table"))
    assert fast == slow


def test_topics_describe_shape_at_small_size_is_unchanged() -> None:
    rows = [
        {"topic": "orders", "partition": p, "leader": 1, "replicas": [1, 2], "isr": [1, 2]}
        for p in range(3)
    ]
    out = Output(rows, cols("topic", "partition:>", "leader:>", "replicas", "isr"))
    fast, slow = _both(out, View("table"))
    assert fast == slow
    assert fast.splitlines()[:2] == [
        "TOPIC   PARTITION  LEADER  REPLICAS  ISR",
        "orders          0       1  1,2       1,2",
    ]


def _rows(n: int) -> list[dict[str, object]]:
    return [
        {"topic": f"scale-{i // 1000:02d}", "partition": i % 1000, "replicas": [i % 3], "r": ""}
        for i in range(n)
    ]


@pytest.mark.parametrize("title", [None, "a title"])
def test_rich_lays_out_a_few_cells_not_every_row(
    title: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """20,000 rows: rich sees at most the probe (per column the longest cell and the longest
    word), not the rows, and nothing at all where the table is plain text (no title, not a
    terminal); rich measuring and rendering each row was 0.4 ms a row."""
    from rich.table import Table

    added: list[int] = []
    plain_add_row = Table.add_row

    def counted(self: Table, *cells: object, **kw: object) -> None:
        added.append(1)
        plain_add_row(self, *cells, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Table, "add_row", counted)
    monkeypatch.setenv("COLUMNS", "120")
    columns = cols("topic", "partition:>", "replicas", "r")
    stream = io.StringIO()
    _render_table(Output(_rows(20_000), columns, title=title), stream, View("table"))
    assert len(stream.getvalue().splitlines()) == 20_001 + (title is not None)
    if title is None:
        assert added == []
    else:
        assert 0 < len(added) <= 2 * len(columns)


@pytest.mark.parametrize("columns_env", [None, "", "40", "x"])
def test_the_consoles_width_is_richs_with_or_without_columns(
    columns_env: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if columns_env is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns_env)
    for width in (30, 79, 81, 150):
        out = Output([{"a": "x" * width, "b": 1}, {"a": "y", "b": 22}], cols("a", "b:>"))
        fast, slow = _both(out, View("table"))
        assert fast == slow
