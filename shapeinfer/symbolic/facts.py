"""Facts about tensors: what inference knows of one value in a graph.

A :class:`Fact` holds the element type, the dims (or unknown rank) and, for small numeric
tensors of static shape, the flattened row-major *values* (ints, floats, symbolic dims, or
``None`` for an element whose value is unknown). Booleans are stored as 0/1 ints.

Non-tensor values (sequences, optionals, maps) carry ``kind`` and, for sequences and
optionals, the fact of their element in ``elem``; a map has its key type in ``dtype`` and the
fact of its values in ``elem``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from shapeinfer.symbolic.dims import Dim, Expr, product

#: Tensors with at most this many elements have their values tracked.
MAX_VALUE_ELEMENTS = 64

Value = Any  # int | float | Expr | None


@dataclass(frozen=True, slots=True)
class Fact:
    """What is known about one value. Immutable and hashable."""

    dtype: int = 0  # onnx.TensorProto data type; 0 = unknown
    shape: tuple[Dim, ...] | None = None  # None = unknown rank
    value: tuple[Value, ...] | None = None  # flattened values, when tracked
    kind: str = "tensor"  # "tensor" | "sequence" | "optional" | "sparse_tensor" | "map"
    elem: Fact | None = None  # element fact of a sequence / optional, value fact of a map
    _hash: int | None = field(default=None, init=False, repr=False, compare=False)

    def __hash__(self) -> int:  # cached: facts key the engine's memo table
        h = self._hash
        if h is None:
            h = hash((self.dtype, self.shape, self.value, self.kind, self.elem))
            object.__setattr__(self, "_hash", h)
        return h

    @property
    def rank(self) -> int | None:
        """The rank, or None when unknown."""
        return None if self.shape is None else len(self.shape)

    @property
    def is_static(self) -> bool:
        """True when the rank and every dim are known integers."""
        return self.shape is not None and all(type(d) is int for d in self.shape)

    @property
    def numel(self) -> Dim | None:
        """The element count, or None when the rank is unknown."""
        return None if self.shape is None else product(self.shape)

    @property
    def known_values(self) -> bool:
        """True when every element's value is known."""
        return self.value is not None and all(v is not None for v in self.value)

    def with_shape(self, shape: tuple[Dim, ...] | None) -> Fact:
        return Fact(self.dtype, shape, None, self.kind, self.elem)


def tensor(dtype: int, shape: tuple[Dim, ...] | list | None, value: tuple | list | None = None) -> Fact:
    """A tensor fact; ``value`` is dropped unless it matches a small static shape."""
    if shape is not None:
        shape = tuple(shape)
    if value is not None:
        value = tuple(value)
        if shape is None or not all(type(d) is int for d in shape):
            value = None
        else:
            n = 1
            for d in shape:
                n *= d
            if n != len(value) or n > MAX_VALUE_ELEMENTS:
                value = None
    return Fact(dtype, shape, value)


def values_from_array(arr: Any) -> tuple | None:
    """Python values of a small numpy array (bools become 0/1), or None when too large."""
    if arr.size > MAX_VALUE_ELEMENTS:
        return None
    kind = arr.dtype.kind
    if kind in "iub":
        return tuple(int(x) for x in arr.reshape(-1).tolist())
    if kind == "f":
        return tuple(float(x) for x in arr.reshape(-1).tolist())
    return None


def is_dim_value(v: Value) -> bool:
    """True for a value usable as a dim (an int or a symbolic expression)."""
    return type(v) is int or isinstance(v, Expr)
