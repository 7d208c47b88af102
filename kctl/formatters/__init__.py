"""Renderers: commands hand an :class:`Output` (rows + column spec, and optionally a nested
document for json/yaml); one renderer per format writes it to stdout. Nothing else prints data.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import starmap
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kctl.environment import Environment


@dataclass(frozen=True)
class Column:
    key: str
    header: str | None = None
    justify: str = "left"  # left | right
    style: str | None = None

    @property
    def title(self) -> str:
        return self.header or self.key.upper().replace("_", "-")


@dataclass
class Output:
    """What a command produced. ``rows`` feed table/plain/csv (flat); ``doc`` feeds json/yaml
    (defaults to ``rows``) and jsonl (one line per item of a list ``doc``)."""

    rows: Sequence[Mapping[str, Any]]
    columns: Sequence[Column]
    doc: Any = None
    title: str | None = None
    footer: Sequence[Mapping[str, Any]] = field(default_factory=list)  # e.g. a totals row
    # With several groups of rows (e.g. consumer groups), each footer row goes right under the
    # last row whose value of this key it shares, instead of all at the end.
    footer_by: str | None = None
    # What ``-o name`` prints, one per line: this key's values (default: the first column's).
    name_key: str | None = None

    def document(self) -> Any:
        return self.rows if self.doc is None else self.doc


@dataclass(frozen=True)
class View:
    """How the user asked to see output (-o, --no-headers, --no-color): built at the command
    boundary and handed to :func:`emit` with the data."""

    format: str = "plain"
    headers: bool = True
    color: bool = False

    @classmethod
    def of(cls, env: Environment) -> View:
        return cls(env.output_format(), not env.no_headers, env.use_color())


def cols(*specs: str | Column) -> list[Column]:
    """Shorthand: ``cols("topic", "partition:>")`` — a trailing ``:>`` right-justifies."""
    out = []
    for spec in specs:
        if isinstance(spec, Column):
            out.append(spec)
        elif spec.endswith(":>"):
            out.append(Column(spec[:-2], justify="right"))
        else:
            out.append(Column(spec))
    return out


def cell(value: Any) -> str:
    """A value as text for table/plain/csv cells."""
    kind = type(value)
    if kind is str:
        return value  # type: ignore[no-any-return]
    if kind is int:
        return str(value)
    if kind is list and all(type(v) is int for v in value):
        return ",".join(map(str, value))
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple | set | frozenset):
        return ",".join(cell(v) for v in value)
    if isinstance(value, dict):
        return ",".join(f"{k}={cell(v)}" for k, v in value.items())
    return str(value)


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def to_json(doc: Any, *, indent: bool = True) -> str:
    import orjson

    opt = orjson.OPT_NON_STR_KEYS | (orjson.OPT_INDENT_2 if indent else 0)
    try:
        return orjson.dumps(doc, default=_json_default, option=opt).decode()
    except TypeError as exc:
        if "surrogates" not in str(exc):
            raise
        # A file name that is not UTF-8 (kctl takes any path the file system allows): its
        # undecodable bytes as \xNN, since JSON strings are Unicode.
        return orjson.dumps(_unicode(doc), default=_json_default, option=opt).decode()


def write_json(path: Path, doc: Any, what: str) -> None:
    """``doc`` as JSON (:func:`to_json`) into the file ``path`` that the option ``what`` names
    (``--report``, ``--current-file``); a KctlError when it cannot be written."""
    from kctl.errors import KctlError

    try:
        path.write_text(to_json(doc) + "\n")
    except OSError as exc:
        raise KctlError(f"cannot write {what} {path}", exc.strerror) from None


def _unicode(value: Any) -> Any:
    """``value`` with every string's surrogate escapes (bytes that were not UTF-8) as ``\\xNN``."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if isinstance(value, dict):
        return {_unicode(k): _unicode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_unicode(v) for v in value]
    return value


def _render_json(out: Output, stream: IO[str], view: View) -> None:
    stream.write(to_json(out.document()) + "\n")


def _render_jsonl(out: Output, stream: IO[str], view: View) -> None:
    doc = out.document()
    items = doc if isinstance(doc, list) else [doc]
    stream.write("".join(to_json(item, indent=False) + "\n" for item in items))


def _render_yaml(out: Output, stream: IO[str], view: View) -> None:
    # Round-trip through JSON so bytes/tuples become plain data, exactly as -o json shows them.
    import orjson
    import yaml

    data = orjson.loads(to_json(out.document(), indent=False))
    stream.write(
        yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)
    )


