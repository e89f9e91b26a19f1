"""A model's shape contract and what changed between two of them (``shapeinfer diff``).

The contract of a model is what a caller can rely on: its graph inputs and outputs by name, in
order, each with its type and dims, the guards inference needs of the input sizes and the ranges
they imply. It is read from an inference :class:`~shapeinfer.inference.engine.Result`:

- input dims are the model's declarations as inference reads them (a placeholder such as ``?``
  is its own unknown, ``<input>_d<axis>``);
- output dims are what inference *proves*, in the input symbols. A dim it cannot express in
  them (a fresh symbol, an exporter's name for an output dim that no input has) is unknown,
  written ``?``: a declaration is a claim, not part of the contract;
- input symbols are matched by position (input name, axis): ``batch`` in one model and ``N``
  in the other at the same place are the same size, so a rename is no change. Two places that
  share a symbol in one model and not in the other are a change (the sizes were tied, now free,
  or the other way round);
- guards that only keep a size exact in floating point (``seq <= 16777216`` where a Cast to
  float32 reads it) are inference's reading of a float computation, not a condition the model
  puts on its inputs: they are kept apart (``Contract.precision``) and not compared.

:func:`compare` lists the changes; an empty list means the same contract. Unknown against
unknown is no change (nothing was promised either way); a dim that becomes unknown, or known,
is one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from shapeinfer.base import codes
from shapeinfer.inference.declarations import dtype_text
from shapeinfer.inference.engine import Result
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact
from shapeinfer.symbolic.guards import Guard

__all__ = ["Change", "Contract", "Port", "compare", "contract_of"]

UNKNOWN = "?"


@dataclass(frozen=True)
class Port:
    """One graph input or output: ``type`` in onnx's spelling (``tensor(float)``,
    ``seq(tensor(int64))``; ``?`` when not known), ``dims`` None for an unknown rank, each dim an
    int, an expression in the input symbols, or None for unknown."""

    name: str
    type: str
    dims: tuple[D.Dim | None, ...] | None


@dataclass
class Contract:
    """A model's inputs and outputs (in graph order), guards (as :class:`Guard`) and the range of
    each input symbol that the guards and the caller's ranges give."""

    inputs: list[Port]
    outputs: list[Port]
    guards: list[Guard] = field(default_factory=list)
    ranges: dict[str, tuple[int, int | None]] = field(default_factory=dict)
    #: guards that only say a size stays exact in floating point (``seq <= 16777216`` from a Cast
    #: to float32, G012): inference's reading of a float computation, not something the model
    #: asks of its inputs; kept here, not compared (a rewrite that moves the Cast moves them)
    precision: list[Guard] = field(default_factory=list)


@dataclass(frozen=True)
class Change:
    """One difference: ``where`` (``input x``, ``output logits``, ``inputs``, ``outputs``,
    ``guards``, ``ranges``), ``what`` (``dim 0``, ``type``, ``rank``, ``added``, ...), and the
    old and new values as text (``-`` where there is none)."""

    where: str
    what: str
    old: str
    new: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what} {self.old} -> {self.new}"


def type_text(f: Fact | None) -> str:
    """A fact's type in onnx's spelling, ``?`` where not known."""
    if f is None:
        return UNKNOWN
    if f.kind == "tensor":
        return f"tensor({dtype_text(f.dtype)})"
    if f.kind in ("sequence", "optional"):
        inner = type_text(f.elem)
        return f"{'seq' if f.kind == 'sequence' else 'optional'}({inner})"
    if f.kind == "map":
        return f"map({dtype_text(f.dtype)}, {type_text(f.elem)})"
    return f"{f.kind}({dtype_text(f.dtype)})"


def contract_of(result: Result) -> Contract:
    """The contract of the model ``result`` was inferred for (see the module's doc)."""
    graph = result.model.graph
    inits = {t.name for t in graph.initializer}
    syms = set(result.input_symbols)

    def port(name: str, is_input: bool) -> Port:
        f = result.facts.get(name)
        if f is None or f.shape is None or f.kind != "tensor":
            return Port(name, type_text(f), None)
        dims = tuple(d if is_input or D.symbols(d) <= syms else None for d in f.shape)
        return Port(name, type_text(f), dims)

    inputs = [port(v.name, True) for v in graph.input if v.name not in inits]
    outputs = [port(v.name, False) for v in graph.output]
    exact_nodes = {d.node for d in result.diagnostics if d.code == codes.ASSUMED_EXACT_FLOAT and d.node}
    guards, precision = [], []
    for g in result.guards():
        float_limit = g.kind == "bound" and type(g.rhs) is int and g.rhs >= _FLOAT_EXACT - 1
        (precision if float_limit and g.nodes and set(g.nodes) <= exact_nodes else guards).append(g)
    ranges = dict(result.ranges())
    for g in precision:  # the top a precision guard sets is no range the model asks for
        s = D.format(g.lhs)
        if s in ranges and ranges[s][1] is not None and ranges[s][1] >= g.rhs - 1:
            ranges[s] = (ranges[s][0], None, *ranges[s][2:])
    return Contract(inputs, outputs, guards, ranges, precision)


#: the smallest bound a float-exactness assumption sets (float32: every integer up to 2**24)
_FLOAT_EXACT = 2**24


def _text(d: D.Dim | None) -> str:
    return UNKNOWN if d is None else D.format(d)


