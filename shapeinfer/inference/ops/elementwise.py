"""Elementwise ops: multidirectional broadcasting for dims, exact arithmetic for tracked values.

Integer semantics follow onnxruntime where ONNX leaves them open: integer ``Div`` truncates
toward zero (C++ division); ``Mod`` with ``fmod=0`` takes the divisor's sign (Python ``%``),
with ``fmod=1`` the dividend's (C ``fmod``); ``Cast`` from float to int truncates.
"""

from __future__ import annotations

import functools
import math
import struct

import onnx
from onnx import TensorProto

from shapeinfer.base import codes
from shapeinfer.inference.op_registry import declare_traits, register
from shapeinfer.inference.ops.common import broadcast_shapes, broadcast_values, carry_bounds, provably_nonneg
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import MAX_VALUE_ELEMENTS, Fact, tensor

BOOL = TensorProto.BOOL
FLOAT_TYPES = {
    TensorProto.FLOAT,
    TensorProto.DOUBLE,
    TensorProto.FLOAT16,
    TensorProto.BFLOAT16,
}
INT_TYPES = {
    TensorProto.INT8,
    TensorProto.INT16,
    TensorProto.INT32,
    TensorProto.INT64,
    TensorProto.UINT8,
    TensorProto.UINT16,
    TensorProto.UINT32,
    TensorProto.UINT64,
}


def _is_num(v) -> bool:
    return type(v) in (int, float)


def _nonneg(v) -> bool:
    return provably_nonneg(v)


def _div_in(ctx, out_dtype: int):
    """Div's values at ``ctx``: integer Div truncates toward zero (ONNX and onnxruntime). With
    a positive divisor that is the floor for a numerator >= 0 and ``-floor(-a/b)`` for one
    <= 0, each proven over the ranges and the bounds assumed so far; a numerator of unproven
    sign takes the floor under the soft guard ``0 <= a`` (a G012 diagnostic; the model may
    run where ``a < 0``, so inference drops the guard, and takes the truncation as
    ``max(a, 0)//b - max(-a, 0)//b``, when the hard guards do not imply it).
    A float Div (``out_dtype``) of symbolic values is known only where the quotient is exact:
    ``seq / 2.0`` is not ``seq // 2`` (Floor of it is: see :func:`_float_quotient`)."""
    sym = ctx.symbols
    float_out = out_dtype in FLOAT_TYPES

    def div(a, b):
        if isinstance(a, float) or isinstance(b, float):
            return a / b
        if type(a) is int and type(b) is int:
            if float_out:
                return a / b
            q = abs(a) // abs(b)
            return q if (a >= 0) == (b > 0) else -q
        q = D.exact_div(a, b)
        if q is not None:
            return q
        if float_out:
            return None
        if (_nonneg(b) and b != 0) or sym.prove_le(1, b):
            if _nonneg(a) or sym.prove_le(0, a):
                return D.floordiv(a, b)
            if _nonneg(D.neg(a)) or sym.prove_le(a, 0):
                return D.neg(D.floordiv(D.neg(a), b))
            if sym.prove_le(1, b):
                if not ctx.engine.soft_guards:
                    return D.sub(D.floordiv(D.dmax(a, 0), b), D.floordiv(D.dmax(D.neg(a), 0), b))
                ctx.assume("bound", 0, a, report=True, soft=True)
                return D.floordiv(a, b)
        return None

    return div


def _mod_in(ctx, fmod: int):
    """Mod's values at ``ctx``: with ``fmod=0`` an integer Mod takes the divisor's sign (floor
    semantics, :func:`shapeinfer.symbolic.dims.mod`), which holds whatever the dividend's sign once the
    divisor's sign is proven; ``fmod=1`` (C's fmod) only on numbers."""
    sym = ctx.symbols

    def mod(a, b):
        if fmod or isinstance(a, float) or isinstance(b, float):
            if _is_num(a) and _is_num(b):
                return math.fmod(a, b) if fmod else a % b
            return None
        if type(a) is int and type(b) is int:
            return a % b
        if (_nonneg(a) and _nonneg(b)) or sym.prove_le(1, b) or sym.prove_le(b, -1):
            return sym.simplify(D.mod(a, b))
        return None

    return mod