def _render_csv(out: Output, stream: IO[str], view: View) -> None:
    import csv

    writer = csv.writer(stream, lineterminator="\n")
    if view.headers:
        writer.writerow([c.key for c in out.columns])
    for row in out.rows:
        writer.writerow([cell(row.get(c.key)) for c in out.columns])


def _plain_cell(value: Any) -> str:
    text = cell(value)
    if "\t" in text or "\n" in text:
        return text.replace("\t", " ").replace("\n", " ")
    return text


def _with_footer(out: Output) -> list[tuple[Mapping[str, Any], bool]]:
    """Rows then footer rows, as (row, is_footer); with ``footer_by``, each footer row right
    after the last row of its group (footer rows of no group stay at the end)."""
    if not out.footer_by:
        return [(r, False) for r in out.rows] + [(r, True) for r in out.footer]
    key = out.footer_by
    last: dict[Any, int] = {row.get(key): i for i, row in enumerate(out.rows)}
    after: dict[int, list[Mapping[str, Any]]] = {}
    tail: list[Mapping[str, Any]] = []
    for row in out.footer:
        at = last.get(row.get(key))
        (tail if at is None else after.setdefault(at, [])).append(row)
    placed: list[tuple[Mapping[str, Any], bool]] = []
    for i, row in enumerate(out.rows):
        placed.append((row, False))
        placed += [(f, True) for f in after.get(i, [])]
    return placed + [(f, True) for f in tail]


def _render_name(out: Output, stream: IO[str], view: View) -> None:
    """Names only, one per line, each once, no header (kubectl's ``-o name``), for ``| xargs``."""
    key = out.name_key or (out.columns[0].key if out.columns else None)
    if key is None:
        return
    names = dict.fromkeys(cell(row.get(key)) for row in out.rows)
    stream.write("".join(f"{name}\n" for name in names if name))


def _row_texts(out: Output) -> list[list[str]]:
    """Each row (footer rows placed) as its cells' texts."""
    keys = [c.key for c in out.columns]
    return [
        [v if type(v) is str else cell(v) for v in map(row.get, keys)]
        for row, _footer in _with_footer(out)
    ]


def _render_plain(out: Output, stream: IO[str], view: View) -> None:
    lines = []
    if view.headers:
        lines.append("\t".join(c.title for c in out.columns))
    tabs = len(out.columns) - 1
    for texts in _row_texts(out):
        line = "\t".join(texts)
        if line.count("\t") != tabs or "\n" in line:  # a cell's own tab or newline: a blank
            line = "\t".join(_plain_cell(t) for t in texts)
        lines.append(line)
    stream.write("".join(line + "\n" for line in lines))


def _table_parts(out: Output, view: View, stream: IO[str]) -> tuple[Any, Any]:
    """The rich console and an empty table with ``out``'s title and columns, as ``-o table``
    draws them."""
    from rich.console import Console
    from rich.table import Table

    console = Console(file=stream, no_color=not view.color, highlight=False, soft_wrap=False,
                      width=_console_width())  # fmt: skip
    table = Table(
        title=out.title,
        title_style="italic" if view.color else "none",
        show_header=view.headers,
        header_style="bold" if view.color else None,
        box=None,
        pad_edge=False,
        show_footer=False,
    )
    for c in out.columns:
        table.add_column(c.title, justify=c.justify, style=c.style, overflow="fold")  # type: ignore[arg-type]
    return console, table


def _render_table_rich(out: Output, stream: IO[str], view: View) -> None:
    """The table drawn by rich, every cell measured and rendered as a renderable: the reference
    :func:`_render_table` reproduces, and what it falls back to where it cannot."""
    console, table = _table_parts(out, view, stream)
    previous_footer = False
    for row, footer in _with_footer(out):
        if footer and not previous_footer and not out.footer_by:
            table.add_section()
        table.add_row(
            *(cell(row.get(c.key)) for c in out.columns), style="bold" if footer else None
        )
        previous_footer = footer
    console.print(table)


