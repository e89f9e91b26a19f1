"""One binding path: what a user says about a model's inputs, checked once, with one wording.

Three things specialise or constrain a model's graph inputs, on the command line and in the
Python API alike:

- a binding (``--bind batch=2,seq=7``, ``bind={"batch": 2}``) gives input symbols int values;
- an input shape (``--input-shape input_ids=1,seq``, ``input_shapes={"input_ids": [1, "seq"]}``
  or ``{"input_ids": "1,seq"}``) replaces a graph input's dims;
- a dim range (``--dim-range seq=1:512``, ``dim_ranges={"seq": (1, 512)}``) gives an input
  symbol an integer range, and a step (``--dim-range h=32:1024:32``, ``(32, 1024, 32)``) says
  it takes only every step-th value from the low end (a multiple of 32).

The CLI (:mod:`shapeinfer.cli`), the API (:mod:`shapeinfer.api`) and the passes
(:mod:`shapeinfer.passes`) all check them here, under one set of rules:

- a symbol stands for a size of at least 1 (the dims algebra relies on it: ``s // s == 1``),
  so a binding or a range bound below 1 is refused; a zero-size dim is the int ``0`` in an
  input shape;
- values are ints (not bools, not floats) within int64 (at most 2**63-1);
- an input-shape dim is a non-negative int or a dims expression over symbol names (``seq``,
  ``2*seq``, ``(seq + 1)//2``) no larger than the engine's expression cap; an input shape names
  a graph input that is a tensor, with as many dims as the input's declared rank;
- a bound or ranged symbol is one the graph inputs use (after the input shapes are applied),
  with a "did you mean" hint for a typo.

Every refusal is a :class:`BindError` (a ValueError) whose message starts with what was given
(``bind batch=0: ...``); :meth:`BindError.flag_message` spells it with the command-line flag
(``--bind batch=0: ...``). :func:`specialise_inputs` writes a binding's values into the graph
inputs' dims, so a model written at a binding says so where onnxruntime looks first.

Only the dims algebra is imported at start-up (the CLI parses its flags before loading onnx);
onnx and the engine's expression cap are imported by the functions that need a model.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from shapeinfer.base.suggest import did_you_mean
from shapeinfer.base.text import text as as_text
from shapeinfer.inference.limits import MAX_EXPR_SIZE
from shapeinfer.io.onnxio import dim_from_proto, type_fact
from shapeinfer.io.userfiles import show
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.dims import INT64_MAX
from shapeinfer.symbolic.intervals import Stepped
from shapeinfer.symbolic.names import ident, is_placeholder

if TYPE_CHECKING:
    import onnx

BIND = "bind"
INPUT_SHAPES = "input_shapes"
DIM_RANGES = "dim_ranges"

#: The command-line flag of each kind of entry.
FLAGS = {BIND: "--bind", INPUT_SHAPES: "--input-shape", DIM_RANGES: "--dim-range"}

Range = tuple[int, int | None]

_AT_LEAST_1 = "symbols stand for sizes of at least 1; a zero-size dim is written as 0 in an input shape"
_OUT_OF_RANGE = "out of range (at most 2**63-1)"

__all__ = [
    "BIND",
    "DIM_RANGES",
    "FLAGS",
    "INPUT_SHAPES",
    "BindError",
    "UnknownInput",
    "Unsatisfiable",
    "check_bind_symbols",
    "check_bind_values",
    "check_input_shapes",
    "check_model",
    "check_ranges",
    "input_symbols",
    "parse_bind",
    "parse_dim_ranges",
    "parse_input_shapes",
    "pinned",
    "specialise_inputs",
]


def pinned(bind: Mapping[str, int] | None, dim_ranges: Mapping[str, tuple[int, int | None]] | None) -> dict[str, int]:
    """The sizes a run takes as given: each range of one value's (``seq=8:8``) and ``bind``'s."""
    out = {s: lo for s, (lo, hi) in (dim_ranges or {}).items() if lo == hi}
    out.update(bind or {})
    return out


class BindError(ValueError):
    """An entry of a binding, an input shape or a dim range that cannot be right.

    ``kind`` is ``"bind"``, ``"input_shapes"`` or ``"dim_ranges"``; ``symbol`` the entry's name
    (a symbol, or a graph input for ``input_shapes``; ``""`` when the text has none);
    ``detail`` what is wrong, starting with the entry (``batch=0: symbols stand for ...``).
    ``str(e)`` is ``"{kind} {detail}"``.
    """

    def __init__(self, symbol: str, detail: str, kind: str = BIND) -> None:
        super().__init__(f"{kind} {detail}")
        self.symbol = symbol
        self.detail = detail
        self.kind = kind

    def __str__(self) -> str:
        return f"{self.kind} {self.detail}"

    def flag_message(self, flag: str | None = None) -> str:
        """The message with the command-line flag (``flag``, default the kind's own) in front."""
        return f"{flag or FLAGS[self.kind]} {self.detail}"


class Unsatisfiable(BindError):
    """Values asked about that no input can have: they contradict a guard of the model (G015;
    ``detail`` names the values, the guards and their nodes). Nothing is written under it."""


class UnknownInput(BindError, KeyError):
    """An input shape for a name that is not a graph input (also a KeyError, as documented
    for ``input_shapes`` before this module)."""

    def __str__(self) -> str:  # KeyError's own would quote the message
        return BindError.__str__(self)


# ------------------------------------------------------------------------------ values


def _int_value(v: Any) -> int | None:
    """``v`` as an int when it is one (an int or an integer type such as numpy's, never a bool)."""
    if isinstance(v, bool):
        return None
    if type(v) is int:
        return v
    if isinstance(v, (float, str, bytes)):
        return None
    try:
        return operator.index(v)
    except TypeError:
        return None


def _size(name: str, v: Any, kind: str) -> int:
    """A symbol's value: an int in 1..2**63-1."""
    n = _int_value(v)
    if n is None:
        raise BindError(name, f"{name}={v!r}: the value must be an integer", kind)
    if n < 1:
        raise BindError(name, f"{name}={n}: {_AT_LEAST_1}", kind)
    if n > INT64_MAX:
        raise BindError(name, f"{name}={n}: {_OUT_OF_RANGE}", kind)
    return n


def _name(k: Any, kind: str) -> str:
    if not isinstance(k, str) or not k:
        raise BindError(str(k), f"{k!r}: names are non-empty strings", kind)
    return k


def check_bind_values(bind: Mapping[str, int]) -> dict[str, int]:
    """``bind`` checked: every name a string, every value an int in 1..2**63-1 (an integer
    type such as numpy's is taken as its int). Returns it as a dict of ints; BindError else."""
    if not isinstance(bind, Mapping):
        raise BindError("", f"must map symbol names to ints, got {type(bind).__name__}", BIND)
    return {_name(k, BIND): _size(k, v, BIND) for k, v in bind.items()}


def check_ranges(dim_ranges: Mapping[str, tuple]) -> dict[str, Range]:
    """``dim_ranges`` checked: every range is ``(lo, hi)`` or ``(lo, hi, step)`` with ints ``1 <=
    lo <= hi <= 2**63-1`` (hi None: no upper bound) and ``step >= 1`` (the symbol takes ``lo``,
    ``lo + step``, ...: ``(32, 1024, 32)`` is a multiple of 32). Returns them as tuples, a
    stepped one as a :class:`~shapeinfer.symbolic.intervals.Stepped`; BindError else."""
    if not isinstance(dim_ranges, Mapping):
        raise BindError("", f"must map symbol names to (lo, hi), got {type(dim_ranges).__name__}", DIM_RANGES)
    out: dict[str, Range] = {}
    for k, r in dim_ranges.items():
        _name(k, DIM_RANGES)
        lo = hi = step = None
        if isinstance(r, (tuple, list)) and len(r) in (2, 3):
            lo, hi = _int_value(r[0]), (None if r[1] is None else _int_value(r[1]))
            step = getattr(r, "step", 1) if len(r) == 2 else _int_value(r[2])
        if lo is None or step is None or (hi is None and r[1] is not None):
            raise BindError(
                k, f"{k}={r!r}: a range is (lo, hi) or (lo, hi, step) with ints (hi None: no upper bound)", DIM_RANGES
            )
        out[k] = _range(k, lo, hi, step)
    return out


def _range(k: str, lo: int, hi: int | None, step: int = 1) -> Range:
    text = f"{k}={lo}:{'' if hi is None else hi}" + (f":{step}" if step != 1 else "")
    if lo < 1:
        raise BindError(k, f"{text}: symbols stand for sizes of at least 1", DIM_RANGES)
    if hi is not None and hi < lo:
        raise BindError(k, f"{text}: the range is empty ({lo} > {hi})", DIM_RANGES)
    if max(lo, hi or 0, step) > INT64_MAX:
        raise BindError(k, f"{text}: {_OUT_OF_RANGE}", DIM_RANGES)
    if step < 1:
        raise BindError(k, f"{text}: the step is at least 1", DIM_RANGES)
    return (lo, hi) if step == 1 else Stepped(lo, hi, step)


def check_input_shapes(input_shapes: Mapping[str, Any]) -> dict[str, list[D.Dim]]:
    """``input_shapes`` as ``{name: [dims]}``; each shape is a sequence of dims or the text the
    command line takes (``"1,seq"``). A dim is a non-negative int or a dims expression (an
    :class:`~shapeinfer.symbolic.dims.Expr` or its text, ``"2*seq"``) within the expression cap.
    BindError for anything else (a bool, a float, a negative int, junk text)."""
    if not isinstance(input_shapes, Mapping):
        raise BindError("", f"must map graph input names to shapes, got {type(input_shapes).__name__}", INPUT_SHAPES)
    out: dict[str, list[D.Dim]] = {}
    for k, v in input_shapes.items():
        _name(k, INPUT_SHAPES)
        if isinstance(v, str):
            out[k] = _shape_text(k, v)
        elif isinstance(v, Sequence) and not isinstance(v, bytes):
            out[k] = [_dim(k, x) for x in v]
        else:
            raise BindError(
                k, f"{k}={v!r}: a shape is a sequence of dims or their text separated by commas", INPUT_SHAPES
            )
    return out


def _dim(k: str, x: Any) -> D.Dim:
    if isinstance(x, D.Expr):
        if D.size(x) > _cap():
            raise BindError(
                k, f"{k}: the dim {D.format(x)[:60]!r} is more complex than the expression cap", INPUT_SHAPES
            )
        return x
    if isinstance(x, str):
        return _dim_text(x.strip(), k, x)
    n = _int_value(x)
    if n is None:
        raise BindError(k, f"{k}: the dim {x!r} is not an int or a dims expression", INPUT_SHAPES)
    if n < 0:
        raise BindError(k, f"{k}: dims cannot be negative ({n})", INPUT_SHAPES)
    if n > INT64_MAX:
        raise BindError(k, f"{k}: the dim {n} is {_OUT_OF_RANGE}", INPUT_SHAPES)
    return n


def _shape_text(k: str, v: str) -> list[D.Dim]:
    """``"1,seq"`` as ``[1, Expr(seq)]`` (empty text: a scalar)."""
    text = v.strip()
    if text and text[0] in "[(" and text[-1] in "])":
        raise BindError(
            k,
            f"{k}={show(v[:60])}: write the dims without brackets, separated by commas ({k}=1,seq)",
            INPUT_SHAPES,
        )
    dims = []
    for tok in [t.strip() for t in v.split(",")] if text else []:
        if not tok:
            raise BindError(k, f"{k}={show(v[:60])}: empty dim", INPUT_SHAPES)
        dims.append(_dim_text(tok, k, v))
    return dims


def _count(text: str, what: str, kind: str) -> int:
    """An int written in ``text``, within int64 (checked before converting, so a thousand-digit
    number is one clear line, not Python's int-conversion limit)."""
    t = text.strip()
    digits = t[1:] if t[:1] in "+-" else t
    if not digits.isascii() or not digits.isdigit():
        raise BindError(what, f"{what}={show(text[:40])}: the value must be an integer", kind)
    if len(digits.lstrip("0")) > 19 or int(digits) > INT64_MAX:
        more = "..." if len(text) > 40 else ""
        raise BindError(what, f"{what}={show(text[:40])}{more}: {_OUT_OF_RANGE}", kind)
    return int(t)


def _cap() -> int:
    return MAX_EXPR_SIZE


def _expansion_bound(node) -> int:
    """An upper bound on the terms ``node`` (a Python AST) expands to: sums add, products
    multiply; a dim a user gives must stay under the engine's expression cap."""

    if isinstance(node, ast.BinOp):
        a, b = _expansion_bound(node.left), _expansion_bound(node.right)
        if isinstance(node.op, (ast.Add, ast.Sub)):
            return a + b
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, ast.Pow):
            e = node.right.value if isinstance(node.right, ast.Constant) and type(node.right.value) is int else 64
            return a ** min(max(e, 1), 64) if a > 1 else a
        return a + b
    if isinstance(node, ast.UnaryOp):
        return _expansion_bound(node.operand)
    if isinstance(node, ast.Call):
        return 1 + sum(_expansion_bound(x) for x in node.args)
    return 1