def _minmax_in(ctx, kind: str):
    """Min/Max's values at ``ctx``: numbers as numbers, dims through :func:`shapeinfer.symbolic.dims.dmin`
    / ``dmax``, then decided where the ranges and the bounds assumed so far decide them
    (``min(seq - 1, 1000000000)`` is ``seq - 1`` once a float round trip assumed
    ``seq <= 16777217``)."""
    sym = ctx.symbols
    num, dim = (min, D.dmin) if kind == "Min" else (max, D.dmax)

    def f(*args):
        if all(_is_num(a) for a in args):
            return num(*args)
        if any(isinstance(a, float) for a in args):
            return None
        return sym.simplify(dim(*args))

    return f


def _pow(a, b):
    if _is_num(a) and _is_num(b):
        r = a**b
        return r if isinstance(r, (int, float)) else None
    if type(b) is int and 0 <= b <= 8:
        return D.product([a] * b)
    return None


def _logic(a, b, absorbing: int):
    """And (``absorbing`` 0) or Or (1) of two booleans, each 0, 1, a 0/1-valued expression or
    None (unknown): ``absorbing`` wherever one side is it, whatever the other (tf2onnx's
    ``And(Equal(end, 1e9), Less(step, 0))`` with a positive step is False for any end); the
    other side where one is the identity."""
    if _is_num(a) and _is_num(b):
        return int(bool(a) and bool(b)) if absorbing == 0 else int(bool(a) or bool(b))
    for x, y in ((a, b), (b, a)):
        if _is_num(x):
            return absorbing if int(bool(x)) == absorbing else y
    return None


#: The ops whose value is known where only one operand's element is (see :func:`_logic`).
_ABSORBING = {"And", "Or"}


def _cmp(test):
    def f(a, b):
        if _is_num(a) and _is_num(b):
            return int(test((a > b) - (a < b)))
        s = D.compare(a, b)
        return None if s is None else int(test(s))

    return f


#: The comparisons, each as a test of the sign of ``a - b``.
_TESTS = {
    "Equal": lambda s: s == 0,
    "Less": lambda s: s < 0,
    "LessOrEqual": lambda s: s <= 0,
    "Greater": lambda s: s > 0,
    "GreaterOrEqual": lambda s: s >= 0,
}


_BINARY = {
    "Add": lambda a, b: a + b,
    "Sub": lambda a, b: a - b,
    "Mul": lambda a, b: a * b,
    "Pow": _pow,
    "BitShift": None,
    "And": lambda a, b: _logic(a, b, absorbing=0),
    "Or": lambda a, b: _logic(a, b, absorbing=1),
    "Xor": lambda a, b: int(bool(a) != bool(b)) if _is_num(a) and _is_num(b) else None,
    **{op: _cmp(test) for op, test in _TESTS.items()},
    "BitwiseAnd": None,
    "BitwiseOr": None,
    "BitwiseXor": None,
}
_COMPARISONS = {*_TESTS, "And", "Or", "Xor"}
_VARIADIC = {
    "Sum": lambda *a: sum(a[1:], a[0]),
    "Mean": None,
}


def _value_dtype_ok(f: Fact) -> bool:
    return f.dtype in INT_TYPES or f.dtype in FLOAT_TYPES or f.dtype == BOOL


def _symbolic_safe(fn):
    """``fn`` on values where a symbolic value meets a float: an integral float counts as its
    int (``h * 2.0`` is ``2*h``), any other float makes the result unknown."""

    def f(*args):
        if any(isinstance(a, D.Expr) for a in args) and any(isinstance(a, float) for a in args):
            if not all(not isinstance(a, float) or (math.isfinite(a) and a.is_integer()) for a in args):
                return None
            args = tuple(int(a) if isinstance(a, float) else a for a in args)
        return fn(*args)

    return f


