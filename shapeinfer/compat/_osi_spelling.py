"""How onnx-shape-inference writes dims, for :mod:`shapeinfer.compat.onnx_shape_inference`:
its names for the dims it invents (``_d0``, ``_d1``... past every name the model uses), the
declared names it adopts, and its (sympy's) spelling of expressions."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from shapeinfer.inference.engine import Result
from shapeinfer.io.onnxio import graphs_within, type_dims
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact
from shapeinfer.symbolic.names import is_placeholder

if TYPE_CHECKING:
    import onnx
    import onnx_ir as ir

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


class Spelling:
    """Dims as onnx-shape-inference writes them: sympy's text of the expression (symbols are
    positive integers there), with the dims inference invents named ``_d<n>``."""

    def __init__(self, renames: dict[str, str], fresh: set[str], taken: set[str]) -> None:
        self.renames = renames
        #: fresh symbols a declared dim gave an expression of other symbols (:func:`_adopt`)
        self.adopted: dict[str, Any] = {}
        self.taken = taken | set(renames.values())  # names a minted one must not take
        self._next = 0
        self.fresh = fresh  # may be 0 (a data-dependent count): not positive for sympy
        self._memo: dict[D.Expr, str] = {}
        self._sympy: Any = None

    def dim(self, ir, d: D.Dim) -> int | ir.SymbolicDim:
        if type(d) is int:
            return d
        text = self._memo.get(d)
        if text is None:
            text = self._memo[d] = self._text(d)
        return ir.SymbolicDim(text)

    def mint(self, ir) -> ir.SymbolicDim:
        """A new ``_d<n>`` name (an element whose value is unknown, as the original names one)."""
        while f"_d{self._next}" in self.taken:
            self._next += 1
        name = f"_d{self._next}"
        self.taken.add(name)
        return ir.SymbolicDim(name)

    def _text(self, d: D.Expr) -> str:
        if len(d.terms) == 1 and d.terms[0][1] == 1 and len(d.terms[0][0]) == 1 and d.terms[0][0][0].kind == "sym":
            name = d.terms[0][0][0].name
            if name in self.adopted:
                return str(self.adopted[name])
            return self.renames.get(name, name)  # a lone symbol is its name, whatever it spells
        try:
            return str(self._expr(d))
        except Exception:  # a symbol name sympy cannot print: shapeinfer's own text
            return D.format(D.substitute(d, {k: D.sym(v) for k, v in self.renames.items()}))

    def expr(self, d: D.Dim):
        """``d`` as a sympy expression (invented symbols by their ``_d<n>`` names)."""
        return self._expr(d)

    def _expr(self, d: D.Dim):
        if self._sympy is None:
            import sympy

            self._sympy = sympy
        sp = self._sympy
        if type(d) is int:
            return sp.Integer(d)
        total = sp.Integer(0)
        for mono, coeff in d.terms:
            term = sp.Integer(coeff)
            for atom in mono:
                term = term * self._atom(atom)
            total = total + term
        return total

    def _atom(self, atom: D.Atom):
        sp = self._sympy
        if atom.kind == "sym":
            if atom.name in self.adopted:
                return self.adopted[atom.name]
            name = self.renames.get(atom.name, atom.name)
            if atom.name in self.fresh:
                return sp.Symbol(name, integer=True, nonnegative=True)
            return sp.Symbol(name, integer=True, positive=True)
        if atom.kind == "floordiv":
            a, k = atom.args
            c = next((c for m, c in a.terms if not m), 0) if D.is_symbolic(a) else 0
            if type(k) is int and k > 1 and c == k - 1:  # (x + k - 1)//k is ceil(x/k): -floor(-x/k)
                return -sp.floor(-self._expr(D.sub(a, c)) / k)
            return sp.floor(self._expr(a) / self._expr(k))
        args = [self._expr(a) for a in atom.args]
        return (sp.Min if atom.kind == "min" else sp.Max)(*args)


def invented_input_dims(proto: onnx.ModelProto, result: Result) -> list[tuple[str, int, str]]:
    """``(input, axis, symbol)`` for each main-graph input dim the model leaves unnamed, with the
    symbol inference gave it, in input and axis order."""
    out = []
    facts = result.graph_facts.get("main", {})
    inits = {t.name for t in proto.graph.initializer}
    for vi in proto.graph.input:
        f = facts.get(vi.name)
        if vi.name in inits or f is None or f.kind != "tensor" or f.shape is None:
            continue
        which = vi.type.WhichOneof("value")
        if which != "tensor_type" or not vi.type.tensor_type.HasField("shape"):
            continue
        for axis, (pd, d) in enumerate(zip(vi.type.tensor_type.shape.dim, f.shape)):
            unnamed = not pd.HasField("dim_value") and not (pd.dim_param and not is_placeholder(pd.dim_param))
            if unnamed and D.is_symbolic(d) and len(D.symbols(d)) == 1:
                out.append((vi.name, axis, next(iter(D.symbols(d)))))
    return out


def used_symbols(result: Result) -> list[str]:
    """The symbols the facts of every graph use, in a stable order."""
    seen: dict[str, None] = {}

    def visit(f: Fact | None) -> None:
        if f is None:
            return
        for d in f.shape or ():
            if D.is_symbolic(d):
                seen.update(dict.fromkeys(sorted(D.symbols(d))))
        for v in f.value or ():
            if D.is_symbolic(v):
                seen.update(dict.fromkeys(sorted(D.symbols(v))))
        visit(f.elem)

    for facts in result.graph_facts.values():
        for f in facts.values():
            visit(f)
    return list(seen)


def renames(proto: onnx.ModelProto, result: Result, invented: list[tuple[str, int, str]]) -> dict[str, str]:
    """The ``_d<n>`` name of each symbol inference invented: the inputs' unnamed dims first, then
    the fresh symbols the facts use, numbered past every name the model already has."""
    taken = taken_names(proto)
    used = set(used_symbols(result))
    order = [s for _, _, s in invented] + [s for s in result.fresh_symbols if s in used]
    out: dict[str, str] = {}
    n = 0
    for s in order:
        if s in out:
            continue
        while f"_d{n}" in taken:
            n += 1
        out[s] = f"_d{n}"
        n += 1
    return out


def taken_names(proto: onnx.ModelProto) -> set[str]:
    """Every name a dim of ``proto`` uses (inside expressions too): invented names skip them."""
    taken: set[str] = set()
    for g in graphs_within(proto.graph):
        for vi in (*g.input, *g.output, *g.value_info):
            for d in type_dims(vi.type):
                if d.dim_param:
                    taken.update(_TOKEN.findall(d.dim_param))
    return taken
