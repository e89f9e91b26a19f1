"""The layering contract (issue 25): the packages of ``shapeinfer/`` form layers, and a module
imports only from its own package's layer or from the layers below it; no import circle.

Every import is read with ``ast`` from the source (at module level, inside functions, under
``if TYPE_CHECKING:``, and ``importlib.import_module("literal")``), so an import that would run
upward only on some path is found too. ``python tests/test_layers.py`` prints the table and the
verdict.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "shapeinfer"
if str(ROOT) not in sys.path:  # run as a script (pytest puts the checkout on the path itself)
    sys.path.insert(0, str(ROOT))

from testkit.layers import LAYERS, layer_of  # noqa: E402


def modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the package: dotted name -> (file, is a package's __init__)."""
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        parts = list(p.relative_to(ROOT).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        out[".".join(parts)] = (p, is_pkg)
    return out


def imports(mods: dict[str, tuple[Path, bool]]) -> dict[str, dict[str, int]]:
    """module -> {imported shapeinfer module: line of the first such import}."""
    graph: dict[str, dict[str, int]] = {}
    for mod, (path, is_pkg) in mods.items():
        edges: dict[str, int] = {}
        base = mod.split(".") if is_pkg else mod.split(".")[:-1]

        def add(target: str, line: int, edges=edges) -> None:
            if (target == "shapeinfer" or target.startswith("shapeinfer.")) and target not in edges:
                edges[target] = line

        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                for a in node.names:
                    add(a.name, node.lineno)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    src = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
                else:
                    src = node.module or ""
                for a in node.names:
                    sub = f"{src}.{a.name}"
                    add(sub if sub in mods else src, node.lineno)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "import_module"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                add(node.args[0].value, node.lineno)
        edges.pop(mod, None)
        graph[mod] = edges
    return graph


def upward(graph: dict[str, dict[str, int]]) -> list[str]:
    """Imports into a higher layer or a sibling layer."""
    bad = []
    for mod, edges in graph.items():
        rank, name = layer_of(mod)
        for target, line in edges.items():
            trank, tname = layer_of(target)
            if trank > rank or (trank == rank and tname != name):
                bad.append(f"{mod} (layer {name}) imports {target} (layer {tname}) at line {line}")
    return bad


def circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph.get(start, ())))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in graph:
                    continue
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(graph[w])))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def table(mods, graph) -> str:
    rows = ["rank  layer      modules  imports  packages"]
    for rank, name, prefixes in LAYERS:
        members = [m for m in mods if layer_of(m)[1] == name]
        n_edges = sum(len(graph[m]) for m in members)
        rows.append(f"{rank:>4}  {name:<9}  {len(members):>7}  {n_edges:>7}  {', '.join(prefixes)}")
    return "\n".join(rows)


def test_every_module_is_in_a_layer():
    for mod in modules():
        layer_of(mod)


def test_no_import_runs_upward():
    mods = modules()
    graph = imports(mods)
    print(table(mods, graph))
    bad = upward(graph)
    assert not bad, "imports from a higher layer:\n" + "\n".join(bad)


def test_no_import_circle():
    graph = imports(modules())
    found = circles(graph)
    assert not found, "import circles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_check_finds_what_it_looks_for():
    """The checks fail on an upward import and on a circle (built graphs, not the package)."""
    g = {"shapeinfer.io.writer": {"shapeinfer.inference.engine": 3}, "shapeinfer.inference.engine": {}}
    assert upward(g) == [
        "shapeinfer.io.writer (layer io) imports shapeinfer.inference.engine (layer inference) at line 3"
    ]
    g = {"shapeinfer.lint.a": {"shapeinfer.analysis.b": 1}, "shapeinfer.analysis.b": {}}
    assert len(upward(g)) == 1  # siblings
    g = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}
    assert circles(g) == [["a", "b", "c"]]


def test_no_alias_modules():
    """Every module is its own code: none replaces itself with another in `sys.modules`."""
    aliases = [p.name for p in PKG.rglob("*.py") if "sys.modules[__name__]" in p.read_text()]
    assert aliases == []


if __name__ == "__main__":
    mods = modules()
    graph = imports(mods)
    print(table(mods, graph))
    bad, found = upward(graph), circles(graph)
    print(f"\n{len(mods)} modules, {sum(map(len, graph.values()))} imports between them")
    print(f"imports from a higher layer: {len(bad)}")
    print("\n".join("  " + b for b in bad))
    print(f"import circles: {len(found)}")
    print("\n".join("  " + " <-> ".join(c) for c in found))
    sys.exit(1 if bad or found else 0)