def _dim_text(tok: str, name: str, whole: str) -> D.Dim:
    """One dim of an input shape written as text: an int or a dims expression within the cap."""

    if tok.lstrip("+-").isdigit() and tok.isascii():
        n = _count(tok, name, INPUT_SHAPES)
        if n < 0:
            raise BindError(name, f"{name}={show(whole[:60])}: dims cannot be negative", INPUT_SHAPES)
        return n
    cap = _cap()
    too_big = f"{name}: the dim {show(tok[:60])!r} is more complex than the expression cap"
    if len(tok) > 400:
        raise BindError(name, too_big, INPUT_SHAPES)
    try:
        tree = ast.parse(tok.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None
    if tree is not None and _expansion_bound(tree) > cap:
        raise BindError(name, too_big, INPUT_SHAPES)
    try:
        d = D.parse_expression(tok)
    except ValueError as e:
        hint = f" (dims are separated by commas: {name}={tok.replace('x', ',')})" if "x" in tok else ""
        raise BindError(name, f"{name}: {show(str(e))}{hint}", INPUT_SHAPES) from None
    if type(d) is int and d < 0:
        raise BindError(name, f"{name}={show(whole[:60])}: dims cannot be negative", INPUT_SHAPES)
    if D.size(d) > cap:
        raise BindError(name, too_big, INPUT_SHAPES)
    return d


# ------------------------------------------------------------------------------ command-line text


def _assignments(values: Iterable[str], kind: str, split: bool) -> list[tuple[str, str]]:
    out = []
    for v in values:
        for part in v.split(",") if split else [v]:
            k, eq, val = part.partition("=")
            if not eq or not k.strip():
                raise BindError("", f"expects NAME=VALUE, got {part!r}", kind)
            out.append((k.strip(), val.strip()))
    return out


def parse_bind(values: Iterable[str]) -> dict[str, int]:
    """``("batch=2,seq=7", ...)`` as ``{"batch": 2, "seq": 7}``; BindError for anything else
    (the rules of :func:`check_bind_values`; a symbol given twice with different values)."""
    bind: dict[str, int] = {}
    for k, v in _assignments(values, BIND, split=True):
        n = _size(k, _count(v, k, BIND), BIND)
        if k in bind and bind[k] != n:
            raise BindError(k, f"{k} is given twice, with {bind[k]} and {n}", BIND)
        bind[k] = n
    return bind


def parse_dim_ranges(values: Iterable[str]) -> dict[str, Range]:
    """``("seq=1:512", "batch=1:8,x=2:", "h=32:1024:32")`` as ``{"seq": (1, 512), ...}`` (an
    empty HI: no upper bound, an empty LO: 1, a third field the step: ``h`` a multiple of 32);
    BindError for anything else (the rules of :func:`check_ranges`)."""
    out: dict[str, Range] = {}
    for text in values:
        for part in text.split(","):
            name, eq, rest = part.partition("=")
            name = name.strip()
            lo_t, colon, hi_t = rest.partition(":")
            hi_t, _, step_t = hi_t.partition(":")
            if not eq or not colon or not name:
                raise BindError(
                    name,
                    f"{part!r}: expected SYM=LO:HI or SYM=LO:HI:STEP (e.g. seq=1:512, h=32:1024:32; HI may be empty)",
                    DIM_RANGES,
                )
            try:
                lo = _count(lo_t, name, DIM_RANGES) if lo_t.strip() else 1
                hi = _count(hi_t, name, DIM_RANGES) if hi_t.strip() else None
                step = _count(step_t, name, DIM_RANGES) if step_t.strip() else 1
            except BindError as e:
                if _OUT_OF_RANGE in e.detail:
                    raise BindError(name, f"{part.strip()[:60]!r}: {_OUT_OF_RANGE}", DIM_RANGES) from None
                raise BindError(name, f"{part.strip()[:60]!r}: LO, HI and STEP must be ints", DIM_RANGES) from None
            r = _range(name, lo, hi, step)
            if name in out and out[name] != r:
                raise BindError(name, f"{name} is given twice", DIM_RANGES)
            out[name] = r
    return out


def parse_input_shapes(values: Iterable[str]) -> dict[str, list[D.Dim]]:
    """``("x=1,3,batch",)`` as ``{"x": [1, 3, Expr(batch)]}``: each dim a non-negative int or
    a dims expression (``seq``, ``2*seq``, ``(seq + 1)//2``); anything else (``[1,seq]``,
    ``1x128``) is refused, as is an input given twice or an expression past the cap."""
    shapes: dict[str, list[D.Dim]] = {}
    for k, v in _assignments(values, INPUT_SHAPES, split=False):
        if k in shapes:
            raise BindError(k, f"{k} is given twice", INPUT_SHAPES)
        shapes[k] = _shape_text(k, v)
    return shapes


# ------------------------------------------------------------------------------ against a model


def _graph_inputs(model: onnx.ModelProto) -> list:
    """The main graph's inputs that are not initializers (the values a caller feeds)."""
    init = {t.name for t in model.graph.initializer}
    return [vi for vi in model.graph.input if vi.name not in init]


def input_symbols(model: onnx.ModelProto, input_shapes: Mapping[str, Sequence[D.Dim]] | None = None) -> set[str]:
    """The symbols of the main graph's inputs (initializers aside), with ``input_shapes``
    replacing the declared dims: a dim_param's symbols, and ``<input>_d<axis>`` for a dim the
    model leaves open (the name inference gives it)."""
    out: set[str] = set()
    for vi in _graph_inputs(model):
        if input_shapes and vi.name in input_shapes:
            dims = input_shapes[vi.name]
        else:
            base = ident(vi.name)
            dims = type_fact(vi.type, lambda axis, base=base: D.sym(f"{base}_d{axis}")).shape or ()
        for d in dims:
            out |= D.symbols(d)
    return out


def check_bind_symbols(names: Iterable[str], symbols: set[str], kind: str = BIND) -> None:
    """BindError for the first of ``names`` that is not one of the graph inputs' ``symbols``."""
    for k in names:
        if k not in symbols:
            known = ", ".join(sorted(symbols)) or "none"
            raise BindError(
                k, f"{k}: no graph input has a dim named {k!r}{did_you_mean(k, symbols)} (symbols: {known})", kind
            )


def check_model(
    model: onnx.ModelProto,
    input_shapes: Mapping[str, Sequence[D.Dim]] | None = None,
    bind: Mapping[str, int] | None = None,
    dim_ranges: Mapping[str, Range] | None = None,
) -> None:
    """Check already-validated entries against ``model`` before anything runs: each input
    shape names a tensor graph input and has its declared rank (:class:`UnknownInput` for a
    name that is not a graph input); each bound or ranged symbol is one the graph inputs use
    once the input shapes are applied. BindError for the first that does not fit."""
    if input_shapes:
        check_input_shapes_fit(model, input_shapes)
    if bind or dim_ranges:
        symbols = input_symbols(model, input_shapes)
        check_bind_symbols(bind or (), symbols, BIND)
        check_bind_symbols(dim_ranges or (), symbols, DIM_RANGES)


def check_input_shapes_fit(model: onnx.ModelProto, input_shapes: Mapping[str, Sequence[D.Dim]]) -> None:
    """Each of ``input_shapes`` names a main-graph input that is a tensor, with as many dims as
    the rank the input declares (any rank when it declares none)."""
    by_name = {vi.name: vi for vi in model.graph.input}
    for k, dims in input_shapes.items():
        vi = by_name.get(k)
        if vi is None:
            names = [as_text(n) for n in by_name]
            raise UnknownInput(
                k,
                f"{k}: no graph input named {k!r}{did_you_mean(k, names)} (inputs: {', '.join(names) or 'none'})",
                INPUT_SHAPES,
            )
        which = vi.type.WhichOneof("value")
        if which not in (None, "tensor_type"):
            what = which.replace("_type", "").replace("_", " ")
            raise BindError(k, f"{k}: the input is a {what}, not a tensor: it has no shape to give", INPUT_SHAPES)
        tt = vi.type.tensor_type
        if which is not None and tt.HasField("shape") and len(tt.shape.dim) != len(dims):
            declared = ", ".join(D.format(d) if (d := dim_from_proto(x)) is not None else "?" for x in tt.shape.dim)
            given = ",".join(D.format(d) for d in dims)
            n = len(tt.shape.dim)
            raise BindError(
                k,
                f"{k}={given}: {len(dims)} dim{'s' if len(dims) != 1 else ''} for an input of rank {n} ([{declared}])",
                INPUT_SHAPES,
            )


def specialise_inputs(model: onnx.ModelProto, bind: Mapping[str, int]) -> int:
    """Write ``bind``'s values into the main graph's input dims (in place; initializers aside):
    a dim_param over bound symbols becomes its value (or the expression over the rest), an open
    dim named ``<input>_d<axis>`` (one with a placeholder name too: ``?``, see
    :func:`~shapeinfer.symbolic.names.is_placeholder`) its value. Returns the number of dims
    changed. The binding is assumed checked (:func:`check_bind_values`, :func:`check_model`)."""
    changed = 0
    for vi in _graph_inputs(model):
        if not vi.type.HasField("tensor_type"):
            continue
        for axis, d in enumerate(vi.type.tensor_type.shape.dim):
            if d.HasField("dim_param") and d.dim_param and not is_placeholder(d.dim_param):
                new = D.substitute(D.parse(d.dim_param), bind)
            elif not d.HasField("dim_value") or d.dim_value < 0:
                new = bind.get(f"{ident(vi.name)}_d{axis}")
                if new is None:
                    continue
            else:
                continue
            if type(new) is int:
                d.dim_value = new
                changed += 1
            elif D.format(new) != d.dim_param:
                d.dim_param = D.format(new)
                changed += 1
    return changed
