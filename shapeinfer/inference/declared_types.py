"""Declared tensor types as a walk reads them: where inference knows less than a graph's
``value_info`` or outputs declare, :class:`DeclaredTypes` completes the fact from the
declaration (an assumption, said as an info G013); where it knows more, the declaration is a
claim checked after the walk (:func:`~shapeinfer.inference.engine.check_declarations`)."""

from __future__ import annotations

import onnx

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import Diagnostic
from shapeinfer.inference.declarations import dims_text, dtype_name
from shapeinfer.inference.node_context import MAIN
from shapeinfer.io.onnxio import dim_from_proto
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact
from shapeinfer.symbolic.scope import FRESH_PREFIX, SymbolScope

_UNKNOWN = Fact()


class DeclaredTypes:
    """The declared-type completion of one run: it draws fresh symbols and binds them in the
    run's ``symbols`` and reports into its ``diagnostics``, with a memo of which dims a
    declaration may replace."""

    def __init__(self, symbols: SymbolScope, diagnostics: list[Diagnostic]) -> None:
        self.symbols = symbols
        self.diagnostics = diagnostics
        self._open_memo: tuple[int, dict[D.Dim, bool]] = (0, {})  # see is_open

    def forget_open(self) -> None:
        """Drop the memo of :meth:`is_open`: fresh symbols were released and may be drawn again
        (as joins or not)."""
        self._open_memo = (-1, {})

    def adopted(
        self, name: str, f: Fact | None, g: Fact | None, tp: onnx.TypeProto, node: onnx.NodeProto, k: int, graph: str
    ) -> None:
        """Say (info G013) that tensor ``name`` took from its declared type ``tp`` what inference
        did not know: fact ``f`` became ``g``."""
        if g is None:
            return
        took = []
        if g.dtype and (f is None or not f.dtype):
            took.append(f"element type {dtype_name(g.dtype)}")
        old = None if f is None else f.shape
        if g.shape is not None and g.shape != old:
            decl = dims_text([dim_from_proto(d) for d in tp.tensor_type.shape.dim])
            if old is None:
                took.append(f"rank {len(g.shape)} {decl}")
            else:
                took.append(f"shape {decl} (inferred {dims_text(old)})")
        if took:
            msg = f"{name!r}: assuming the declared {' and '.join(took)}, which inference could not determine"
            if graph != MAIN and g.shape is not None and g.shape != old:
                msg += " (a claim of this subgraph alone: names it declares are its own)"
            self.diagnostics.append(
                Diagnostic("info", codes.DECLARED_TYPE_ASSUMED, msg, node.name or None, node.op_type, k, graph, name)
            )

    def with_declared(
        self,
        f: Fact | None,
        declared: onnx.TypeProto,
        label: str = "",
        private: dict[str, D.Dim] | None = None,
        own_from: int = 0,
    ) -> tuple[Fact | None, bool]:
        """``f`` completed from the tensor type the graph declares for it, where inference knows
        less: an unknown element type or rank takes the declared one, a dim that is only fresh
        symbols (not a join: see :meth:`SymbolScope.join`) takes the declared dim (a declared
        ``-1``, placeholder or open dim is unknown); a lone fresh symbol is bound to it (a guard
        of ``label``). Anything inference determined wins; a declaration that contradicts it is
        G006 (see :func:`~shapeinfer.inference.engine.check_declarations`). A declared dim that
        equals a join's expression at every alternative is taken as proven. Returns the fact
        (``f`` itself when nothing was taken) and whether anything was assumed.

        ``private`` is given for a declaration inside a subgraph or function body (one run of
        it: an If branch, a Loop iteration, a call), whose claims hold in that instance only: a
        name it uses other than the graph inputs' symbols is the instance's own (``private`` maps
        it to what it stands for there: the unknown dim it first names alone, else a fresh
        symbol drawn at its first use), so equal names in two branches, two bodies or a body and
        the main graph are never the same dim; and only a fresh symbol the instance drew itself
        (numbered ``own_from`` or later) is bound, one from an enclosing graph being replaced in
        this tensor's fact alone."""
        if f is not None and f.kind != "tensor":
            return f, False
        tt = declared.tensor_type
        if f is None:
            f = _UNKNOWN
        dtype = f.dtype or tt.elem_type
        shape = f.shape
        symbols = self.symbols
        joins = symbols.joins
        if (
            dtype == f.dtype
            and shape is not None
            and not any(self.is_open(d) or (joins and not D.symbols(d).isdisjoint(joins)) for d in shape)
        ):
            return f, False  # nothing the declaration could complete: its dims are not even read
        assumed = dtype != f.dtype
        if tt.HasField("shape"):
            decl = [dim_from_proto(d) for d in tt.shape.dim]
            if shape is None:
                shape = tuple(self.symbols.fresh() if x is None else self._private_dim(x, private) for x in decl)
                assumed = True
            elif len(decl) == len(shape):
                out = []
                for d, x in zip(shape, decl):
                    if (
                        x is not None
                        and joins
                        and type(d) is not int
                        and (private is None or D.symbols(x) <= symbols.input_symbols)
                        and symbols.equal_at_every_alternative(d, x)
                    ):
                        d = x  # proven, not assumed: the declared dim holds in every alternative
                    elif x is not None and self.is_open(d):
                        x = self._private_dim(x, private, d)
                        if x == d:
                            out.append(d)  # the declaration names the inferred dim: nothing assumed
                            continue
                        assumed = True
                        # a lone fresh symbol is bound to a declared name wherever it occurs (in a
                        # subgraph: one the subgraph drew itself); a declared number is taken in
                        # this value's fact (and what is computed from it) alone, as onnxruntime
                        # reads value_info: bound, it would reach the values computed before this
                        # one, and onnxruntime folds a Shape of a value whose written dims are all
                        # numbers (a wrong claim then changes what the written model computes)
                        syms = D.symbols(d)
                        lone = next(iter(syms)) if len(syms) == 1 else None
                        if (
                            type(x) is not int
                            and lone is not None
                            and d == D.sym(lone)
                            and (private is None or self._own(lone, own_from))
                        ):
                            d = self.symbols.unify(d, x, label)[0]
                        else:
                            d = x
                    out.append(d)
                shape = tuple(out)
        if dtype == f.dtype and shape == f.shape:
            return f, False
        return Fact(dtype, shape, f.value if shape == f.shape else None, "tensor", None), assumed

    def _private_dim(self, x: D.Dim, private: dict[str, D.Dim] | None, d: D.Dim | None = None) -> D.Dim:
        """Declared dim ``x`` as :meth:`with_declared` reads it in a subgraph instance (``x``
        itself in the main graph, ``private`` None): each symbol that is not a graph input's
        replaced by what it stands for in the instance, recorded in ``private`` at its first
        use: the unknown dim ``d`` when ``x`` is that name alone (a name for ``d``: nothing
        assumed), else a fresh symbol."""
        if private is None or type(x) is int:
            return x
        names = D.symbols(x) - self.symbols.input_symbols
        if not names:
            return x
        if d is not None and len(names) == 1:
            (name,) = names
            if name not in private and x == D.sym(name):
                private[name] = d
                return d
        for n in sorted(names):
            if n not in private:
                private[n] = self.symbols.fresh()
        return D.substitute(x, {n: private[n] for n in names})

    def _own(self, name: str, own_from: int) -> bool:
        """Whether ``name`` is a fresh symbol drawn at position ``own_from`` or later (fresh
        symbols are numbered by position: ``unk_<n>``)."""
        if not self.symbols.is_fresh(name):
            return False
        n = name[len(FRESH_PREFIX) :]
        return n.isdigit() and int(n) >= own_from

    def is_open(self, d: D.Dim) -> bool:
        """Whether :meth:`with_declared` may replace dim ``d`` by a declared one: ``d`` is not an
        int and every symbol in it (if any) is fresh. Remembered per dim while the input
        symbols (which are never fresh) stay the same."""
        if type(d) is int:
            return False
        memo = self._open_memo
        n_inputs = len(self.symbols.input_symbols)
        if memo[0] != n_inputs:
            memo = self._open_memo = (n_inputs, {})
        known = memo[1].get(d)
        if known is None:
            known = memo[1][d] = self.symbols.adoptable(d)
        return known