def _render_table(out: Output, stream: IO[str], view: View) -> None:
    """``-o table``: rich's layout (column widths, folding, header and title) at a cost linear in
    the rows. rich measures and renders every cell as a renderable (~0.4 ms a row: 8 s for 20,000
    partitions); here rich lays out the header and a probe table of the few cells that decide
    the column widths (per column the longest cell and the one with the longest word), and the
    rows are written as padded text, a cell wider than its column folded by rich's own wrapping.
    Output is identical to rich's (tests compare them); tables this cannot write as plain text
    (non-ASCII or control characters, markup or emoji codes rich would interpret, styled rows on
    a terminal, a layout wider than the console) are drawn by rich itself."""
    texts = _row_texts(out)
    if not texts or not out.columns:
        _render_table_rich(out, stream, view)
        return
    written = _text_table(out, view, stream, texts)
    if written is not None:
        stream.write(written)
        return
    console, probe = _table_parts(out, view, stream)
    if console.is_terminal and out.footer:
        _render_table_rich(out, stream, view)  # bold footer rows: escape codes rich writes
        return
    n = len(out.columns)
    longest: list[int] = []
    probe_rows: set[int] = set()
    blanks = False
    for column in zip(*texts, strict=True):  # column by column, in C where it can be
        blob = "".join(column)
        if not (blob.isascii() and blob.isprintable()):
            _render_table_rich(out, stream, view)
            return
        if "[" in blob or blob.count(":") > 1:  # markup, or an emoji code (:name:)
            for text in column:
                if ("[" in text or text.count(":") > 1) and not _literal(console, text):
                    _render_table_rich(out, stream, view)
                    return
        sizes = list(map(len, column))
        size = max(sizes)
        longest.append(size)
        probe_rows.add(sizes.index(size))
        if " " in blob:  # rich's narrowest width for a cell is its longest word
            blanks = True
            words = [
                max(map(len, text.split()), default=0) if " " in text else len(text)
                for text in column
            ]
            probe_rows.add(words.index(max(words)))
    for i in sorted(probe_rows):
        probe.add_row(*texts[i])
    widths = probe._calculate_column_widths(console, console.options)
    lefts = [0 if j == 0 else 1 for j in range(n)]
    rights = [0 if j == n - 1 else 1 for j in range(n)]
    inner = [w - a - b for w, a, b in zip(widths, lefts, rights, strict=True)]
    if sum(widths) > console.width or min(inner) < 1:
        # rich crops such lines at the console's width, or has no room for a cell's text
        _render_table_rich(out, stream, view)
        return
    head = _table_head(out, view, console, inner)
    # Where no cell is wider than its column, a row without blanks is one format call.
    template = (
        "  ".join(
            f"{{{j}:{'>' if c.justify == 'right' else '<'}{w}}}"
            for j, (c, w) in enumerate(zip(out.columns, inner, strict=True))
        )
        if all(size <= w for size, w in zip(longest, inner, strict=True))
        else None
    )
    if template is not None and not blanks:
        lines = list(starmap(template.format, texts))
    else:
        lines = []
        for row_texts in texts:
            if template is not None and " " not in "".join(row_texts):
                lines.append(template.format(*row_texts))
            else:
                lines += _table_row(console, out.columns, row_texts, inner, widths)
    lines.append("")
    stream.write(head + "\n".join(lines))


# What makes rich treat a stream that is not a terminal as one (colours, styles) or size it
# otherwise: then rich lays the table out (below), never this shortcut.
_RICH_ENVIRONMENT = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "JUPYTER_COLUMNS")


# The console width of a table no terminal will show (no $COLUMNS, no terminal on stdin,
# stdout or stderr: a file, a pipe to another program, a CI log): each column as wide as its
# widest cell, nothing folded. rich's own fallback, 80 columns, folds every cell of a wide table
# ("COMMITT/ED-OFFS/ET") and costs a wrap per cell.
NO_TERMINAL_WIDTH = 1 << 16


def _console_width() -> int:
    """The width tables are laid out in: $COLUMNS when it is a number, else the size of the
    first of stdin, stdout, stderr that is a terminal (rich's rule on Linux), else
    :data:`NO_TERMINAL_WIDTH` (rich would take 80)."""
    import os

    columns = os.environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        return int(columns)
    for fd in (0, 1, 2):
        try:
            return os.get_terminal_size(fd).columns or 80
        except (AttributeError, ValueError, OSError):
            continue
    return NO_TERMINAL_WIDTH


