"""The inference engine's own codes (``E002``-``E090``) in the lint catalog, each under its own
code: lint reports an engine diagnostic with the engine's code, so ``--select E031``,
``--ignore E017``, ``severity.E032`` and ``--explain E060`` work on them like on any rule.

The engine reports these while inferring (:mod:`shapeinfer.inference.engine`, :mod:`shapeinfer.inference.ops`);
nothing here checks anything. A code's default severity is the one the engine reports it at.
Codes the engine emits that a check module declares (``E001``, ``E003``, ``E010``-``E014``,
``G...``, ``R...``, ``S...``) are declared there; ``tests/lint/test_lint_ci.py`` checks that every
code literal in the package is in the catalog.
"""

from __future__ import annotations

from shapeinfer.lint.registry import declare

_RUNS = "The node fails at run time (onnxruntime refuses the model or the node); its outputs are left unknown."

declare(
    "E002",
    "onnx-inference-failed",
    "warning",
    "onnx's per-node inference failed where shapeinfer had no rule of its own",
    """
    For an op shapeinfer has no rule for, onnx's own per-node shape inference is asked, and it
    failed (often because an input's type is unknown upstream). The node's outputs are left
    unknown. When every input's type was known, onnx's refusal is an E011 error instead; here
    an input's type was unknown, or onnx failed in another way, which is not proof that the
    model is wrong. Report it if the node is valid.
    """,
)

declare(
    "E004",
    "tensor-defined-twice",
    "error",
    "a tensor name that two nodes (or a node and an input or initializer) define",
    """
    ONNX graphs are in SSA form: every tensor name is defined once. Here a node's output name
    is already an input, an initializer or another node's output. onnx's checker and
    onnxruntime refuse the model; OpenVINO loads it (a warning under ``--target openvino``).
    Rename one of the two.
    """,
)

declare(
    "E005",
    "no-default-opset",
    "warning",
    "the model imports no opset for the default domain",
    """
    The model's ``opset_import`` has no entry for the default ONNX domain, so which version of
    each op is meant is unknown; inference assumes the latest opset onnx knows. onnx's checker
    refuses a model that uses default-domain ops without importing the domain ("No opset import
    for domain"); onnxruntime loads it, with an opset of its own choosing. Add the opset the
    model was exported for.
    """,
)

declare(
    "E006",
    "negative-input-dim",
    "warning",
    "a graph input declares a negative dim",
    """
    A graph input's declared shape has a ``dim_value`` below 0, which no tensor can have (some
    exporters write -1 for "dynamic"). Inference treats the dim as unknown (a fresh symbol).
    Declare a dynamic dim with a ``dim_param`` name, or leave it unset.
    """,
)

declare(
    "E007",
    "attribute-wrong-type",
    "error",
    "an attribute whose type is not the one the op takes",
    f"""
    An attribute has another type than the op's schema gives it (an ``axis`` given as a float,
    ``perm`` as a single int). onnx's checker refuses the node. {_RUNS}
    """,
)

declare(
    "E008",
    "cast-nan-to-int",
    "warning",
    "NaN or infinity cast to an integer type",
    """
    A Cast of a known float value that is NaN or infinite to an integer type: the result is
    undefined by the ONNX spec and differs between runtimes. The value is not carried further.
    Check the arithmetic that produced it.
    """,
)

declare(
    "E015",
    "squeeze-unsqueeze-invalid",
    "error",
    "a Squeeze of a dim that is not 1, or an Unsqueeze with repeated axes",
    f"""
    Squeeze names an axis whose size is known and not 1, or Unsqueeze's axes repeat. {_RUNS}
    """,
)

declare(
    "E016",
    "transpose-perm-invalid",
    "error",
    "a Transpose perm that is not a permutation of the input's axes",
    f"""
    Transpose's ``perm`` does not list each axis of its input exactly once (a repeat, an axis
    out of range, the wrong length for the input's rank). {_RUNS}
    """,
)

declare(
    "E017",
    "slice-negative-step-end",
    "warning",
    "a Slice with a negative step whose end runtimes read differently",
    """
    A Slice with a negative step and an ``end`` of 2**31 - 1 or 2**63 - 1: ONNX's clamping rule
    reads that end as the last index, onnxruntime as "through index 0" (numpy's None), so the
    output length depends on the runtime and inference leaves it unknown. Use -2**63 (INT64_MIN)
    as the end for "through index 0", which both read the same way.
    """,
)

declare(
    "E018",
    "wrong-input-output-count",
    "error",
    "a node with more or fewer inputs or outputs than its op's schema allows",
    f"""
    The node lists a number of inputs or outputs outside the range its op's schema gives at the
    model's opset (a Relu with two inputs, a Dropout-1 with three outputs). onnx's checker
    refuses the model. {_RUNS} Until 2026-11 this was reported as E011.
    """,
)

