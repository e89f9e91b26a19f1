"""Native inference rules, one module per op family; importing this package registers them all."""

from shapeinfer.ops import (  # noqa: F401
    conv,
    elementwise,
    gather_slice,
    generators,
    linalg,
    normalization,
    reduce,
    reshape,
    shape,
)
