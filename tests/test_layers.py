"""The shape of kctl's imports (docs/design.md): no import circles, each layer imports only the
layers below it, and the pure layers import no client library.

Read from the source with ``ast``; nothing of kctl is imported. Every import statement counts,
at module level or inside a function, plus ``importlib.import_module``/``__import__`` calls
whose name starts with a literal (``f"kctl.commands.{name}"`` is an import of the package
``kctl.commands``). Imports under ``if TYPE_CHECKING:`` never run, so they cannot close a circle
at run time: the circle check leaves them out. They still say which layer a module leans on, so
the layer and client-library checks count them.

``from kctl.dump import files`` is an import of ``kctl.dump.files`` (the module), not of the
package ``kctl.dump``; ``from kctl.dump import Thing`` is an import of ``kctl.dump`` itself.
Python imports the parent packages first as well; those implicit imports are not counted (a
package's ``__init__`` importing its own modules is no circle)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "kctl"

# The floors, from the top down. A module may import modules of lower floors, and of its own
# floor only within its own group (a group: one package, or the root modules that share a
# floor). Groups side by side on one floor are independent: neither imports the other. A
# pattern "p.*" is the package p and everything in it; any other pattern names one module.
LAYERS: list[tuple[str, list[list[str]]]] = [
    ("entry", [["kctl.__main__", "kctl.entry"]]),
    ("cli", [["kctl.cli"]]),
    ("commands", [["kctl.commands.*"]]),
    # Renderers, called by commands only (so above every package commands call); they render
    # the dump pipeline's documents (kctl/formatters/dump.py imports kctl.dump.model) and
    # logfmt's records, so they stand above those.
    ("formatters", [["kctl.formatters.*"]]),
    # The local cluster asks the brokers it started about themselves (kctl.broker.cluster).
    ("local", [["kctl.local.*"]]),
    # broker: the one package that talks to a broker; uses reassign and elect (plans, rows, the
    # wave run's sequence), replicas (the snapshot model), lag (arithmetic) and produce (input
    # lines). analytics (Spark) uses lag (the sample).
    # registry: the HTTP client of a Schema Registry (beside broker: neither imports the other).
    (
        "broker, analytics, registry",
        [["kctl.broker.*"], ["kctl.analytics.*"], ["kctl.registry.*"]],
    ),
    # Pure, named after their commands: partitions reassign (the planner over a cluster
    # snapshot of kctl.replicas.model, plan files, the run in waves with its I/O handed in,
    # the rows) and partitions elect-leaders (the election's rules and options).
    ("reassign, elect", [["kctl.reassign.*"], ["kctl.elect.*"]]),
    # Pure rules of replica health over cluster snapshots and replica logs; compare reads
    # segment files through kctl.dump.files and decodes them with kctl.logfmt.
    ("replicas", [["kctl.replicas.*"]]),
    ("dump, lag, produce", [["kctl.dump.*"], ["kctl.lag.*"], ["kctl.produce.*"]]),
    # schemas: Confluent's wire format and the Avro/Protobuf/JSON Schema codecs, pure, beside
    # logfmt (the decoders of Kafka's own formats).
    ("logfmt, schemas", [["kctl.logfmt.*"], ["kctl.schemas.*"]]),
    # The ground floor anyone may use.
    (
        "ground",
        [
            [
                "kctl",  # the package's face (__version__)
                "kctl.errors",
                "kctl.parsing",
                "kctl.inputs",  # the one reader of input files (docs/limits.md)
                "kctl.arguments",  # the command line's boundary: text, paths, number widths
                "kctl.config",
                "kctl.environment",
                "kctl.runtime.*",
                "kctl._native",  # the optional C extension (kctl/_native.c, its .pyi)
            ]
        ],
    ),
]

CLIENT_LIBRARIES = ("confluent_kafka", "kafka", "pyspark", "pyarrow")
PURE = [
    "kctl.logfmt.*",
    "kctl.replicas.*",
    "kctl.reassign.*",
    "kctl.elect.*",
    "kctl.lag.*",
    "kctl.produce.*",
    "kctl.dump.*",
    "kctl.schemas.*",
    "kctl.parsing",
    "kctl.inputs",
]
# The analytics package is the lag pipeline written as Spark DataFrame functions: pyspark (and
# pyarrow, Spark's columnar format) is what it is made of, but it talks to no broker.
KAFKA_CLIENTS = ("confluent_kafka", "kafka")
SPARK_ONLY = ["kctl.analytics.*"]
# (module, library) pairs that break the pure rule today, each with why. An entry that no
# longer matches fails the test, so that it is deleted.
PURE_EXCEPTIONS: dict[tuple[str, str], str] = {
    # `groups lag --record x.parquet` writes the lag sample as Parquet here (pyarrow inside
    # _record_parquet only): file output in the pure sample contract. Outside the change that
    # wrote this test; delete the entry when the Parquet writer moves out of kctl.lag.
    ("kctl.lag.samples", "pyarrow"): "Parquet writer of the lag sample",
}


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    path: Path
    line: int
    target: str  # a kctl module, or the name as written for anything else
    type_checking: bool

    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    for stub in [*PACKAGE.rglob("*.pyi"), *PACKAGE.rglob("*.c")]:
        name = ".".join(stub.relative_to(ROOT).with_suffix("").parts)
        found.setdefault(name, stub)  # an extension module: no Python imports to read
    return found


MODULES = _modules()


def _resolve(name: str) -> str:
    """The kctl module ``name`` lands in (the longest prefix that is one), else ``name``."""
    probe = name
    while probe:
        if probe in MODULES:
            return probe
        probe = probe.rpartition(".")[0]
    return name


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _literal_prefix(arg: ast.expr) -> str | None:
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values:
        first = arg.values[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value.rstrip(".")
    return None


def _imports_of(module: str, path: Path) -> Iterator[Import]:
    if path.suffix != ".py":
        return
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def visit(node: ast.AST, guarded: bool) -> Iterator[Import]:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                yield from visit(child, True)
            for child in node.orelse:
                yield from visit(child, guarded)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, path, node.lineno, _resolve(alias.name), guarded)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                target = full if full in MODULES else _resolve(base)
                yield Import(module, path, node.lineno, target, guarded)
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in ("import_module", "__import__"):
                literal = _literal_prefix(node.args[0])
                if literal:
                    yield Import(module, path, node.lineno, _resolve(literal), guarded)
        for child in ast.iter_child_nodes(node):
            yield from visit(child, guarded)

    yield from visit(ast.parse(path.read_text(), str(path)), False)


IMPORTS = [imp for module, path in MODULES.items() for imp in _imports_of(module, path)]


def _matches(module: str, pattern: str) -> bool:
    if pattern.endswith(".*"):
        return module == pattern[:-2] or module.startswith(pattern[:-1])
    return module == pattern


def _place(module: str) -> tuple[int, int] | None:
    """(floor, group) of a kctl module; floor 0 is the top."""
    for floor, (_, groups) in enumerate(LAYERS):
        for group, patterns in enumerate(groups):
            if any(_matches(module, p) for p in patterns):
                return floor, group
    return None


def _kctl_edges(*, runtime_only: bool) -> dict[str, list[Import]]:
    edges: dict[str, list[Import]] = {m: [] for m in MODULES}
    for imp in IMPORTS:
        inside = imp.target in MODULES and imp.target != imp.source
        if inside and not (runtime_only and imp.type_checking):
            edges[imp.source].append(imp)
    return edges


def _circles(edges: dict[str, list[Import]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    work: list[tuple[str, Iterator[str]]] = []
    found: list[list[str]] = []

    def enter(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        work.append((node, iter(sorted({i.target for i in edges[node]}))))

    for root in sorted(edges):
        if root in index:
            continue
        enter(root)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    enter(target)
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def _describe_circle(component: list[str], edges: dict[str, list[Import]]) -> str:
    inside = set(component)
    lines = [f"import circle of {len(component)} modules:"]
    lines += [f"  {MODULES[m].relative_to(ROOT)}" for m in component]
    lines += ["  tied by:"]
    lines += [
        f"    {imp.where()} imports {imp.target}"
        for m in component
        for imp in edges[m]
        if imp.target in inside
    ]
    return "\n".join(lines)


def test_no_import_circle_between_kctl_modules() -> None:
    edges = _kctl_edges(runtime_only=True)
    circles = _circles(edges)
    assert not circles, "\n\n".join(_describe_circle(c, edges) for c in circles)


def test_every_kctl_module_has_a_floor() -> None:
    unplaced = [str(path.relative_to(ROOT)) for m, path in MODULES.items() if _place(m) is None]
    assert not unplaced, f"modules on no floor of LAYERS (place them): {unplaced}"


def test_no_module_imports_a_higher_layer() -> None:
    problems = []
    for imp in IMPORTS:
        if imp.target not in MODULES or imp.target == imp.source:
            continue
        source, target = _place(imp.source), _place(imp.target)
        if source is None or target is None:
            continue  # test_every_kctl_module_has_a_floor names them
        floor = LAYERS[source[0]][0]
        if target[0] < source[0]:
            problems.append(
                f"{imp.where()} imports {imp.target}: floor '{LAYERS[target[0]][0]}' "
                f"is above '{floor}' ({imp.source})"
            )
        elif target[0] == source[0] and target[1] != source[1]:
            problems.append(
                f"{imp.where()} imports {imp.target}: a neighbour on floor '{floor}' "
                f"({imp.source}); groups side by side do not import each other"
            )
    assert not problems, "imports against the layers:\n" + "\n".join(dict.fromkeys(problems))


def _library(name: str) -> str | None:
    top = name.partition(".")[0]
    return top if top in CLIENT_LIBRARIES else None


def test_pure_layers_import_no_client_library() -> None:
    problems = []
    excused: set[tuple[str, str]] = set()
    for imp in IMPORTS:
        library = _library(imp.target)
        if library is None or not any(_matches(imp.source, p) for p in PURE):
            continue
        if (imp.source, library) in PURE_EXCEPTIONS:
            excused.add((imp.source, library))
            continue
        problems.append(f"{imp.where()} imports {imp.target} ({imp.source} is a pure layer)")
    assert not problems, "client libraries in pure layers:\n" + "\n".join(dict.fromkeys(problems))
    stale = set(PURE_EXCEPTIONS) - excused
    assert not stale, f"PURE_EXCEPTIONS lists imports that are gone; delete them: {stale}"


def test_analytics_talks_to_no_broker() -> None:
    problems = [
        f"{imp.where()} imports {imp.target} ({imp.source} is Spark code, not a Kafka client)"
        for imp in IMPORTS
        if imp.target.partition(".")[0] in KAFKA_CLIENTS
        and any(_matches(imp.source, p) for p in SPARK_ONLY)
    ]
    assert not problems, "Kafka clients in analytics:\n" + "\n".join(dict.fromkeys(problems))


def test_the_reader_sees_every_kind_of_import(tmp_path: Path) -> None:
    """What the checks rely on, on a module written here: imports inside functions, relative
    ones, ``from package import module``, import_module with a literal prefix, and those under
    TYPE_CHECKING marked apart (its ``else`` branch runs)."""
    source = tmp_path / "example.py"
    source.write_text(
        "from __future__ import annotations\n"
        "import importlib\n"
        "from typing import TYPE_CHECKING\n"
        "from kctl.broker import kafka_python\n"
        "from . import topics\n"
        "if TYPE_CHECKING:\n"
        "    from kctl.broker.cluster_view import ClusterView\n"
        "else:\n"
        "    from kctl.errors import KctlError\n"
        "def run(name):\n"
        "    from kctl.replicas.model import ClusterSnapshot\n"
        "    import confluent_kafka.admin\n"
        '    return importlib.import_module(f"kctl.commands.{name}")\n'
    )
    found = {(i.target, i.type_checking) for i in _imports_of("kctl.broker.example", source)}
    assert found == {
        ("__future__", False),
        ("importlib", False),
        ("typing", False),
        ("kctl.broker.kafka_python", False),
        ("kctl.broker.topics", False),
        ("kctl.broker.cluster_view", True),
        ("kctl.errors", False),
        ("kctl.replicas.model", False),
        ("confluent_kafka.admin", False),
        ("kctl.commands", False),
    }


def test_the_circle_finder_names_the_modules_of_each_circle() -> None:
    def edge(source: str, target: str) -> Import:
        return Import(source, PACKAGE / "x.py", 1, target, False)

    edges = {
        "a": [edge("a", "b")],
        "b": [edge("b", "c"), edge("b", "d")],
        "c": [edge("c", "a")],
        "d": [edge("d", "e")],
        "e": [edge("e", "d")],
        "f": [edge("f", "a")],
    }
    assert sorted(_circles(edges)) == [["a", "b", "c"], ["d", "e"]]
    assert _circles({"a": [edge("a", "b")], "b": []}) == []