declare(
    "E019",
    "gather-index-out-of-range",
    "error",
    "a Gather whose known index is outside the gathered axis",
    f"""
    A Gather's data and indices are both known (constants, shape values) and an index is not
    in ``[-n, n-1]`` for the gathered axis of length ``n``. onnxruntime fails on the node ("indices
    element out of data bounds"). {_RUNS} Until 2026-11 this was reported as E011.
    """,
)

declare(
    "E020",
    "constant-without-value",
    "error",
    "a Constant node with no value attribute",
    f"""
    A Constant node has none of ``value``, ``value_float(s)``, ``value_int(s)``,
    ``value_string(s)``, ``sparse_value``. {_RUNS}
    """,
)

declare(
    "E021",
    "negative-shape-value",
    "error",
    "a shape input (ConstantOfShape, Expand...) with a negative dim",
    f"""
    A shape tensor whose values are known holds a negative dim where a size is expected
    (ConstantOfShape's ``input``). {_RUNS}
    """,
)

declare(
    "E022",
    "range-delta-zero",
    "error",
    "a Range whose delta is 0",
    f"""
    Range's ``delta`` is known to be 0: the number of elements is undefined. {_RUNS}
    """,
)

declare(
    "E023",
    "tile-repeats-rank",
    "error",
    "Tile repeats whose length is not the input's rank",
    f"""
    Tile's ``repeats`` must have one entry per input axis; this one has another length. {_RUNS}
    """,
)

declare(
    "E024",
    "slice-invalid",
    "error",
    "a Slice whose starts, ends, axes or steps are invalid",
    f"""
    A Slice's ``starts``/``ends``/``axes``/``steps`` have different lengths, an axis is repeated,
    a step is 0, or a Slice-1 has no ``starts``/``ends``. onnx's inference and onnxruntime refuse
    the node. {_RUNS} Until 2026-11 this was reported as E012.
    """,
)

declare(
    "E025",
    "concat-invalid",
    "error",
    "a Concat whose inputs differ in rank or that has no axis",
    f"""
    A Concat (or QLinearConcat) has inputs of different ranks, no ``axis`` attribute, or nothing to
    concatenate. onnx's inference and onnxruntime refuse the node. {_RUNS} Until 2026-11 this was
    reported as E013.
    """,
)

declare(
    "E026",
    "split-invalid",
    "error",
    "a Split whose sizes do not fit the dim or the node's outputs",
    f"""
    A Split's ``split`` sizes do not add up to the dim, a dim does not split into the equal parts
    the node asks for (no ``split``: one part per output), or ``num_outputs`` or ``split`` does
    not match the node's outputs. onnxruntime fails on the node. {_RUNS} Until 2026-11 this was
    reported as E014.
    """,
)

declare(
    "E030",
    "missing-attribute-or-operand",
    "error",
    "an op without an attribute or operand it needs (a body, N and K, a non-scalar input)",
    f"""
    The node lacks something its op cannot run without: If without ``then_branch`` or
    ``else_branch``, Loop, Scan or SequenceMap without a ``body``, MatMulNBits without ``N``
    and ``K``, a MatMul or a quantized MatMul of a scalar. {_RUNS}
    """,
)

declare(
    "E031",
    "operand-structure-mismatch",
    "error",
    "operands that do not fit the op's structure (2-D Gemm inputs, If branches, Loop/Scan bodies)",
    f"""
    The node's operands or subgraphs do not fit together: Gemm-like contrib ops (FusedGemm,
    QGemm) with inputs that are not 2-D; If branches that give a different number of outputs,
    or outputs of different element types (onnx and onnxruntime refuse such a model whichever
    branch runs); a Loop body whose inputs and outputs do not match the carried values; a Scan
    whose ``num_scan_inputs`` or axes attributes do not match its inputs and outputs. {_RUNS}
    """,
)

declare(
    "E032",
    "loop-not-settled",
    "info",
    "loop-carried values whose shapes did not settle",
    """
    Inference runs a Loop's or Scan's body until the loop-carried values' shapes stop changing
    (a value that grows each iteration, a Concat onto a carried tensor); these did not settle
    within the bound, so their shapes are left unknown after the loop. Not an error in the
    model; shapes after the loop are not checked.
    """,
)

declare(
    "E040",
    "conv-or-sequence-invalid",
    "error",
    "a convolution (or window), GatherBlockQuantized or SequenceConstruct that is invalid",
    f"""
    Convolutions (Conv, ConvInteger, QLinearConv, DeformConv, ConvTranspose, NhwcConv...) and
    the window arithmetic they share with pooling: an input of rank < 3, a kernel whose rank is
    not the input's spatial rank, ``strides``/``dilations``/``pads`` or ``output_shape`` of the
    wrong length, a stride, dilation or kernel that is not positive, a window larger than the
    padded input; GatherBlockQuantized with ``bits`` that do not divide its uint8 data;
    SequenceConstruct without inputs or of an element that is not a tensor. {_RUNS}
    """,
)

