"""Native inference rules, one module per op family; importing this package registers them all."""

from shapeinfer.ops import (  # noqa: F401
    control_flow,
    conv,
    elementwise,
    gather_slice,
    generators,
    linalg,
    normalization,
    reduce,
    reshape,
    sequence,
    shape,
)