def _nary(ctx, ins: list, fn, out_dtype: int, unknown_elements: bool = False) -> list:
    """``unknown_elements``: ``fn`` also gets the elements that are not known (None), an
    operand whose value is unknown as a whole taken as one of such elements each."""
    facts = [f for f in ins if f is not None]
    shape = broadcast_shapes(ctx, [f.shape for f in facts])
    value = None
    if unknown_elements and any(f.value is not None for f in facts):
        facts = [f if f.value is not None else _unknown_elements(f) for f in facts]
    if fn is not None and all(f.value is not None and _value_dtype_ok(f) for f in facts):
        value = broadcast_values(_symbolic_safe(fn), facts, shape, unknown_elements=unknown_elements)
        if value is not None and out_dtype == TensorProto.INT64:
            bad = next((v for v in value if type(v) is int and not -(2**63) <= v < 2**63), None)
            if bad is not None:  # onnxruntime wraps; in shape arithmetic that is always a bug
                ctx.diag(
                    "error", codes.INT64_OVERFLOW, f"{ctx.op_type} of int64 values overflows int64: values left unknown"
                )
                value = None
        if value is not None and (out_dtype in INT_TYPES or out_dtype in FLOAT_TYPES):
            value = tuple(fit_value(v, out_dtype) for v in value)
            if out_dtype in FLOAT_TYPES:
                value = exact_in_float(ctx, value, out_dtype)
    return [tensor(out_dtype, shape, value)]


def _unknown_elements(f: Fact) -> Fact:
    """``f`` with a value of unknown elements where its shape is static and small (else as it is)."""
    if not f.is_static or f.numel > MAX_VALUE_ELEMENTS:
        return f
    return tensor(f.dtype, f.shape, (None,) * f.numel)


@functools.cache
def _int_range(dtype: int) -> tuple[int, int] | None:
    try:
        import numpy as np

        info = np.iinfo(onnx.helper.tensor_dtype_to_np_dtype(dtype))
        return int(info.min), int(info.max)
    except (KeyError, ValueError, TypeError):
        return None


def fit_value(v, dtype: int):
    """``v`` as an element of type ``dtype`` holds it: ints wrap to the type's width (as C++ and
    onnxruntime do), floats round to float32 / float16 / bfloat16 precision. Symbolic values are
    kept as they are (taken to be in range)."""
    if v is None or isinstance(v, D.Expr):
        return v
    if dtype in INT_TYPES:
        if isinstance(v, float):
            if not math.isfinite(v):
                return None
            v = int(v)
        rng = _int_range(dtype)
        if rng is not None and not rng[0] <= v <= rng[1]:
            span = rng[1] - rng[0] + 1
            v = (v - rng[0]) % span + rng[0]
        return v
    if dtype in FLOAT_TYPES and dtype != TensorProto.DOUBLE:
        return _round_float(float(v), dtype)
    return v


def _round_float(v: float, dtype: int) -> float:
    if not math.isfinite(v):
        return v
    try:
        if dtype == TensorProto.FLOAT:
            return struct.unpack("f", struct.pack("f", v))[0]
        if dtype == TensorProto.FLOAT16:
            return struct.unpack("e", struct.pack("e", v))[0]
        if dtype == TensorProto.BFLOAT16:
            bits = struct.unpack("I", struct.pack("f", v))[0]
            bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000  # round to nearest even
            return struct.unpack("f", struct.pack("I", bits))[0]
    except OverflowError:
        return math.copysign(math.inf, v)
    return v