def _dims_text(dims: tuple[D.Dim | None, ...] | None) -> str:
    return UNKNOWN if dims is None else "[" + ", ".join(_text(d) for d in dims) + "]"


def _symbol_places(ports: list[Port]) -> dict[tuple[str, int], str]:
    """(input, axis) -> the symbol that axis is, for axes that are one plain symbol."""
    out = {}
    for p in ports:
        for k, d in enumerate(p.dims or ()):
            if D.is_symbolic(d) and len(D.symbols(d)) == 1 and D.format(d) in D.symbols(d):
                out[(p.name, k)] = D.format(d)
    return out


def _match_symbols(old: list[Port], new: list[Port]) -> tuple[dict[str, D.Dim], list[Change]]:
    """The renaming of new's input symbols into old's, by position, and the changes in which
    places share a symbol."""
    po, pn = _symbol_places(old), _symbol_places(new)
    both = sorted(set(po) & set(pn))
    by_new: dict[str, list[tuple[str, int]]] = {}
    by_old: dict[str, list[tuple[str, int]]] = {}
    for place in both:
        by_new.setdefault(pn[place], []).append(place)
        by_old.setdefault(po[place], []).append(place)
    rename: dict[str, D.Dim] = {}
    changes = []
    for n, places in by_new.items():
        olds = sorted({po[p] for p in places})
        if len(olds) == 1 and {pn[p] for p in by_old[olds[0]]} == {n}:  # one to one: the same size
            rename[n] = D.sym(olds[0])
        if len(olds) > 1:
            where = ", ".join(f"{i} dim {k}" for i, k in places)
            changes.append(Change("inputs", "shared sizes", " / ".join(olds) + " independent", f"{where} all {n}"))
    for o, places in by_old.items():
        news = sorted({pn[p] for p in places})
        if len(news) > 1:
            where = ", ".join(f"{i} dim {k}" for i, k in places)
            changes.append(Change("inputs", "shared sizes", f"{where} all {o}", " / ".join(news) + " independent"))
    # a symbol that is no longer (or not yet) one size with old's keeps its name, primed where
    # that name is one old's symbols take: two sizes never print as one
    taken = {D.format(v) for v in rename.values()}
    for n in by_new:
        if n not in rename and n in taken:
            rename[n] = D.sym(f"{n}'")
    return rename, changes


def _same(a: D.Dim | None, b: D.Dim | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return D.sub(a, b) == 0


def _renamed(d: D.Dim | None, rename: Mapping[str, D.Dim]) -> D.Dim | None:
    return None if d is None else D.substitute(d, rename)


def _ports(kind: str, old: list[Port], new: list[Port], rename: Mapping[str, D.Dim]) -> list[Change]:
    changes = []
    on, nn = [p.name for p in old], [p.name for p in new]
    newp = {p.name: p for p in new}
    for p in old:
        if p.name not in newp:
            changes.append(Change(f"{kind} {p.name}", "removed", f"{p.type} {_dims_text(p.dims)}", "-"))
    for p in new:
        if p.name not in on:
            dims = None if p.dims is None else tuple(_renamed(d, rename) for d in p.dims)
            changes.append(Change(f"{kind} {p.name}", "added", "-", f"{p.type} {_dims_text(dims)}"))
    common = [n for n in on if n in newp]
    if common != [n for n in nn if n in set(on)]:
        changes.append(Change(f"{kind}s", "order", ", ".join(common), ", ".join(n for n in nn if n in set(on))))
    for p in old:
        q = newp.get(p.name)
        if q is None:
            continue
        where = f"{kind} {p.name}"
        if p.type != q.type:
            changes.append(Change(where, "type", p.type, q.type))
        qd = None if q.dims is None else tuple(_renamed(d, rename) for d in q.dims)
        if (p.dims is None) != (qd is None) or (p.dims is not None and len(p.dims) != len(qd)):
            changes.append(Change(where, "shape", _dims_text(p.dims), _dims_text(qd)))
            continue
        for k, (a, b) in enumerate(zip(p.dims or (), qd or ())):
            if not _same(a, b):
                changes.append(Change(where, f"dim {k}", _text(a), _text(b)))
    return changes


def compare(old: Contract, new: Contract) -> list[Change]:
    """What changed from ``old`` to ``new`` (empty: the same contract). New's input symbols are
    read as old's by position (see the module's doc)."""
    rename, changes = _match_symbols(old.inputs, new.inputs)
    changes += _ports("input", old.inputs, new.inputs, rename)
    changes += _ports("output", old.outputs, new.outputs, rename)
    og = {g.text for g in old.guards}
    ng = {Guard(g.kind, D.substitute(g.lhs, rename), D.substitute(g.rhs, rename)).text for g in new.guards}
    changes += [Change("guards", "removed", t, "-") for t in sorted(og - ng)]
    changes += [Change("guards", "added", "-", t) for t in sorted(ng - og)]
    nr = {D.format(rename.get(s, D.sym(s))): r for s, r in new.ranges.items()}
    for s in sorted(set(old.ranges) & set(nr)):
        if old.ranges[s] != nr[s]:
            changes.append(Change("ranges", s, _range_text(old.ranges[s]), _range_text(nr[s])))
    return changes


def _range_text(r: tuple[int, int | None]) -> str:
    lo, hi = r[0], r[1]
    return f"{lo}:{'' if hi is None else hi}"
