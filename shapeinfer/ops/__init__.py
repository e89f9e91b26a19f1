"""Native inference rules, one module per op family; importing this package registers them all."""

from shapeinfer.ops import (  # noqa: F401
    attention,
    control_flow,
    conv,
    elementwise,
    gather_slice,
    generators,
    layout,
    linalg,
    misc,
    normalization,
    reduce,
    reshape,
    resize,
    rnn,
    sequence,
    shape,
    signal,
)