def _two_valued_cmp_in(ctx, test):
    """A comparison's values at ``ctx``: as :func:`_cmp`, and where it cannot decide, a
    difference ``x = a - b`` that takes only two values ``lo, lo + 1`` over the effective ranges
    (``2*((h + 1)//2) - h`` is 0 or 1) gives the exact 0/1 value ``t0 + (t1 - t0)*(x - lo)``
    (``Equal(crop, 0)`` is ``1 - crop``), which Not, Where and integer arithmetic carry on. An
    Equal whose difference is never 0 (its terms' common factor does not divide its constant:
    ``7*q - 6``) is false."""
    plain = _cmp(test)
    sym = ctx.symbols

    def f(a, b):
        r = plain(a, b)
        if r is not None or isinstance(a, float) or isinstance(b, float):
            return r
        x = D.sub(a, b)
        if type(x) is int:
            return int(test((x > 0) - (x < 0)))
        if test(1) == test(-1) and D.never_zero(x):  # Equal of 7*q - 7 and -1: never equal
            return int(test(1))
        ranges = sym.effective_ranges()
        # a <= b (or >=) proven: the sign is -1 or 0 (0 or 1), enough for LessOrEqual(1, seq)
        for signs, proven in (((-1, 0), D.lower_bound(D.neg(x), ranges)), ((0, 1), D.lower_bound(x, ranges))):
            if proven is not None and proven >= 0 and test(signs[0]) == test(signs[1]):
                return int(test(signs[0]))
        lo, neg_lo = D.lower_bound(x, ranges), D.lower_bound(D.neg(x), ranges)
        if lo is None or neg_lo is None or -neg_lo - lo != 1:
            return None
        t0, t1 = int(test((lo > 0) - (lo < 0))), int(test((lo + 1 > 0) - (lo + 1 < 0)))
        return D.add(t0, D.mul(t1 - t0, D.sub(x, lo)))

    return f


def _binary_rule(op: str):
    fn = _BINARY[op]

    def rule(ctx, ins: list) -> list:
        dtype = BOOL if op in _COMPARISONS else (ins[0].dtype if ins[0] is not None else 0)
        fn_ = _two_valued_cmp_in(ctx, _TESTS[op]) if op in _TESTS else fn
        return _nary(ctx, ins, fn_, dtype, unknown_elements=op in _ABSORBING)

    rule.__doc__ = f"{op}: broadcast dims; values computed elementwise."
    return rule


for _op in _BINARY:
    register(_op)(_binary_rule(_op))
register("Mod", since=10)(
    lambda ctx, ins: _nary(ctx, ins, _mod_in(ctx, ctx.attr("fmod", 0)), ins[0].dtype if ins[0] else 0)
)


@register("Div")
def div(ctx, ins: list) -> list:
    """Div: broadcast dims; values computed elementwise (integer Div truncates)."""
    dtype = ins[0].dtype if ins[0] is not None else 0
    return _nary(ctx, ins, _div_in(ctx, dtype), dtype)


def _variadic_rule(op: str):
    fn = _VARIADIC[op]

    def rule(ctx, ins: list) -> list:
        dtype = next((f.dtype for f in ins if f is not None), 0)
        return _nary(ctx, ins, fn, dtype)

    rule.__doc__ = f"{op}: broadcast all inputs; values computed elementwise."
    return rule


for _op in _VARIADIC:
    register(_op)(_variadic_rule(_op))


def _minmax_rule(op: str):
    def rule(ctx, ins: list) -> list:
        dtype = next((f.dtype for f in ins if f is not None), 0)
        return _nary(ctx, ins, _minmax_in(ctx, op), dtype)

    rule.__doc__ = f"{op}: broadcast all inputs; values computed elementwise."
    return rule


for _op in ("Min", "Max"):
    register(_op)(_minmax_rule(_op))


@register("Where", since=9)
def where(ctx, ins: list) -> list:
    """Where: broadcast of condition, X and Y; values picked by a known condition."""
    cond, x, y = ins[0], ins[1], ins[2]

    def pick(c, a, b):
        if _is_num(c):
            return a if c else b
        # a 0/1 condition known as an expression (a two-valued comparison): b + c*(a - b)
        if isinstance(c, D.Expr) and not isinstance(a, float) and not isinstance(b, float):
            return D.add(b, D.mul(c, D.sub(a, b)))
        return None

    return _nary(ctx, [cond, x, y], pick, x.dtype or y.dtype)


@register("PRelu")
def prelu(ctx, ins: list) -> list:
    """PRelu: X and the slope broadcast both ways, as onnxruntime runs it (a slope ``[3]``
    against X ``[1]`` gives ``[3]``; the spec's one-way broadcast is the case of a slope no
    larger than X); X's shape when the slope's is unknown (the spec's reading)."""
    x, slope = ins[0], ins[1] if len(ins) > 1 else None
    if x.shape is None or slope is None or slope.shape is None:
        return [tensor(x.dtype, x.shape)]
    return [tensor(x.dtype, broadcast_shapes(ctx, [x.shape, slope.shape]))]


