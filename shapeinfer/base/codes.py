"""Every code the layers below lint report, with its catalog entry: the inference engine and
its ops (``E...``, ``G...``, ``R...``, ``S...``), the io layer, the symbolic algebra and the pass
manager name a code by its constant here (``codes.SLICE_INVALID``), and lint builds its rule
catalog from :data:`CATALOG` (:mod:`shapeinfer.lint.engine_codes`), adding its own checks and
rules (``M...``, ``P...``, the lint-only ``G``/``R``/``S`` rules). One code, one meaning: a new
kind of diagnostic gets a new code.

Data only: no onnx, no other shapeinfer import.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Code:
    """One code: its kebab-case ``name``, default ``severity``, one-line ``summary``, the ``doc``
    lint prints for ``--explain`` and in ``rules/README.md``, and the optimize pass that fixes it
    (``fix``, None: not fixable).

    One severity per diagnostic: the engine reports a code at ``severity``, or where its ``doc``
    says the cases differ (G006, G004), at the severity the case has under onnx's checker
    (``check_model(full_check=True)``: an error where it refuses the model), and that one
    severity is what ``shapeinfer MODEL`` (text and ``--json``), the Python API and ``lint``
    under its default target report. A lint ``--target`` whose runtime judges the model
    otherwise, or a ``severity`` setting, re-grades a finding visibly (``default_severity`` and
    ``regraded`` in its JSON, a note in its text)."""

    code: str
    name: str
    severity: str
    summary: str
    doc: str
    fix: str | None = None


#: code -> :class:`Code`, in code order.
CATALOG: dict[str, Code] = {}


def _code(code: str, name: str, severity: str, summary: str, doc: str, fix: str | None = None) -> str:
    CATALOG[code] = Code(code, name, severity, summary, doc, fix)
    return code


_RUNS = "The node fails at run time (onnxruntime refuses the model or the node); its outputs are left unknown."


# ---------------------------------------------------------------- model and inference

INFERENCE_FAILED = _code(
    "E001",
    "inference-failed",
    "warning",
    "inference could not process a node",
    """
    Inference hit something it could not handle for this node (an unexpected attribute value, a
    failure inside onnx's own per-node inference) and left the node's outputs unknown. This is
    not proof that the model is wrong, but the shapes after the node are not checked; report it
    if the node is valid.
    """,
)

ONNX_INFERENCE_FAILED = _code(
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

EXTERNAL_DATA_UNREADABLE = _code(
    "E003",
    "external-data-unreadable",
    "error",
    "an external-data file that is missing or does not hold the tensor",
    """
    A tensor stored outside the model (``data_location: EXTERNAL``) names a file that is absent,
    not a regular file, or shorter than the entry's ``offset`` + ``length`` or the tensor's size
    (a Git LFS pointer left in place of the weights: ``git lfs pull``), or the entry itself is
    malformed. onnx's checker, onnxruntime and OpenVINO all refuse to load such a model.
    Inference goes on without the tensor's values (they are unknown). A missing file is one
    diagnostic naming it and the tensors stored in it, and ``-o`` / ``optimize -o`` do not write
    a model pointing at it without ``--force``. Copy the data file next to the model, or re-save
    the model with its data. Only checked for a model read from a file (its folder is where the
    data must be).
    """,
)

TENSOR_DEFINED_TWICE = _code(
    "E004",
    "tensor-defined-twice",
    "error",
    "a tensor name that two nodes (or a node and an input or initializer) define",
    """
    ONNX graphs are in SSA form: every tensor name is defined once. Here a node's output name
    is already an input, an initializer or another node's output. onnx's checker and
    onnxruntime refuse the model; OpenVINO loads it (a warning under ``--target openvino``, which
    says so).
    Rename one of the two.
    """,
)

NO_DEFAULT_OPSET = _code(
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

NEGATIVE_INPUT_DIM = _code(
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

PLACEHOLDER_INPUT_DIM = _code(
    "E009",
    "placeholder-input-dim",
    "info",
    "a graph input dim named by a placeholder (?, None, -1) rather than a symbol",
    """
    A graph input's ``dim_param`` is a placeholder rather than a name: ``?``, ``None``, ``null``,
    ``nil``, ``unk``, ``unknown``, ``dynamic`` (any case) or a negative integer such as ``-1``
    (older paddle2onnx writes ``[-1, 3, ?, ?]``). Read as a name, two such dims would be one
    symbol, and height and width of an image assumed equal. Inference treats each as its own
    unknown dim, as if it had no name, called ``<input>_d<axis>`` (``x_d2``, ``x_d3``): those are
    the names ``--bind``, ``--dim-range`` and ``verify`` take. The same texts in ``value_info``
    or graph outputs are unknown dims too. Give the dims real names (``height``, ``width``) when
    exporting to make the model say what it means.
    """,
)

ATTRIBUTE_WRONG_TYPE = _code(
    "E007",
    "attribute-wrong-type",
    "error",
    "an attribute whose type is not the one the op takes",
    f"""
    An attribute has another type than the op's schema gives it (an ``axis`` given as a float,
    ``perm`` as a single int). onnx's checker refuses the node. {_RUNS} Lint checks every
    attribute of a node whose op has a schema (onnx's; onnxruntime's for ``com.microsoft``),
    not only those a shape rule reads: an error where the target's runtime refuses the model
    (onnx's checker and onnxruntime for the onnx domains, onnxruntime alone for
    ``com.microsoft``), a warning elsewhere (OpenVINO's converters read some attributes only).
    """,
)

CAST_NAN_TO_INT = _code(
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

INVALID_NODE = _code(
    "E010",
    "invalid-node",
    "error",
    "a node's attributes or inputs are invalid",
    """
    Inference found a node that violates its op's contract: an axis out of range for the
    input's rank (Flatten, OneHot, DFT, any op with an ``axis``), an element type taken from an
    attribute (Cast's ``to``) that is not an ONNX type. The message says what is wrong. The
    node fails at run time. Op-specific problems have their own codes (E015-E090: a Transpose
    ``perm`` that is not a permutation is E016, a Range with delta 0 E022, a Conv input of rank
    < 3 E040...).
    """,
)

REJECTED_BY_ONNX_INFERENCE = _code(
    "E011",
    "rejected-by-onnx-inference",
    "error",
    "onnx's own per-node inference rejects the node",
    """
    shapeinfer runs onnx's per-node shape inference beside its own rules (for the ops it has no
    rule for, and as a validator of the others), and onnx's strict inference rejects this node:
    an attribute out of its allowed range (negative ``pads``, zero ``strides`` or
    ``kernel_shape``), a weight or input of the wrong rank (a Conv weight whose spatial rank is
    not the input's, a scalar Softmax input), inputs an op's contract forbids together
    (LinearAttention's ``update_rule`` and its ``beta``/``decay`` inputs), a constant input
    whose data does not match its type. The message is onnx's own. onnx and the ONNX checker's
    strict mode refuse the model; runtimes fail on the node. Fix the node as the message says.
    (A node with a number of inputs or outputs its schema does not allow is E018; a Gather whose
    known index is out of range, E019.)
    """,
)

RANK_TOO_LARGE = _code(
    "E012",
    "rank-too-large",
    "warning",
    "a rank read from the model is past 1,024: left unknown",
    """
    A length the model gives where a rank is expected (the length of ConstantOfShape's shape
    input, of Col2Im's ``image_shape``) is larger than 1,024. No runtime supports such ranks,
    and expanding them dim by dim would cost time and memory out of proportion to the model, so
    the output's rank is left unknown (onnx does the same). A rank that a rule would have to
    build past the cap is an error. Check the producer of that shape tensor. (Invalid Slice nodes are E024.)
    """,
)

INT64_OVERFLOW = _code(
    "E013",
    "int64-overflow",
    "error",
    "a dim or shape value that overflows int64",
    """
    A dim (Concat of dims summing past 2**63 - 1, a Tile or a ConvTranspose of huge dims) or an
    int64 value computed from shape values (``Sub`` of INT64_MIN and 1) does not fit in int64.
    onnxruntime wraps such values silently; in shape arithmetic that is always a bug, and onnx's
    inference rejects it. The dim becomes unknown (a fresh symbol), so nothing downstream or in
    a written model ever holds a value outside int64. Fix the arithmetic or the dims upstream.
    (Invalid Concat nodes are E025.)
    """,
)

INVALID_INITIALIZER = _code(
    "E014",
    "invalid-initializer",
    "error",
    "an initializer whose data or type is invalid",
    """
    An initializer (or a Constant's tensor) has an undefined or unknown element type, or data
    that does not match its dims and type (a ``raw_data`` of the wrong byte length, fewer
    values than its dims hold). onnx's inference and onnxruntime refuse to read it. Re-export
    the tensor or fix its ``data_type``/``dims``. (Invalid Split nodes are E026.)
    """,
)

SQUEEZE_UNSQUEEZE_INVALID = _code(
    "E015",
    "squeeze-unsqueeze-invalid",
    "error",
    "a Squeeze of a dim that is not 1, or an Unsqueeze with repeated axes",
    f"""
    Squeeze names an axis whose size is known and not 1, or Unsqueeze's axes repeat. {_RUNS}
    """,
)

TRANSPOSE_PERM_INVALID = _code(
    "E016",
    "transpose-perm-invalid",
    "error",
    "a Transpose perm that is not a permutation of the input's axes",
    f"""
    Transpose's ``perm`` does not list each axis of its input exactly once (a repeat, an axis
    out of range, the wrong length for the input's rank). {_RUNS}
    """,
)

SLICE_NEGATIVE_STEP_END = _code(
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

WRONG_INPUT_OUTPUT_COUNT = _code(
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

GATHER_INDEX_OUT_OF_RANGE = _code(
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

CONSTANT_WITHOUT_VALUE = _code(
    "E020",
    "constant-without-value",
    "error",
    "a Constant node with no value attribute",
    f"""
    A Constant node has none of ``value``, ``value_float(s)``, ``value_int(s)``,
    ``value_string(s)``, ``sparse_value``. {_RUNS}
    """,
)

NEGATIVE_SHAPE_VALUE = _code(
    "E021",
    "negative-shape-value",
    "error",
    "a shape input (ConstantOfShape, Expand...) with a negative dim",
    f"""
    A shape tensor whose values are known holds a negative dim where a size is expected
    (ConstantOfShape's ``input``). {_RUNS}
    """,
)

RANGE_DELTA_ZERO = _code(
    "E022",
    "range-delta-zero",
    "error",
    "a Range whose delta is 0",
    f"""
    Range's ``delta`` is known to be 0: the number of elements is undefined. {_RUNS}
    """,
)

TILE_REPEATS_RANK = _code(
    "E023",
    "tile-repeats-rank",
    "error",
    "Tile repeats whose length is not the input's rank",
    f"""
    Tile's ``repeats`` must have one entry per input axis; this one has another length. {_RUNS}
    """,
)

SLICE_INVALID = _code(
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

CONCAT_INVALID = _code(
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

SPLIT_INVALID = _code(
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

MISSING_ATTRIBUTE_OR_OPERAND = _code(
    "E030",
    "missing-attribute-or-operand",
    "error",
    "an op without an attribute or operand it needs (a body, N and K, a non-scalar input)",
    f"""
    The node lacks something its op cannot run without: If without ``then_branch`` or
    ``else_branch``, Loop, Scan or SequenceMap without a ``body``, MatMulNBits without ``N``
    and ``K``, a MatMul or a quantized MatMul of a scalar. {_RUNS} Lint also reports every
    attribute the op's schema requires and the node lacks (Cast's ``to``, LRN's ``size``),
    graded by the target's runtime as E007 is.
    """,
)

OPERAND_STRUCTURE_MISMATCH = _code(
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

LOOP_NOT_SETTLED = _code(
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

CONV_OR_SEQUENCE_INVALID = _code(
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

POOL_OR_SEQUENCE_INVALID = _code(
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

SPLIT_OR_CONCAT_SEQUENCE_INVALID = _code(
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

OPTIONAL_WITHOUT_TYPE = _code(
    "E043",
    "optional-without-type",
    "error",
    "an Optional with neither an input nor a type attribute",
    f"""
    An Optional node with no input must say the type of the empty optional in its ``type``
    attribute. {_RUNS}
    """,
)

OPTIONAL_ALWAYS_EMPTY = _code(
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

ATTENTION_OR_FUSED_OP_INVALID = _code(
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

PAD_INVALID = _code(
    "E060",
    "pad-invalid",
    "error",
    "a Pad whose pads or axes are invalid",
    f"""
    Pad without ``pads``, with repeated ``axes``, with a ``pads`` length that is not twice the
    number of axes, or with negative pads that make a dim negative. {_RUNS}
    """,
)

TOPK_K_INVALID = _code(
    "E061",
    "topk-k-invalid",
    "error",
    "a TopK whose k is negative or larger than the dim",
    f"""
    TopK's ``k`` is known and below 0 or above the size of the axis it selects along. {_RUNS}
    """,
)

ONEHOT_DEPTH_INVALID = _code(
    "E062",
    "onehot-depth-invalid",
    "error",
    "a OneHot whose depth is not positive",
    f"""
    OneHot's ``depth`` is known and below 1. {_RUNS}
    """,
)

EINSUM_EQUATION_INVALID = _code(
    "E063",
    "einsum-equation-invalid",
    "error",
    "an Einsum equation that does not match its inputs",
    f"""
    Einsum's ``equation`` is malformed, names another number of operands than the node has
    inputs, or a term whose letters do not match its input's rank. {_RUNS}
    """,
)

DET_RANK_INVALID = _code(
    "E064",
    "det-rank-invalid",
    "error",
    "a Det of an input of rank < 2",
    f"""
    Det takes a batch of square matrices: its input needs rank 2 or more. {_RUNS}
    """,
)

DEPTH_SPACE_INVALID = _code(
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

RESIZE_INVALID = _code(
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

SIGNAL_OP_INVALID = _code(
    "E080",
    "signal-op-invalid",
    "error",
    "a DFT / STFT whose input rank, axis or frame step is invalid",
    f"""
    DFT of an input of rank < 2 or along the last (real/imaginary) axis; STFT of a signal that
    is not 3-D or with a ``frame_step`` that is not positive. {_RUNS}
    """,
)

RNN_INVALID = _code(
    "E090",
    "rnn-invalid",
    "error",
    "an RNN / GRU / LSTM whose direction or input rank is invalid",
    f"""
    A recurrent op with a ``direction`` other than ``forward``, ``reverse`` or
    ``bidirectional``, or an input ``X`` that is not 3-D. {_RUNS}
    """,
)


# ---------------------------------------------------------------- graph

BROADCAST_INCOMPATIBLE = _code(
    "G002",
    "broadcast-incompatible",
    "error",
    "shapes that provably cannot broadcast",
    """
    Two dims that must broadcast (or be equal) are different integers, neither of which is 1
    (for example an Add of ``[2, 3]`` and ``[4, 3]``, or a MatMul whose inner dims differ). The
    node fails at run time for every input. Fix the producer of one of the operands.
    """,
)

ASSUMED_DIM_EQUALITY = _code(
    "G003",
    "assumed-dim-equality",
    "warning",
    "two symbols assumed equal",
    """
    An op needs two dims to be equal (broadcasting, MatMul's inner dims, Concat's other axes)
    and they are different symbolic expressions, such as ``seq`` and ``min(512, seq)``, or two
    input symbols. Inference assumes they are equal and carries on with one of them; the model
    only works when that holds. Either it is a real constraint between the inputs (document it,
    or give both inputs the same symbol) or a bug in the graph.
    """,
)

GRAPH_ORDER_OR_CYCLE = _code(
    "G004",
    "graph-order-or-cycle",
    "error",
    "cycle, or nodes not in topological order",
    """
    ONNX requires a graph's nodes to be topologically sorted and acyclic. A cycle cannot be
    executed. Nodes merely out of order are an error too, as onnx's checker refuses them;
    onnxruntime and OpenVINO sort a main graph's nodes themselves and run the model, so lint's
    ``onnxruntime`` and ``openvino`` targets lower that case to a warning (saying so), but not for
    an ``If`` branch or a function body out of order, which all three refuse. ``shapeinfer
    optimize`` writes the main graph sorted. Sort the nodes (onnx-graphsurgeon's ``toposort``)
    or break the cycle.
    """,
)

UNDEFINED_TENSOR = _code(
    "G005",
    "undefined-tensor",
    "error",
    "a node input or graph output that nothing defines",
    """
    A node reads a tensor, or the graph lists an output, that no node produces and that is not a
    graph input, an initializer, or a value of an enclosing graph. The model cannot run; usually
    a node was deleted or renamed without updating its consumers.
    """,
)

DECLARED_SHAPE_MISMATCH = _code(
    "G006",
    "declared-shape-mismatch",
    "error",
    "a declared value_info/output shape contradicts the inferred one",
    """
    The model declares a type or shape for a value (``value_info`` or a graph output, as written by
    an exporter or an earlier tool) that contradicts what inference derives: a different element
    type, rank, or a dim that provably differs from the inferred one, or differs from it where both
    are expressions over the graph inputs' symbols (unless inference itself assumed the two equal,
    which G003 reports: ``seq`` declared where ``min(seq, 512)`` is inferred). Tools that trust the
    declaration (memory planners, converters, onnxruntime's shape merging) then go wrong. It is an
    error where onnx's checker (``full_check``) refuses the model for it, in ``shapeinfer MODEL``,
    the Python API and ``lint`` alike: a declared element type, rank or int dim that contradicts
    what onnx's own inference derives too, or a graph input whose declared type, rank or int dims
    differ from its initializer (its default value). Otherwise it is a warning: a contradiction
    that involves a symbolic dim (``past + seq`` declared where ``seq`` is inferred, even where
    they differ at every size), which no runtime sees, or an int dim only shapeinfer's inference
    derives (a Reshape target computed from shapes). Under lint's ``onnxruntime`` target a
    declared element type and a graph input against its initializer stay errors (onnxruntime
    refuses those) and a rank or dim becomes a warning; under ``openvino`` every G006 is a warning
    (OpenVINO loads them all); the finding says so. Inference keeps what it derived, and
    ``shapeinfer MODEL -o OUT`` writes the inferred type in place of the declared one. A declared ``-1``
    (Paddle's spelling of a dynamic dim) or an open dim is unknown and contradicts nothing. Where
    inference knows less than a declaration (an unknown rank, a fresh symbol), it takes the declared
    type, and says so (G013).
    """,
)

NO_OP_SCHEMA = _code(
    "G007",
    "no-op-schema",
    "info",
    "op with no schema (custom domain) or no shape rule",
    """
    No onnx schema (and no model-local function) defines the op, typically a custom-domain op
    (a vendor domain), or the op is an onnxruntime contrib op (``com.microsoft``, documented in
    ``shapeinfer/inference/ops/contrib/schemas.json``) that has no shape rule here ("no rule for ...").
    Inference cannot see through it: its outputs' shapes are unknown, which usually shows up as
    G001 downstream. Provide a model-local function for it, or bind the shapes after it by hand.
    """,
)

ASSUMED_EXACT_FLOAT = _code(
    "G009",
    "assumed-exact-float",
    "info",
    "a symbolic dim carried through a float tensor, assumed exactly representable",
    """
    A dim travels through a float tensor (``Cast(Shape(x)[2], to=float)``, a float ``Range``
    bound, anchor-grid arithmetic) and inference keeps its symbolic value, assuming the float
    holds it exactly: integers up to 2**24 are exact in float32, up to 2**53 in double. Beyond
    that the runtime rounds and the dims computed from it differ. In float16 and bfloat16 (2**11,
    2**8) the value is not kept. Nothing to fix for real dims; to avoid the float round trip, keep
    shape arithmetic in int64.
    """,
)

RECURSIVE_FUNCTION = _code(
    "G010",
    "recursive-function",
    "error",
    "a model-local function that calls itself",
    """
    A model-local function calls itself, directly or through other functions. ONNX forbids
    recursive functions (the checker rejects the model: there is no way to bound the
    expansion), so runtimes that inline functions cannot load it. The call's outputs are left
    unknown. Rewrite the recursion as a Loop.
    """,
)

FUNCTION_CALL_ARITY = _code(
    "G011",
    "function-call-arity",
    "error",
    "a function call whose output count differs from the function's",
    """
    A node calls a model-local function but lists a different number of outputs than the
    function declares (the function returns ``y1, y2``, the call binds only ``Y``). onnx's
    inference rejects the call ("output out of bounds") and runtimes cannot bind the outputs.
    List one output per function output (an unused one may get any fresh name).
    """,
)

INPUT_GUARD = _code(
    "G012",
    "input-guard",
    "info",
    "the inferred shapes hold only under a condition on the input dims",
    """
    Inference found a condition on the graph inputs' dims that the model needs and that no
    other code reports: a Reshape ``-1`` whose quotient is exact only when a dim divides
    (``N % 4 == 0``), a Gather of Range-derived indices into a fixed-size table
    (``seq <= 1024``: GPT-2's position embeddings), an unknown dim broadcast against a known
    one (``unk_3 == 1 or unk_3 == seq``). Outside it onnxruntime fails (or computes other
    shapes). ``shapeinfer MODEL`` lists every guard (``holds when: ...``), ``verify`` refuses a
    binding that violates one, and ``shapeinfer profile`` gives the input ranges they leave.
    Document the condition for users, or give the input a range (``--dim-range``).
    """,
)

DECLARED_TYPE_ASSUMED = _code(
    "G013",
    "declared-type-assumed",
    "info",
    "a declared type was used where inference could not determine it",
    """
    Inference could not determine a value's element type, rank or some of its dims (a fresh
    symbol: data-dependent, or past an op it cannot see through), and the model declares them
    (``value_info`` or a graph output): inference takes the declaration as an assumption, and
    the shapes that follow from it hold only if it is right. A declared dim never replaces one
    that is one of several alternatives (an ``If`` whose branches give different sizes: a
    declaration matching one branch is wrong whenever the other runs). Inside a subgraph (an
    ``If`` branch, a ``Loop`` or ``Scan`` body, a function body) a declaration is a claim about
    that one run of it: a dim name it uses, other than the graph inputs' symbols, is private to
    it, so the same name in two branches, two bodies or a body and the main graph is not taken
    for the same size. Check the declaration, or give the sizes with ``--input-shape`` /
    ``--bind``.
    """,
)

DIM_GIVEN_UP = _code(
    "G016",
    "dim-given-up",
    "info",
    "a dim whose expression grew past the complexity cap, left unknown",
    """
    A dim or shape value's symbolic expression grew larger than inference's cap on expression
    size (an expression bomb: a dim multiplied by itself at every node, a sum of thousands of
    pieces), so inference replaced it by a fresh symbol from this node on, as if it were
    unknown. The cap is far above what real models need; the dims after the node are not
    wrong, only unresolved. Give the input sizes (``--bind``) to have them computed.
    """,
)

UNSATISFIABLE_GUARD = _code(
    "G015",
    "unsatisfiable-guard",
    "error",
    "a guard the model needs that no input size satisfies",
    """
    A condition the inferred shapes need (a guard, see G012) cannot hold for any input size:
    an equality whose sides always differ (``seq + 1 == seq``, two Concat operands one row
    apart), a bound that is always false, or bounds on one symbol that exclude each other
    (``seq <= 100`` and ``200 <= seq``). With ``--dim-range``, ``--bind`` or ``--input-shape``
    the sizes asked for count: ``--dim-range seq=513:`` on a model that needs ``seq <= 512`` is
    this error too. The message names the guard, the nodes that imposed it and the range that
    rules it out. onnxruntime fails at every such size; ``shapeinfer MODEL`` prints no shapes
    then (and ``-o`` writes nothing), ``profile`` prints no profile and ``verify`` runs nothing.
    Fix the graph, or the input shape or range given.
    """,
)


# ---------------------------------------------------------------- Reshape

RESHAPE_MULTIPLE_INFERRED_DIMS = _code(
    "R001",
    "reshape-multiple-inferred-dims",
    "error",
    "Reshape target has more than one -1",
    """
    A Reshape target may contain at most one ``-1`` (the dim inferred from the element
    count). With two, the output shape is ambiguous and every runtime rejects the node.
    Replace all but one ``-1`` by the actual dim (or ``0`` to copy the input dim at that index).
    """,
)

RESHAPE_ALLOWZERO_ZERO_AND_MINUS_ONE = _code(
    "R002",
    "reshape-allowzero-zero-and-minus-one",
    "error",
    "allowzero=1 with both 0 and -1 in the target",
    """
    With ``allowzero=1`` (Reshape-14 and later) a ``0`` in the target is a literal zero-size
    dim, so the element count is 0 and a ``-1`` cannot be inferred: the ONNX spec makes a target
    with both invalid. Either drop ``allowzero`` (so ``0`` copies the input dim) or spell the
    ``-1`` out.
    """,
)

RESHAPE_COPY_BEYOND_RANK = _code(
    "R003",
    "reshape-copy-beyond-rank",
    "error",
    "a copying 0 at an index past the input rank",
    """
    With ``allowzero=0`` (the default) a ``0`` in the target copies the input dim at the same
    index. A ``0`` at an index >= the input's rank has nothing to copy and the node is invalid.
    Write the intended dim explicitly.
    """,
)

RESHAPE_ELEMENT_COUNT_MISMATCH = _code(
    "R004",
    "reshape-element-count-mismatch",
    "error",
    "element counts provably differ (static or symbolic, incl. int64 overflow)",
    """
    The input's element count and the target's differ for every value of the model's symbols
    (for example 24 elements into ``[5, 5]``, or ``batch*8`` into ``[batch, 3]``), a ``-1``
    cannot be inferred because the rest of the target does not divide the count, or the target
    overflows int64. The node fails at run time whatever the inputs; fix the target or the
    computation that produces it.
    """,
)

RESHAPE_INVALID_TARGET_VALUE = _code(
    "R005",
    "reshape-invalid-target-value",
    "error",
    "a target value below -1",
    """
    Target values must be ``-1`` (infer), ``0`` (copy or zero) or a positive dim. A value such
    as ``-2`` is invalid in every Reshape version and usually comes from shape arithmetic gone
    wrong upstream.
    """,
)

RESHAPE_TARGET_FORM_MISMATCH = _code(
    "R007",
    "reshape-target-form-mismatch",
    "error",
    "target as an attribute where the opset wants an input, or the reverse",
    """
    Reshape-1 reads its target from the ``shape`` attribute; Reshape-5 and later from the
    second input and have no ``shape`` attribute. A node written in the other version's form
    (a target input or no ``shape`` attribute under opset < 5, a ``shape`` attribute or a
    missing second input under opset >= 5) is invalid or silently ignores its target. Write
    the target in the form the opset in force expects (or change the model's opset import).
    Until 2026-11 inference reported a Reshape-1 without its ``shape`` attribute as R006 (lint
    showed it as R007 already).
    """,
)

RESHAPE_TARGET_NOT_INT64 = _code(
    "R011",
    "reshape-target-not-int64",
    "error",
    "target is not a 1-D int64 tensor",
    """
    From Reshape-5 the target input must be a 1-D ``tensor(int64)``. An int32 target (common
    after hand-written shape arithmetic or a converter) or a target of another rank is rejected
    by onnxruntime and by the ONNX checker. Cast it to int64 (or store the constant as int64) and
    flatten it to 1-D.
    """,
)


# ---------------------------------------------------------------- Shape

SHAPE_START_END_BEFORE_V15 = _code(
    "S001",
    "shape-start-end-before-v15",
    "warning",
    "start/end attributes where Shape-15 is not in force",
    """
    ``start`` and ``end`` were added in Shape-15. Under an older opset they are not part of the
    op: onnx inference and most runtimes ignore them and return every dim, so the graph computes
    something else than its author meant. Import opset 15 or later, or slice the result with
    ``Slice``/``Gather``.
    """,
)

SHAPE_SLICE_CLAMPED = _code(
    "S002",
    "shape-slice-clamped",
    "info",
    "Shape start/end clamped to the input rank",
    """
    Shape-15 clamps ``start``/``end`` to ``[0, rank]`` (after adding the rank to negative
    values), so ``end=10`` on a rank-3 input means 3. Legal, but it often hides an assumption
    about the rank that no longer holds; write the bounds that match the rank.
    """,
)

SHAPE_EMPTY_SLICE = _code(
    "S003",
    "shape-empty-slice",
    "warning",
    "Shape start >= end: an empty shape",
    """
    After normalising negative values and clamping, ``start >= end``: the Shape node returns an
    empty 1-D tensor. Downstream shape arithmetic (a Concat into a Reshape target, a Gather)
    then silently computes with no dims. Check the bounds against the input rank.
    """,
)