def _text_table(out: Output, view: View, stream: IO[str], texts: list[list[str]]) -> str | None:
    """The table as rich draws it, without rich, where that is plain text: written to a file
    or pipe (no escape codes), no title, ASCII printable cells rich shows as they are (no
    ``[`` markup, no ``:emoji:`` code) and a natural width within the console's (rich then gives
    each column its widest cell and header plus padding, and folds nothing). None otherwise."""
    import os

    isatty = getattr(stream, "isatty", None)
    if out.title or (isatty is not None and isatty()) or sys.platform == "win32":
        return None
    if any(name in os.environ for name in _RICH_ENVIRONMENT):
        return None
    titles = [c.title for c in out.columns] if view.headers else None
    n = len(out.columns)
    widths = []
    for j, column in enumerate(zip(*texts, strict=True)):
        blob = "".join(column)
        if titles is not None:
            blob += titles[j]
        if not (blob.isascii() and blob.isprintable()) or "[" in blob or blob.count(":") > 1:
            return None
        longest = max(map(len, column))
        if titles is not None:
            longest = max(longest, len(titles[j]))
        widths.append((longest + (j > 0) + (j < n - 1)) or 1)
    if sum(widths) > _console_width():
        return None
    inner = [w - (j > 0) - (j < n - 1) for j, w in enumerate(widths)]
    if min(inner) < 1:
        return None
    template = "  ".join(
        f"{{{j}:{'>' if c.justify == 'right' else '<'}{w}}}"
        for j, (c, w) in enumerate(zip(out.columns, inner, strict=True))
    )
    rows = [titles, *texts] if titles is not None else texts
    lines = [
        template.format(
            *(
                t.rstrip() if c.justify == "right" else t
                for t, c in zip(row, out.columns, strict=True)
            )
        )
        if " " in "".join(row)
        else template.format(*row)
        for row in rows
    ]
    lines.append("")
    return "\n".join(lines)


def _table_row(
    console: Any, columns: Sequence[Column], texts: list[str], inner: list[int], widths: list[int]
) -> list[str]:
    """The lines of one row: each cell padded (pad_edge off: no padding outside the first and
    last columns) and justified to its column, one wider than its column folded."""
    last = len(columns) - 1
    cells: list[list[str]] = []
    for j, s in enumerate(texts):
        w = inner[j]
        left = "" if j == 0 else " "
        right = "" if j == last else " "
        justify = columns[j].justify
        if len(s) <= w:
            text = s.rstrip().rjust(w) if justify == "right" else s.ljust(w)
            cells.append([left + text + right])
        else:
            cells.append([left + piece + right for piece in _fold(console, s, w, justify)])
    height = max(len(c) for c in cells)
    if height == 1:
        return ["".join(c[0] for c in cells)]
    return [
        "".join(c[k] if k < len(c) else " " * widths[j] for j, c in enumerate(cells))
        for k in range(height)
    ]


def _literal(console: Any, text: str) -> bool:
    """Whether rich shows ``text`` as it is (no console markup, no emoji code it replaces)."""
    rendered = console.render_str(text)
    return bool(rendered.plain == text and not rendered.spans)


def _fold(console: Any, text: str, width: int, justify: str) -> list[str]:
    """``text`` folded to ``width`` as rich folds a table cell (its own wrapping), each line
    padded to ``width``."""
    from rich.text import Text

    lines = Text(text).wrap(console, width, justify=justify, overflow="fold")  # type: ignore[arg-type]
    return [
        line.plain.ljust(width) if justify != "right" else line.plain.rjust(width) for line in lines
    ]


def _table_head(out: Output, view: View, console: Any, inner: list[int]) -> str:
    """The title and header lines rich draws for columns of these (content) widths, as
    ``console`` writes them (with its escape codes on a terminal)."""
    if not view.headers and not out.title:
        return ""
    _, table = _table_parts(out, view, console.file)
    for column, width in zip(table.columns, inner, strict=True):
        column.width = width
    with console.capture() as captured:
        console.print(table)
    return str(captured.get())


RENDERERS: dict[str, Callable[[Output, IO[str], View], None]] = {
    "table": _render_table,
    "plain": _render_plain,
    "json": _render_json,
    "jsonl": _render_jsonl,
    "yaml": _render_yaml,
    "csv": _render_csv,
    "name": _render_name,
}


def emit(out: Output, view: View, stream: IO[str] | None = None) -> None:
    """Write ``out`` to stdout as ``view`` says."""
    RENDERERS[view.format](out, stream or sys.stdout, view)