# ---------------------------------------------------------------- unary, same shape


def _unary_value(fn):
    def rule(ctx, ins: list) -> list:
        x = ins[0]
        value = None
        if fn is not None and x.value is not None and _value_dtype_ok(x):
            value = tuple(None if v is None else _safe(fn, v) for v in x.value)
            if x.dtype in INT_TYPES or x.dtype in FLOAT_TYPES:
                value = tuple(fit_value(v, x.dtype) for v in value)
        return [tensor(x.dtype, x.shape, value)] + [tensor(x.dtype, x.shape)] * (ctx.num_outputs - 1)

    return rule


def _safe(fn, v):
    try:
        return fn(v)
    except (ValueError, TypeError, OverflowError, ZeroDivisionError):
        return None


def _abs(v):
    if _is_num(v):
        return abs(v)
    return v if _nonneg(v) else None


def _floor(v):
    return math.floor(v) if isinstance(v, float) else v  # an int or a dim: integral already


def _ceil(v):
    return math.ceil(v) if isinstance(v, float) else v


def _sqrt(v):
    return math.sqrt(v) if _is_num(v) else None


_UNARY_VALUES = {
    "Neg": lambda v: -v,
    "Abs": _abs,
    "Floor": _floor,
    "Ceil": _ceil,
    "Sqrt": _sqrt,
    "Reciprocal": lambda v: 1.0 / v if _is_num(v) else None,
    "Relu": lambda v: max(v, 0) if _is_num(v) else (v if _nonneg(v) else None),
    "Sign": lambda v: (v > 0) - (v < 0) if _is_num(v) else None,
    "Not": lambda v: int(not v) if _is_num(v) else D.sub(1, v),  # a bool's value is 0 or 1
}

_UNARY_SHAPE_ONLY = [
    "Acos",
    "Acosh",
    "Asin",
    "Asinh",
    "Atan",
    "Atanh",
    "Cos",
    "Cosh",
    "Sin",
    "Sinh",
    "Tan",
    "Tanh",
    "Erf",
    "Exp",
    "Log",
    "Sigmoid",
    "HardSigmoid",
    "HardSwish",
    "Softplus",
    "Softsign",
    "Elu",
    "Selu",
    "Celu",
    "LeakyRelu",
    "ThresholdedRelu",
    "Mish",
    "Gelu",
    "Round",
    "IsNaN",
    "IsInf",
    "BitwiseNot",
    "Softmax",
    "LogSoftmax",
    "Hardmax",
    "Shrink",
    "Clip",
    "Swish",
]

for _op, _fn in _UNARY_VALUES.items():
    if _op not in ("Floor", "Ceil"):  # registered below, with float quotients
        register(_op)(_unary_value(_fn))


def _float_rational(ctx) -> tuple[tuple, int, int, int] | None:
    """``(dims, m, e, dtype)`` when this node's one input is a float ``dims * (m / e)``: a float
    ``Div`` of integral dims by a positive int ``e`` (``m`` 1; paddle2onnx's ``//``: Cast to
    float, Div, Floor, Cast back), or a float ``Mul`` of integral dims by a positive constant
    whose float value is ``m / e`` with ``e`` a power of two up to 1024 (``int(float(h) * 1.5)``);
    found through the producer in this graph. Else None."""
    found = ctx.producer(ctx.node.input[0]) if ctx.node.input else None
    if found is None:
        return None
    p = found[1]
    if p.op_type not in ("Div", "Mul") or p.domain not in ("", "ai.onnx") or len(p.input) != 2:
        return None
    fa, fb = (ctx.scope.get(x) for x in p.input)
    if fa is None or fb is None or fa.value is None or fb.value is None:
        return None
    if p.op_type == "Mul" and len(fa.value) == 1 and len(fb.value) != 1:
        fa, fb = fb, fa
    if fa.dtype not in FLOAT_TYPES or len(fb.value) != 1 or not fa.value:
        return None
    dims = ctx.engine.resolve_fact(fa).value
    if any(not (type(v) is int or isinstance(v, D.Expr)) for v in dims):
        return None
    c = fb.value[0]
    if isinstance(c, D.Expr) or c is None:
        return None
    if p.op_type == "Div":
        if isinstance(c, float) and math.isfinite(c) and c.is_integer():
            c = int(c)
        if type(c) is not int or c <= 0:
            return None
        return dims, 1, c, fa.dtype
    c = float(c)
    if not math.isfinite(c) or c <= 0:
        return None
    m, e = c.as_integer_ratio()
    if e > 1024 or m > 2**24:
        return None
    return dims, m, e, fa.dtype