declare(
    "E041",
    "pool-or-sequence-invalid",
    "error",
    "a pooling or nchwc op, or a sequence access, whose inputs or attributes are invalid",
    f"""
    Pooling (MaxPool, AveragePool, LpPool, MaxUnpool, QLinearAveragePool,
    QLinearGlobalAveragePool) with an input of rank < 3 or a missing or mismatched
    ``kernel_shape``; onnxruntime's nchwc ops with an input of rank < 2, ``channels`` that are
    not positive, ``scales`` of the wrong length; SequenceAt or SequenceErase on a sequence that
    is always empty. {_RUNS}
    """,
)

declare(
    "E042",
    "split-or-concat-sequence-invalid",
    "error",
    "a SplitToSequence / ConcatFromSequence / Col2Im whose sizes or attributes are invalid",
    f"""
    SplitToSequence with a ``split`` that is not positive or does not sum to the dim,
    ConcatFromSequence without ``axis``, Col2Im with a ``block_shape`` that does not fit the
    input. {_RUNS}
    """,
)

declare(
    "E043",
    "optional-without-type",
    "error",
    "an Optional with neither an input nor a type attribute",
    f"""
    An Optional node with no input must say the type of the empty optional in its ``type``
    attribute. {_RUNS}
    """,
)

declare(
    "E044",
    "optional-always-empty",
    "warning",
    "OptionalGetElement on an optional that is always empty",
    """
    The optional read by OptionalGetElement is provably empty (an Optional node without an
    input), so the node fails whenever it runs. Harmless only when the node sits in a branch
    that never runs.
    """,
)

declare(
    "E050",
    "attention-or-fused-op-invalid",
    "error",
    "an attention, normalization or fused contrib op whose inputs or attributes are invalid",
    f"""
    Attention-family and fused ops (Attention, QAttention, FlexAttention, LinearAttention,
    EmbedLayerNormalization, BiasSplitGelu, SwiGLU, the HyperConnection mixes...) with an input
    of the wrong rank, a missing or non-positive ``num_heads`` / ``q_num_heads`` /
    ``kv_num_heads``, ``qkv_hidden_sizes`` or a bias length that do not divide as the op
    needs, an odd hidden size where halves are taken. {_RUNS}
    """,
)

declare(
    "E060",
    "pad-invalid",
    "error",
    "a Pad whose pads or axes are invalid",
    f"""
    Pad without ``pads``, with repeated ``axes``, with a ``pads`` length that is not twice the
    number of axes, or with negative pads that make a dim negative. {_RUNS}
    """,
)

declare(
    "E061",
    "topk-k-invalid",
    "error",
    "a TopK whose k is negative or larger than the dim",
    f"""
    TopK's ``k`` is known and below 0 or above the size of the axis it selects along. {_RUNS}
    """,
)

declare(
    "E062",
    "onehot-depth-invalid",
    "error",
    "a OneHot whose depth is not positive",
    f"""
    OneHot's ``depth`` is known and below 1. {_RUNS}
    """,
)

declare(
    "E063",
    "einsum-equation-invalid",
    "error",
    "an Einsum equation that does not match its inputs",
    f"""
    Einsum's ``equation`` is malformed, names another number of operands than the node has
    inputs, or a term whose letters do not match its input's rank. {_RUNS}
    """,
)

declare(
    "E064",
    "det-rank-invalid",
    "error",
    "a Det of an input of rank < 2",
    f"""
    Det takes a batch of square matrices: its input needs rank 2 or more. {_RUNS}
    """,
)

declare(
    "E070",
    "depth-space-invalid",
    "error",
    "a DepthToSpace / SpaceToDepth whose blocksize does not fit the input",
    f"""
    DepthToSpace or SpaceToDepth with a ``blocksize`` that is not positive, an input that is
    not 4-D, or a dim that is not a multiple of the block (channels for DepthToSpace, height and
    width for SpaceToDepth). {_RUNS}
    """,
)

declare(
    "E071",
    "resize-invalid",
    "error",
    "a Resize / Upsample whose scales, sizes or policy are invalid",
    f"""
    Resize without ``scales`` or ``sizes``, with one of another length than the axes it
    resizes, a scale that is not positive, an unknown ``keep_aspect_ratio_policy``; Upsample
    with ``scales`` of the wrong length or, in its first version, an input that is not 4-D.
    {_RUNS}
    """,
)

declare(
    "E080",
    "signal-op-invalid",
    "error",
    "a DFT / STFT whose input rank, axis or frame step is invalid",
    f"""
    DFT of an input of rank < 2 or along the last (real/imaginary) axis; STFT of a signal that
    is not 3-D or with a ``frame_step`` that is not positive. {_RUNS}
    """,
)

declare(
    "E090",
    "rnn-invalid",
    "error",
    "an RNN / GRU / LSTM whose direction or input rank is invalid",
    f"""
    A recurrent op with a ``direction`` other than ``forward``, ``reverse`` or
    ``bidirectional``, or an input ``X`` that is not 3-D. {_RUNS}
    """,
)