def _unknown_small_float(x: Fact | None) -> int | None:
    """The element count of float ``x`` when its shape is static and small enough to carry
    values (``MAX_VALUE_ELEMENTS``) and some are unknown; else None. Only such a tensor can be
    a dim times a rational, so only then is its producer looked up (not for every activation)."""
    if x is None or x.dtype not in FLOAT_TYPES or x.shape is None or not all(type(d) is int for d in x.shape):
        return None
    n = math.prod(x.shape)
    if n > MAX_VALUE_ELEMENTS or (x.value is not None and all(v is not None for v in x.value)):
        return None
    return n


def _rational_values(ctx, kind: str) -> tuple | None:
    """The values of ``kind`` (``floor``, ``ceil``, ``trunc``) of this node's float input when it
    is a dim times ``m / e`` (:func:`_float_rational`), each under the guard that float
    arithmetic rounds it right (``|a*m| <= 2**24`` in float32: every integer up to it is exact,
    and so is its quotient by the power of two ``e``); None when it is not one."""
    q = _float_rational(ctx)
    if q is None:
        return None
    dims, m, e, dtype = q
    limit = EXACT_INT_LIMIT.get(dtype)
    if limit is None:
        return None
    out = []
    for a in dims:
        n = D.mul(a, m)
        if type(n) is int:
            return None  # numbers are computed as numbers
        if kind == "trunc":  # toward zero: the floor of a non-negative, the ceiling of a non-positive
            if _nonneg(n) or ctx.symbols.prove_le(0, n):
                kind_a = "floor"
            elif _nonneg(D.neg(n)) or ctx.symbols.prove_le(n, 0):
                kind_a = "ceil"
            else:
                return None
        else:
            kind_a = kind
        out.append(D.floordiv(n, e) if kind_a == "floor" else D.ceildiv(n, e))
    for a in dims:
        n = D.mul(a, m)
        ctx.assume("bound", n, limit, report=True)
        ctx.assume("bound", -limit, n, report=True)
    return tuple(out)


def _rounded_quotient(op: str):
    plain = _unary_value(_UNARY_VALUES[op])

    def rule(ctx, ins: list) -> list:
        """Floor / Ceil: same shape; values rounded; of a float dim times a rational (a Div by a
        positive int, a Mul by a dyadic constant), the floor (ceiling) division, under the guard
        that float arithmetic rounds it right."""
        outs = plain(ctx, ins)
        x = ins[0]
        n = _unknown_small_float(x)
        if n is None:
            return outs
        values = _rational_values(ctx, "floor" if op == "Floor" else "ceil")
        if values is None or len(values) != n:
            return outs
        return [tensor(x.dtype, x.shape, values)]

    return rule


for _op in ("Floor", "Ceil"):
    register(_op)(_rounded_quotient(_op))
for _op in _UNARY_SHAPE_ONLY:
    register(_op)(_unary_value(None))


@register(["IsNaN", "IsInf"])
def is_nan_inf(ctx, ins: list) -> list:
    """IsNaN / IsInf: same shape, bool."""
    return [tensor(BOOL, ins[0].shape)]


def _cast_value(v, to: int):
    if v is None:
        return None
    if to == BOOL:
        if _is_num(v):
            return int(v != 0)
        return 1 if D.compare(v, 0) == 1 else None
    if to in INT_TYPES or (to in FLOAT_TYPES and type(v) in (int, float)):
        return fit_value(v, to)  # float to int truncates toward zero
    if to in FLOAT_TYPES:
        return v  # a symbolic dim cast to float keeps its (integral) value
    return None


#: Largest integer magnitude up to which every integer is exact in each float type.
EXACT_INT_LIMIT = {
    TensorProto.FLOAT: 2**24,
    TensorProto.DOUBLE: 2**53,
    TensorProto.FLOAT16: 2**11,
    TensorProto.BFLOAT16: 2**8,
}


def exact_in_float(ctx, values: tuple, to: int) -> tuple:
    """``values`` cast to float type ``to``: a symbolic value stays only where it is exact.

    Integers up to ``EXACT_INT_LIMIT[to]`` are exact in the float type. A symbolic value
    provably within it stays; else, in float32 and double (limits 2**24 and 2**53, beyond any
    practical dim), it stays under a recorded assumption (G009, info); in float16 and bfloat16
    it becomes unknown. Concrete values are already rounded by :func:`fit_value`.
    """
    limit = EXACT_INT_LIMIT.get(to)
    if limit is None or not any(isinstance(v, D.Expr) for v in values):
        return values
    out = []
    for v in values:
        if isinstance(v, D.Expr):
            lo, neg_hi = D.lower_bound(v), D.lower_bound(D.neg(v))
            if lo is not None and neg_hi is not None and -limit <= lo and -neg_hi <= limit:
                pass
            elif to in (TensorProto.FLOAT, TensorProto.DOUBLE):
                name = TensorProto.DataType.Name(to).lower()
                ctx.diag("info", codes.ASSUMED_EXACT_FLOAT, f"assuming |{D.format(v)}| <= {limit} (exact in {name})")
                ctx.assume("bound", v, limit)
                ctx.assume("bound", -limit, v)
            else:
                v = None
        out.append(v)
    return tuple(out)


def _cast(ctx, x: Fact, to: int) -> list:
    value = None
    if x.value is not None and _value_dtype_ok(x):
        if to in INT_TYPES and any(isinstance(v, float) and not math.isfinite(v) for v in x.value):
            ctx.diag(
                "warning", codes.CAST_NAN_TO_INT, "NaN or infinity cast to an integer type: the result is undefined"
            )
        value = exact_in_float(ctx, tuple(_cast_value(v, to) for v in x.value), to)
    return [tensor(to, x.shape, value)]


@register("Cast")
def cast(ctx, ins: list) -> list:
    """Cast: same shape, type ``to``; values converted (float to int truncates)."""
    to = ctx.attr("to", 0)
    if isinstance(to, str):  # Cast-1: the type's name ("INT64")
        try:
            to = TensorProto.DataType.Value(to.upper())
        except ValueError:
            to = 0
    outs = _cast(ctx, ins[0], to)
    x = ins[0]
    n = _unknown_small_float(x) if to in INT_TYPES else None
    if n is not None:
        values = _rational_values(ctx, "trunc")  # float to int truncates toward zero
        if values is not None and len(values) == n:
            return [tensor(to, x.shape, values)]
    return outs


@register("CastLike", since=15)
def cast_like(ctx, ins: list) -> list:
    """CastLike: same shape as the input, type of ``target_type``."""
    return _cast(ctx, ins[0], ins[1].dtype if ins[1] is not None else 0)


@register("BitCast", since=26)
def bitcast(ctx, ins: list) -> list:
    """BitCast: same shape (the bit widths must match), type ``to``."""
    return [tensor(ctx.attr("to", 0), ins[0].shape)]


@register("Shrink", since=9)
def shrink(ctx, ins: list) -> list:
    """Shrink: the input's type and shape."""
    x = ins[0]
    return [tensor(x.dtype, x.shape)]


def cast_bounds(ctx, ins: list, outs: list, bounds: list):
    """Value-bounds rule of Cast: the input's bounds, kept only by a cast to an integer type."""
    if outs and outs[0] is not None and outs[0].dtype not in INT_TYPES:
        return None
    return carry_bounds(ctx, ins, outs, bounds)


#: Traits the engine and the passes read (:class:`~shapeinfer.inference.op_registry.OpTraits`).
declare_traits("Cast", value_bounds=cast_bounds, movement="copy")
