"""The catalog of codes: every code shapeinfer reports, one entry each, in ruff's shape (a code,
its kebab-case name, default severity, summary, documentation, the optimize pass that fixes
it, the ``--target`` it belongs to, who reports it and the test fixture that makes it fire).

Who reports a code (``Code.by``):

- :data:`ENGINE`: the inference engine and its ops (``E...``, ``G...``, ``R...``, ``S...``),
  the io layer, the symbolic algebra and the pass manager, which name a code by its constant
  here (``codes.SLICE_INVALID``); ``shapeinfer MODEL``, the Python API and lint report it;
- :data:`CHECK`: a lint check over the graph and the inferred facts (every ``M...`` and
  ``P...`` code, the lint-only ``G``/``R``/``S`` codes, and a few engine codes a check also
  reports for the cases inference does not see), attached to its entry with
  :func:`shapeinfer.lint.registry.check`;
- :data:`READER`: lint's file reader (E900, a file that is not a readable model).

One code, one meaning: a new kind of diagnostic gets a new entry here. ``docs/rules.md`` is
generated from this table (``python tools/gen_rule_docs.py``).

Data only: no onnx, no other shapeinfer import.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

#: who reports a code: the inference engine (and the layers it runs on)
ENGINE = "engine"
#: who reports a code: a lint check (:mod:`shapeinfer.lint.rules`)
CHECK = "check"
#: who reports a code: lint's file reader
READER = "reader"

#: the ``--target`` values: the runtime a model is linted for
TARGETS = ("onnx", "onnxruntime", "openvino", "onednn")

#: family letter -> its title, in the order the rule catalog lists them
FAMILIES = {
    "R": "Reshape",
    "S": "Shape",
    "G": "Graph",
    "P": "Targets",
    "E": "Model and inference",
    "M": "Model structure",
}


@dataclass(frozen=True, slots=True)
class Code:
    """One code: its kebab-case ``name``, default ``severity``, one-line ``summary``, the ``doc``
    lint prints for ``--explain`` and ``docs/rules.md`` shows, the optimize pass that fixes it
    (``fix``, None: not fixable), the ``--target`` it runs under (``target``, None: every
    target), who reports it (``by``: :data:`ENGINE`, :data:`CHECK`, :data:`READER`) and the id
    of the case in ``testkit/lint_models.py`` (``CASES``) that makes it fire
    (``fixture``, None: no such case).

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
    target: str | None = None
    by: tuple[str, ...] = (ENGINE,)
    fixture: str | None = None

    @property
    def fixable(self) -> bool:
        return self.fix is not None

    @property
    def family(self) -> str:
        """The family's title (``Reshape`` for ``R...``), ``Other`` for an unknown letter."""
        return FAMILIES.get(self.code[0], "Other")


#: code -> :class:`Code`, in declaration order: the engine's codes, then the lint checks'.
CATALOG: dict[str, Code] = {}


def _code(
    code: str,
    name: str,
    severity: str,
    summary: str,
    doc: str,
    fix: str | None = None,
    *,
    target: str | None = None,
    by: tuple[str, ...] = (ENGINE,),
    fixture: str | None = None,
) -> str:
    """Add an entry (``doc`` dedented and stripped); returns ``code``, the constant's value."""
    if code in CATALOG:
        raise ValueError(f"code {code} declared twice")
    CATALOG[code] = Code(code, name, severity, summary, inspect.cleandoc(doc).strip(), fix, target, by, fixture)
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
    fixture="E002-hit-onnx-inference-fails",
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
    by=(ENGINE, CHECK),
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
    fixture="E004-hit-output-defined-twice",
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
    fixture="E005-hit-no-default-opset",
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
    fixture="E006-hit-input-dim-minus-one",
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
    fixture="E009-hit-input-dim-question-mark",
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
    by=(ENGINE, CHECK),
    fixture="E007-hit-axis-as-float",
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
    fixture="E008-hit-cast-nan-to-int64",
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
    fixture="E010-hit-flatten-axis-past-rank",
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
    fixture="E011-hit-conv-negative-pads",
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
    fixture="E012-hit-shape-of-length-2000",
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
    fixture="E013-hit-concat-past-int64",
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
    fixture="E014-hit-raw-data-too-short",
)

SQUEEZE_UNSQUEEZE_INVALID = _code(
    "E015",
    "squeeze-unsqueeze-invalid",
    "error",
    "a Squeeze of a dim that is not 1, or an Unsqueeze with repeated axes",
    f"""
    Squeeze names an axis whose size is known and not 1, or Unsqueeze's axes repeat. {_RUNS}
    """,
    fixture="E015-hit-squeeze-dim-3",
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
    fixture="E016-hit-transpose-perm-repeats",
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
    fixture="E017-hit-negative-step-end-int64-max",
)

WRONG_INPUT_OUTPUT_COUNT = _code(
    "E018",
    "wrong-input-output-count",
    "error",
    "a node with more or fewer inputs or outputs than its op's schema allows",
    f"""
    The node lists a number of inputs or outputs outside the range its op's schema gives at the
    model's opset (a Relu with two inputs, a Dropout-1 with three outputs). onnx's checker
    refuses the model. {_RUNS}
    """,
    fixture="E018-hit-relu-of-two-inputs",
)

GATHER_INDEX_OUT_OF_RANGE = _code(
    "E019",
    "gather-index-out-of-range",
    "error",
    "a Gather whose known index is outside the gathered axis",
    f"""
    A Gather's data and indices are both known (constants, shape values) and an index is not
    in ``[-n, n-1]`` for the gathered axis of length ``n``. onnxruntime fails on the node ("indices
    element out of data bounds"). {_RUNS}
    """,
    fixture="E019-hit-gather-index-5-of-3",
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
    fixture="E020-hit-constant-without-value",
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
    fixture="E021-hit-shape-minus-one",
)

RANGE_DELTA_ZERO = _code(
    "E022",
    "range-delta-zero",
    "error",
    "a Range whose delta is 0",
    f"""
    Range's ``delta`` is known to be 0: the number of elements is undefined. {_RUNS}
    """,
    fixture="E022-hit-delta-zero",
)

TILE_REPEATS_RANK = _code(
    "E023",
    "tile-repeats-rank",
    "error",
    "Tile repeats whose length is not the input's rank",
    f"""
    Tile's ``repeats`` must have one entry per input axis; this one has another length. {_RUNS}
    """,
    fixture="E023-hit-repeats-of-length-3",
)

SLICE_INVALID = _code(
    "E024",
    "slice-invalid",
    "error",
    "a Slice whose starts, ends, axes or steps are invalid",
    f"""
    A Slice's ``starts``/``ends``/``axes``/``steps`` have different lengths, an axis is repeated,
    a step is 0, or a Slice-1 has no ``starts``/``ends``. onnx's inference and onnxruntime refuse
    the node. {_RUNS}
    """,
    fixture="E024-hit-slice-step-0",
)

CONCAT_INVALID = _code(
    "E025",
    "concat-invalid",
    "error",
    "a Concat whose inputs differ in rank or that has no axis",
    f"""
    A Concat (or QLinearConcat) has inputs of different ranks, no ``axis`` attribute, or nothing to
    concatenate. onnx's inference and onnxruntime refuse the node. {_RUNS}
    """,
    fixture="E025-hit-concat-rank-2-and-1",
)

SPLIT_INVALID = _code(
    "E026",
    "split-invalid",
    "error",
    "a Split whose sizes do not fit the dim or the node's outputs",
    f"""
    A Split's ``split`` sizes do not add up to the dim, a dim does not split into the equal parts
    the node asks for (no ``split``: one part per output), or ``num_outputs`` or ``split`` does
    not match the node's outputs. onnxruntime fails on the node. {_RUNS}
    """,
    fixture="E026-hit-split-5-in-2",
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
    by=(ENGINE, CHECK),
    fixture="E030-hit-matmul-of-a-scalar",
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
    fixture="E031-hit-gemm-3d",
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
    fixture="E040-hit-conv-rank-2",
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
    fixture="E041-hit-maxpool-rank-2",
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
    fixture="E042-hit-split-sums-to-3-of-4",
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
    fixture="E043-hit-optional-without-type",
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
    fixture="E044-hit-get-element-of-empty",
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
    fixture="E050-hit-bias-split-gelu-odd",
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
    fixture="E060-hit-pads-of-length-3",
)

TOPK_K_INVALID = _code(
    "E061",
    "topk-k-invalid",
    "error",
    "a TopK whose k is negative or larger than the dim",
    f"""
    TopK's ``k`` is known and below 0 or above the size of the axis it selects along. {_RUNS}
    """,
    fixture="E061-hit-k-past-the-dim",
)

ONEHOT_DEPTH_INVALID = _code(
    "E062",
    "onehot-depth-invalid",
    "error",
    "a OneHot whose depth is not positive",
    f"""
    OneHot's ``depth`` is known and below 1. {_RUNS}
    """,
    fixture="E062-hit-depth-zero",
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
    fixture="E063-hit-three-terms-two-inputs",
)

DET_RANK_INVALID = _code(
    "E064",
    "det-rank-invalid",
    "error",
    "a Det of an input of rank < 2",
    f"""
    Det takes a batch of square matrices: its input needs rank 2 or more. {_RUNS}
    """,
    fixture="E064-hit-det-of-1d",
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
    fixture="E070-hit-blocksize-3-of-8-channels",
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
    fixture="E071-hit-scales-of-length-3",
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
    fixture="E080-hit-dft-of-1d",
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
    fixture="E090-hit-direction-sideways",
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
    fixture="G002-hit-2x3-plus-4x3",
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
    fixture="G003-hit-batch-vs-seq",
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
    fixture="G004-hit-cycle",
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
    fixture="G005-hit-undefined-input",
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
    fixture="G006-hit-value-info-dim",
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
    fixture="G007-hit-custom-domain",
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
    fixture="G009-hit-symbolic-dim-to-float",
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
    fixture="G010-hit-recursive-function",
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
    fixture="G011-hit-two-outputs-of-one",
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
    fixture="G012-hit-reshape-minus-one-of-n",
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
    the shapes that follow from it hold only if it is right. ``optimize``'s passes never take
    it: what they fold or rewrite is computed by the model, not claimed by its file, so the
    written model runs wherever its input runs, a wrong declaration or not. A declared dim
    never replaces one that is one of several alternatives (an ``If`` whose branches give
    different sizes: a declaration matching one branch is wrong whenever the other runs).
    Inside a subgraph (an
    ``If`` branch, a ``Loop`` or ``Scan`` body, a function body) a declaration is a claim about
    that one run of it: a dim name it uses, other than the graph inputs' symbols, is private to
    it, so the same name in two branches, two bodies or a body and the main graph is not taken
    for the same size. Check the declaration, or give the sizes with ``--input-shape`` /
    ``--bind``.
    """,
    fixture="G013-hit-nonzero-count-declared",
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
    fixture="G016-hit-squared-eight-times",
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
    fixture="G015-hit-concat-one-row-apart",
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
    fixture="R001-hit-two-minus-ones",
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
    fixture="R002-hit-allowzero-0-and-minus-1",
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
    fixture="R003-hit-copy-past-rank",
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
    fixture="R004-hit-static",
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
    fixture="R005-hit-minus-two",
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
    """,
    by=(ENGINE, CHECK),
    fixture="R007-hit-attribute-under-opset-13",
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
    fixture="R011-hit-int32-target",
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
    fixture="S001-hit-start-in-shape-13",
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
    fixture="S002-hit-end-past-rank",
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
    fixture="S003-hit-start-after-end",
)


# ---------------------------------------------------------------- lint checks
# Codes only lint reports, by the lint module that reports them.

# -- attributes against the op's schema (rules/attributes.py)

UNKNOWN_ATTRIBUTE = _code(
    "G017",
    "unknown-attribute",
    "error",
    "an attribute the op's schema does not define at the opset in force",
    """
    The node has an attribute its op does not define at the opset the model imports: typically
    one that became an input (``ReduceMean``'s ``axes`` from opset 18, ``Split``'s ``split``
    from 13, ``Pad``'s ``pads`` from 11), left behind by a tool that changed the opset without
    converting the node. ``onnx.checker`` and onnxruntime refuse the model ("Unrecognized
    attribute: axes for operator ReduceMean"); OpenVINO ignores the attribute (a warning under
    ``--target openvino``). Convert the node to the opset (``onnx.version_converter``), or
    remove the attribute. Attributes whose name starts with ``__`` are internal and not
    checked. For a ``com.microsoft`` op the schema is onnxruntime's documented one (the
    version its contrib table was made from): onnxruntime refuses an attribute its own schema
    lacks, but a later version may have added it to the op without a new opset version
    (``MatMulNBits``' ``weight_prepacked``), so the finding is a warning under every target;
    onnx's checker does not look at ``com.microsoft`` nodes.
    """,
    by=(CHECK,),
    fixture="G017-hit-reducemean-18-axes-attribute",
)

# -- graph (rules/graph.py)

UNRESOLVED_DIMS = _code(
    "G001",
    "unresolved-dims",
    "warning",
    "dims left unresolved (names the op where resolution was lost)",
    """
    Inference could not express some dims in terms of the graph inputs' dims and invented a
    symbol (``unk_<n>``) or lost the rank. The finding is reported once, at the first node whose
    output has an unknown its inputs did not have, which is where resolution was lost
    (data-dependent ops such as NonZero, an op with no schema, a shape computed from values
    inference cannot see); nodes downstream that merely carry the unknown are not reported.
    Unresolved dims block static memory planning and compilation; bind the input symbols
    (``--bind``) or make the values the op depends on constant. ``strict`` makes this an error.
    """,
    by=(CHECK,),
    fixture="G001-hit-nonzero",
)

TYPE_CONSTRAINT_VIOLATION = _code(
    "G008",
    "type-constraint-violation",
    "error",
    "an input type the op's schema does not allow",
    """
    An input's element type is not among those the op's type constraint allows in the opset in
    force (read from ``onnx.defs``: ``Sqrt`` of int64, ``MatMul`` of bool), or inputs bound to
    the same type variable have different types (``Add`` of float and int64). The node is
    invalid and runtimes refuse the model. Insert a ``Cast`` or fix the producer. Reshape's
    inputs are covered by R008 and R011.
    """,
    by=(CHECK,),
    fixture="G008-hit-sqrt-of-int64",
)

# -- the file reader (runner.py)

UNREADABLE_MODEL = _code(
    "E900",
    "unreadable-model",
    "error",
    "a file that cannot be read as an ONNX model",
    """
    The file is missing, empty, truncated, not a protobuf, or has no graph. It is reported as a
    finding so that the other files of a multi-file lint are still checked; the lint exits with
    code 2 (could not run) when any file is unreadable.
    """,
    by=(READER,),
)

# -- model (rules/model.py)

OP_UNKNOWN_TO_ONNX = _code(
    "G014",
    "op-unknown-to-onnx",
    "error",
    "an op of an onnx domain with no schema at the opset in force",
    """
    The node's domain is one onnx defines (the default domain, ``ai.onnx.ml``,
    ``ai.onnx.preview.training``) but onnx has no schema for the op at the opset the model
    imports, and no model-local function defines it: ``onnx.checker.check_model`` refuses the
    model ("No Op registered for ... with domain_version of ..."). Typical after onnxruntime's
    transformer optimizer, which writes its own ops (``SimplifiedLayerNormalization``) into the
    default domain: such a model runs in onnxruntime (lint it with ``--target onnxruntime``) but
    is not a valid ONNX model. Other domains (``com.microsoft``, vendor domains) are not checked
    by onnx and not reported here (see G007 and the runtime targets).
    """,
    target="onnx",
    by=(CHECK,),
    fixture="G014-hit-ort-op-in-default-domain",
)

# -- Reshape (rules/reshape.py)

RESHAPE_LEGACY_ATTRIBUTE = _code(
    "R006",
    "reshape-legacy-attribute",
    "warning",
    "legacy Reshape-1 attribute form",
    """
    Before opset 5 Reshape took its target as the ``shape`` attribute. Opset 5 moved it to a
    second input (so it can be computed), and tools and runtimes increasingly drop the old
    form. Fixable: the ``reshape-v1-to-v5`` pass moves the attribute into an int64 initializer
    and raises the model's default-domain opset to 5.
    """,
    fix="reshape-v1-to-v5",
    by=(CHECK,),
    fixture="R006-hit-reshape-1",
)

RESHAPE_UNSUPPORTED_DATA_TYPE = _code(
    "R008",
    "reshape-unsupported-data-type",
    "error",
    "data type not allowed by the Reshape version in force",
    """
    Each Reshape version accepts a fixed set of data types, read here from the type constraint
    ``T`` of the ``onnx.defs`` schema in force: Reshape-1 takes only float16/float/double (an
    int32 tensor is invalid), bfloat16 arrives in Reshape-13, the float8 types in Reshape-19,
    4-bit types in Reshape-21. Runtimes reject the node. Raise the opset or cast the data.
    """,
    by=(CHECK,),
    fixture="R008-hit-int32-in-reshape-1",
)

RESHAPE_NOOP = _code(
    "R009",
    "reshape-noop",
    "warning",
    "Reshape that leaves the shape unchanged",
    """
    The Reshape's output has exactly the input's dims (for every value of the symbols), so the
    node copies its input and does nothing else. It costs a node (and often the shape
    computation feeding it) and hides the real data flow. Fixable: ``remove-noop-reshape``
    reconnects its consumers to its input.
    """,
    fix="remove-noop-reshape",
    by=(CHECK,),
    fixture="R009-hit-same-shape",
)

RESHAPE_RUNTIME_TARGET_COULD_BE_CONSTANT = _code(
    "R010",
    "reshape-runtime-target-could-be-constant",
    "info",
    "runtime-computed target that could be a constant",
    """
    The target is computed at run time (typically ``Shape -> Gather -> Unsqueeze -> Concat``)
    but every output dim is either a constant or (with ``allowzero`` 0) the input dim at the
    same index, with at most one left to infer: a constant target with ``0`` (copy) and one
    ``-1`` says the same. The shape subgraph then becomes dead, and runtimes that compile static
    reshapes (oneDNN StaticReshape, TensorRT) can do so. Fixable (main graph):
    ``canonicalize-reshape``, whose spelling this check uses.
    """,
    fix="canonicalize-reshape",
    by=(CHECK,),
    fixture="R010-hit-runtime-canonical",
)

# -- Shape (rules/shape.py)

SHAPE_OF_STATIC_TENSOR = _code(
    "S004",
    "shape-of-static-tensor",
    "info",
    "Shape of a tensor whose shape is fully static",
    """
    Every dim of the Shape node's input is a known integer, so its output is a constant: the
    node and the arithmetic on it can be folded away, which shrinks the graph and lets
    consumers (a Reshape target, an Expand) see constants. Fixable: ``fold-shapes`` (main
    graph, when the Shape's output is not a graph output, which keeps its producer).
    """,
    fix="fold-shapes",
    by=(CHECK,),
    fixture="S004-hit-static-input",
)

# -- model structure (rules/structure.py)

IR_VERSION_MISSING = _code(
    "M001",
    "ir-version-missing",
    "error",
    "the model's ir_version is unset or below 1",
    """
    ``ModelProto.ir_version`` is required: it says which version of the ONNX format the file
    follows. ``onnx.checker`` refuses a model without it ("does not have an ir_version set
    properly"); onnxruntime and OpenVINO load it (a warning under those targets). Set it to the
    IR version the model was written for (``onnx.helper.make_model`` sets the current one).
    """,
    by=(CHECK,),
    fixture="M001-hit-ir-version-0",
)

IR_VERSION_UNSUPPORTED = _code(
    "M002",
    "ir-version-unsupported",
    "error",
    "an ir_version newer than onnx and onnxruntime read",
    """
    The model's ``ir_version`` is above the highest IR version the installed ``onnx`` knows
    (``onnx.IR_VERSION``): the checker refuses it ("higher than the checker's"), and so does
    onnxruntime (1.32 reads up to IR 14, as onnx 1.23). OpenVINO loads it (a warning under
    ``--target openvino``). Usually a model saved by a newer exporter: lower ``ir_version`` if
    the model uses nothing newer, or upgrade the runtime.
    """,
    by=(CHECK,),
    fixture="M002-hit-ir-version-99",
)

OPSET_IMPORT_MISSING = _code(
    "M003",
    "opset-import-missing",
    "error",
    "a node's domain has no opset import",
    """
    Every domain a node uses (the default domain included) needs an entry in the model's
    ``opset_import``, which says which version of each op is meant. ``onnx.checker`` refuses the
    model ("No opset import for domain"); onnxruntime and OpenVINO guess a version (a warning
    under those targets). Reported once per domain, at its first node. Add the import
    (``onnx.helper.make_opsetid(domain, version)``).
    """,
    by=(CHECK,),
    fixture="M003-hit-no-default-opset",
)

OPSET_IMPORT_BELOW_IR3 = _code(
    "M004",
    "opset-import-below-ir3",
    "error",
    "opset_import in a model of IR version 1 or 2",
    """
    Opset imports arrived with IR version 3; a model that declares ``ir_version`` 1 or 2 and
    has ``opset_import`` entries contradicts itself, and ``onnx.checker`` refuses it.
    onnxruntime and OpenVINO load it (a warning under those targets). Set ``ir_version`` to the
    version the model really follows (3 or later).
    """,
    by=(CHECK,),
    fixture="M004-hit-opsets-below-ir3",
)

DUPLICATE_METADATA_KEY = _code(
    "M005",
    "duplicate-metadata-key",
    "error",
    "a key that appears twice in metadata_props",
    """
    ``metadata_props`` is a map: each key may appear once. ``onnx.checker`` refuses a model
    with a repeated key; onnxruntime and OpenVINO keep one of the values (a warning under those
    targets, since which one is not specified). Merge or rename the entries.
    """,
    by=(CHECK,),
    fixture="M005-hit-duplicate-metadata",
)

UNUSED_OPSET_IMPORT = _code(
    "M006",
    "unused-opset-import",
    "info",
    "an imported domain that no node or function uses",
    """
    The model imports an opset for a domain no node (in any graph or function) uses and no
    model-local function belongs to. Harmless for every runtime, but it claims a dependency
    the model does not have (a tool that checks domains against a runtime's list may refuse
    it for nothing). Remove the import (onnx_ir's ``RemoveUnusedOpsetsPass``). Not reported:
    the eight imports onnxruntime writes into every model it saves (``ai.onnx.ml``,
    ``com.microsoft``, ``com.microsoft.nchwc``, ``org.pytorch.aten``...), in a model that has
    them all; they say which runtime wrote the file, not what it needs.
    """,
    by=(CHECK,),
    fixture="M006-hit-unused-opset",
)

DUPLICATE_OPSET_IMPORT = _code(
    "M007",
    "duplicate-opset-import",
    "warning",
    "a domain imported more than once",
    """
    ``opset_import`` lists the same domain twice. The runtimes load the model but each keeps one
    of the entries, not necessarily the same one (the version of every op of the domain then
    depends on the reader). Keep one entry per domain.
    """,
    by=(CHECK,),
    fixture="M007-hit-duplicate-opset",
)

FUNCTION_OPSET_MISMATCH = _code(
    "M008",
    "function-opset-mismatch",
    "error",
    "a function whose opset gives its ops another version",
    """
    A model-local function may import another version of a domain than the model does, but
    only if every op the function uses has the same definition at both versions (the ONNX IR
    spec: the schemas for the two versions must be the same). Here an op of the function has
    a different version in force under the model's import: the function's body means something
    else depending on which import a tool applies when it inlines it. ``onnx.checker`` refuses
    the model ("not compatible with the version imported by model"); onnxruntime loads it (a
    warning under ``--target onnxruntime``). A function whose ops are the same at both versions
    is valid and not reported. Import, in the function, the model's version (after checking its
    ops at that version).
    """,
    by=(CHECK,),
    fixture="M008-hit-function-opset-changes-op",
)

UNUSED_FUNCTION = _code(
    "M009",
    "unused-function",
    "info",
    "a model-local function that no node calls",
    """
    A function in ``model.functions`` that no node of any graph or function calls. Harmless,
    but it is dead weight in the file. Remove it (onnx_ir's ``RemoveUnusedFunctionsPass``).
    """,
    by=(CHECK,),
    fixture="M009-hit-unused-function",
)

EMPTY_GRAPH_NAME = _code(
    "M010",
    "empty-graph-name",
    "error",
    "a graph (main or subgraph) without a name",
    """
    ``GraphProto.name`` must not be empty. ``onnx.checker`` refuses the model; onnxruntime
    refuses it too when the nameless graph is a subgraph (an If/Loop/Scan body) and loads it
    when it is the main graph; OpenVINO loads both. Name the graph (``model.graph.name =
    "main_graph"``).
    """,
    by=(CHECK,),
    fixture="M010-hit-empty-graph-name",
)

DUPLICATE_GRAPH_INPUT = _code(
    "M011",
    "duplicate-graph-input",
    "error",
    "a graph input listed twice",
    """
    The same name appears twice among a graph's inputs: the value has two definitions.
    ``onnx.checker`` ("single static assignment"), onnxruntime ("Duplicate definition-site")
    and OpenVINO ("Tensor already exists") refuse the model. Remove the duplicate.
    """,
    by=(CHECK,),
    fixture="M011-hit-duplicate-graph-input",
)

DUPLICATE_GRAPH_OUTPUT = _code(
    "M012",
    "duplicate-graph-output",
    "warning",
    "a graph output listed twice",
    """
    The same name appears twice among a graph's outputs. The runtimes load the model and return
    the value twice, but tools that address outputs by name (or, like onnx_ir, by value) see one
    output where the graph declares two. Remove the duplicate, or add an ``Identity`` for a
    second, differently named output.
    """,
    by=(CHECK,),
    fixture="M012-hit-duplicate-graph-output",
)

VALUE_DEFINED_TWICE = _code(
    "M013",
    "value-defined-twice",
    "error",
    "a node output whose name is already defined in its graph",
    """
    ONNX graphs are in single static assignment form: each name is defined once, by a graph
    input, an initializer or one node output. Here a node writes a name that a graph input, an
    initializer or another node already defines. ``onnx.checker`` and onnxruntime refuse the
    model; OpenVINO loads it and one of the definitions silently wins (a warning under
    ``--target openvino``). Rename the output and its readers.
    """,
    by=(CHECK,),
    fixture="M013-hit-output-assigned-twice",
)

SUBGRAPH_NAME_SHADOWING = _code(
    "M014",
    "subgraph-name-shadowing",
    "error",
    "a subgraph value with the name of an enclosing graph's value",
    """
    A value of an If/Loop/Scan body has the name of a value the enclosing graphs define (before
    the node that holds the body): the body's value would hide the outer one. ONNX forbids it.
    A body node output or initializer that shadows is refused by ``onnx.checker`` and
    onnxruntime (OpenVINO loads it: a warning under ``--target openvino``); a body input that
    shadows is accepted by both and refused by OpenVINO ("Conversion is failed for Loop",
    an error only under ``--target openvino``). Rename the body's value.
    """,
    by=(CHECK,),
    fixture="M014-hit-if-shadows-outer",
)

EMPTY_INITIALIZER_NAME = _code(
    "M015",
    "empty-initializer-name",
    "error",
    "an initializer without a name",
    """
    Every initializer needs a name (that is how nodes read it). ``onnx.checker`` refuses the
    model; onnxruntime and OpenVINO load it and the tensor is unreachable (a warning under those
    targets). Name it, or remove it if nothing needs it.
    """,
    by=(CHECK,),
    fixture="M015-hit-empty-initializer-name",
)

DUPLICATE_INITIALIZER = _code(
    "M016",
    "duplicate-initializer",
    "error",
    "two initializers with the same name",
    """
    Two initializers of a graph have the same name, so a reader of that name gets one of two
    tensors. ``onnx.checker`` refuses the model ("initializer name is not unique"); onnxruntime
    and OpenVINO keep one of them (a warning under those targets). Remove or rename one.
    """,
    by=(CHECK,),
    fixture="M016-hit-duplicate-initializer",
)

GRAPH_INPUT_MISSING_TYPE = _code(
    "M017",
    "graph-input-missing-type",
    "error",
    "a main-graph input without a type",
    """
    An input of the main graph has no type: the caller cannot know what to feed, and
    ``onnx.checker``, onnxruntime ("Model input ... has no type") and OpenVINO refuse the model.
    Declare its element type and shape.
    """,
    by=(CHECK,),
    fixture="M017-hit-input-without-type",
)

GRAPH_INPUT_MISSING_SHAPE = _code(
    "M018",
    "graph-input-missing-shape",
    "error",
    "a main-graph tensor input without a shape",
    """
    A tensor input of the main graph has an element type but no shape (not even a rank).
    ``onnx.checker`` (``full_check``) refuses the model ("Field 'shape' of 'type' is required"),
    and OpenVINO's CPU plugin refuses an input of dynamic rank; onnxruntime loads it (info under
    ``--target onnxruntime``). Inference cannot say anything about the shapes that follow. Declare
    the shape, with named dims (``batch``, ``seq``) where they vary.
    """,
    by=(CHECK,),
    fixture="M018-hit-input-without-shape",
)

GRAPH_OUTPUT_MISSING_TYPE = _code(
    "M019",
    "graph-output-missing-type",
    "error",
    "a main-graph output without a type",
    """
    An output of the main graph has no type. ``onnx.checker`` refuses the model; onnxruntime
    and OpenVINO infer it and load the model (info under those targets). ``shapeinfer MODEL -o
    OUT`` writes the inferred type.
    """,
    by=(CHECK,),
    fixture="M019-hit-output-without-type",
)

GRAPH_OUTPUT_MISSING_SHAPE = _code(
    "M020",
    "graph-output-missing-shape",
    "error",
    "a main-graph tensor output without a shape",
    """
    A tensor output of the main graph has an element type but no shape. ``onnx.checker``
    (``full_check``) refuses the model; onnxruntime and OpenVINO load it (info under those
    targets). ``shapeinfer MODEL -o OUT`` writes the inferred shape.
    """,
    by=(CHECK,),
    fixture="M020-hit-output-without-shape",
)

UNDEFINED_ELEMENT_TYPE = _code(
    "M021",
    "undefined-element-type",
    "error",
    "a declared tensor type whose element type is UNDEFINED",
    """
    A graph input, output or ``value_info`` entry declares a tensor of element type
    ``UNDEFINED`` (0). onnxruntime refuses the model wherever the declaration is ("Failed to
    load model"); ``onnx.checker`` and OpenVINO refuse it for a graph input (nothing can be
    fed) and load it for other declarations (a warning under those targets). Declare the real
    element type, or drop the ``value_info`` entry.
    """,
    by=(CHECK,),
    fixture="M021-hit-input-undefined-dtype",
)

REF_ATTRIBUTE_OUTSIDE_FUNCTION = _code(
    "M022",
    "ref-attribute-outside-function",
    "warning",
    "an attribute reference in a graph, not a function",
    """
    An attribute with ``ref_attr_name`` refers to an attribute of an enclosing function call; it
    means something only inside a model-local function's body. In a graph there is nothing to
    refer to: the runtimes load the model and read the attribute's empty value (onnxruntime 1.32
    runs ``LeakyRelu`` with such an ``alpha`` as alpha 0, not its default 0.01). Give the
    attribute its value.
    """,
    by=(CHECK,),
    fixture="M022-hit-ref-attr-in-graph",
)

DEPRECATED_OP = _code(
    "M023",
    "deprecated-op",
    "error",
    "an op deprecated at the opset in force",
    """
    The op is deprecated at the model's opset (``Upsample`` from opset 10: use ``Resize``;
    ``Scatter`` from 11: ``ScatterElements``; ``GroupNormalization``-18: opset 21's;
    ``ai.onnx.ml`` ``TreeEnsembleRegressor``/``Classifier`` from 5: ``TreeEnsemble``).
    ``onnx.checker`` refuses the model ("Op registered for ... is deprecated"), and onnxruntime
    does too for all of them but ``GroupNormalization``-18; OpenVINO converts them (a warning
    under ``--target openvino``). Replace the op by its successor.
    """,
    by=(CHECK,),
    fixture="M023-hit-deprecated-upsample",
)

EXPERIMENTAL_OP = _code(
    "M024",
    "experimental-op",
    "warning",
    "an op that is experimental at the opset in force",
    """
    The op's schema is experimental at the model's opset (``Upsample`` before opset 7, the
    ``ai.onnx.preview`` ops): its definition may change or go away, and runtimes may not
    implement it (onnxruntime 1.32 has no kernel for ``Upsample``-1: P201 under
    ``--target onnxruntime``). Use a stable op.
    """,
    by=(CHECK,),
    fixture="M024-hit-experimental-upsample",
)

UNUSED_NODE = _code(
    "M025",
    "unused-node",
    "info",
    "a node none of whose outputs is read",
    """
    No node (in this graph or a body nested in it) reads any of the node's outputs, and none is
    a graph output: the node computes something nobody uses. Runtimes usually prune it, but it
    is dead weight in the file and often a sign of a graph edit that left debris. ``shapeinfer
    optimize`` removes dead nodes.
    """,
    by=(CHECK,),
    fixture="M025-hit-unused-node",
)

UNUSED_INITIALIZER = _code(
    "M026",
    "unused-initializer",
    "info",
    "an initializer that nothing reads",
    """
    No node of the graph (or of a body nested in it) reads the initializer, and it is not a
    graph output: the tensor is stored for nothing (it still costs file size and load time).
    Remove it (``shapeinfer optimize`` does).
    """,
    by=(CHECK,),
    fixture="M026-hit-unused-initializer",
)

ATTRIBUTE_VALUE_MISMATCH = _code(
    "M027",
    "attribute-value-mismatch",
    "error",
    "an attribute with several values, or one that is not of its type",
    """
    An attribute holds a value in more than one field (``f`` and ``i``), or its ``type`` names a
    field other than the one holding the value. ``onnx.checker`` and onnxruntime refuse the
    model ("type field and data field mismatch"); OpenVINO reads one of the fields (a warning
    under ``--target openvino``). Write the attribute with ``onnx.helper.make_attribute``.
    """,
    by=(CHECK,),
    fixture="M027-hit-attribute-two-fields",
)

EMPTY_VALUE_NAME = _code(
    "M028",
    "empty-value-name",
    "error",
    "a main-graph input or output without a name",
    """
    An input or output of the main graph has an empty name: nothing can feed or read it by
    name. ``onnx.checker`` refuses the model ("required to be non-empty"); onnxruntime and
    OpenVINO load it (a warning under those targets). Name it.
    """,
    by=(CHECK,),
    fixture="M028-hit-empty-input-name",
)

FUNCTION_INVALID = _code(
    "M029",
    "function-invalid",
    "error",
    "a function without a name or a domain of its own, or with an invalid body",
    """
    A model-local function has no name, or is in the default domain (``""`` or ``ai.onnx``: a
    call to it is looked up as an ONNX op, "No Op registered"), or its body defines a name twice
    (two inputs, an input and a node output, two node outputs), or a node of the body reads a
    name that is neither a function input nor an output of an earlier node: ``onnx.checker``,
    onnxruntime and OpenVINO refuse the model. A function that lists an output twice is refused
    by ``onnx.checker`` and onnxruntime; one that lists an attribute twice by ``onnx.checker``
    only (a warning under the other targets). Name the function, give it a domain of its own,
    remove or rename the duplicate, or sort the body's nodes.
    """,
    by=(CHECK,),
    fixture="M029-hit-function-ssa",
)

INITIALIZER_NOT_INPUT_BEFORE_IR4 = _code(
    "M030",
    "initializer-not-input-before-ir4",
    "error",
    "an initializer that is no graph input, in a model of IR version 3 or older",
    """
    Before IR version 4, every initializer of the main graph had to be listed among the graph's
    inputs too (an initializer was the default value of an input). A model that declares
    ``ir_version`` 3 or older with an initializer missing from ``graph.input`` is refused by
    ``onnx.checker`` ("... in initializer but not in graph input"); onnxruntime and OpenVINO load
    it. List the initializer as a graph input, or raise ``ir_version`` to 4 or more if nothing
    else of the model predates it.
    """,
    by=(CHECK,),
    fixture="M030-hit-initializer-not-input-ir3",
)

OPSET_NEWER_THAN_RUNTIME = _code(
    "M031",
    "opset-newer-than-runtime",
    "warning",
    "an opset import newer than onnxruntime loads",
    """
    The model imports a domain at an opset version newer than the onnxruntime the table was
    made with supports (``newest_opsets`` in ``shapeinfer/base/runtime_ops.json``; the finding
    names them). onnxruntime refuses such a model whatever its nodes ("Current official support
    for domain ai.onnx is till opset N"): an error under
    ``--target onnxruntime``. ``onnx.checker`` and OpenVINO load it (a warning). Usually a model
    saved by a newer exporter: export at an opset the runtime supports, or lower the import when
    the model uses no op newer than that version (``optimize --target-opset``).
    """,
    by=(CHECK,),
    fixture="M031-hit-opset-30",
)

# -- targets (rules/targets.py)

OPENVINO_RESHAPE_NON_NUMERIC = _code(
    "P001",
    "openvino-reshape-non-numeric",
    "info",
    "Reshape data of a non-numeric type",
    """
    OpenVINO's opset1 Reshape specification lists data of "any numeric type" ``T``; a Reshape of
    bool or string data is outside the letter of that spec. OpenVINO's ONNX frontend and CPU
    plugin read, compile and run such Reshapes all the same (checked with OpenVINO 2026.4 on the
    attention masks of GPT-2, BERT and Llama exports), so this is for review only, for a plugin
    that follows the spec to the letter: a Cast to uint8 before and after the Reshape keeps the
    graph within it.
    """,
    target="openvino",
    by=(CHECK,),
    fixture="P001-hit-bool-data",
)

OPENVINO_SPECIAL_ZERO_MAPPING = _code(
    "P002",
    "openvino-special-zero-mapping",
    "info",
    "how allowzero maps to special_zero",
    """
    OpenVINO's Reshape has ``special_zero`` where ONNX has ``allowzero``, with the opposite
    sense: ONNX ``allowzero=0`` (the default, a 0 copies the input dim) becomes
    ``special_zero=true``; ``allowzero=1`` (a 0 is a literal zero dim) becomes
    ``special_zero=false``. Reported for every Reshape whose target holds a 0, or whose target
    is only known at run time, so that the mapping can be checked where it matters.
    """,
    target="openvino",
    by=(CHECK,),
    fixture="P002-hit-zero-in-target",
)

ONEDNN_RESHAPE_DATA_TYPE = _code(
    "P101",
    "onednn-reshape-data-type",
    "warning",
    "Reshape data type outside f32/f16/bf16",
    """
    oneDNN Graph's StaticReshape/DynamicReshape take data ``T1`` of f32, f16 or bf16 only. A
    Reshape of integer or bool data (shape arithmetic, masks, token ids) is not mapped to them:
    it is left out of oneDNN's partitions and runs on the framework's own implementation (a
    fallback, and a partition boundary), which is why this is a warning, not an error. Keep
    such Reshapes out of the part of the graph given to oneDNN, or fold them (``shapeinfer
    optimize``) when they are shape arithmetic.
    """,
    target="onednn",
    by=(CHECK,),
    fixture="P101-hit-int64-data",
)

ONEDNN_SHAPE_OUT_OF_INT32 = _code(
    "P102",
    "onednn-shape-out-of-int32",
    "error",
    "target values outside int32",
    """
    oneDNN Graph DynamicReshape's shape input ``T2`` is s32, while an ONNX target is int64: a
    runtime target (which becomes a DynamicReshape, see P103) holding a value outside the int32
    range cannot be represented. It is usually a dim so large the model is wrong anyway, or a
    sentinel from shape arithmetic. A constant target becomes StaticReshape, whose ``shape``
    attribute is s64 in oneDNN's op definition: not reported.
    """,
    target="onednn",
    by=(CHECK,),
    fixture="P102-hit-3e9-runtime-target",
)

ONEDNN_DYNAMIC_RESHAPE = _code(
    "P103",
    "onednn-dynamic-reshape",
    "warning",
    "Reshape with a runtime target (becomes DynamicReshape)",
    """
    A Reshape whose target is computed at run time maps to oneDNN Graph's DynamicReshape; one
    with a constant target maps to StaticReshape, which can be compiled into the partition. When
    the target is equivalent to a constant (see R010) the fix is ``shapeinfer optimize`` (the
    ``canonicalize-reshape`` pass, also applied by ``lint --fix``); otherwise the finding says
    the target is genuinely dynamic.
    """,
    fix="canonicalize-reshape",
    target="onednn",
    by=(CHECK,),
    fixture="P103-hit-runtime-target",
)

OPENVINO_NO_CONVERSION_RULE = _code(
    "P003",
    "openvino-no-conversion-rule",
    "error",
    "an op OpenVINO's ONNX frontend cannot convert",
    """
    OpenVINO reads an ONNX model through its ONNX frontend, which converts every node with a
    conversion rule for the node's domain, op and opset; a node without one makes
    ``read_model`` fail ("No conversion rule found for operations: ..."). The frontend covers
    most of the default domain, one op of ``ai.onnx.ml`` and a part of onnxruntime's
    ``com.microsoft`` ops (Attention, SkipLayerNormalization, MatMulNBits, QuickGelu, ... but
    not QAttention, QEmbedLayerNormalization, the ``com.microsoft.nchwc`` layout ops of
    onnxruntime's offline optimizer, nor traditional-ML ops); ops of other domains are refused
    (``org.openvinotoolkit`` aside, whose ops are OpenVINO's own). The list is the one of the
    OpenVINO version recorded in ``runtime_ops.json`` (see its ``supported_ops.md``). Export the
    model without the runtime-specific fusions (before onnxruntime's optimizer or quantizer), or
    register an OpenVINO extension for the op.
    """,
    target="openvino",
    by=(CHECK,),
    fixture="P003-hit-qattention",
)

OPENVINO_NON_TENSOR_VALUE = _code(
    "P004",
    "openvino-non-tensor-value",
    "error",
    "a graph input, output or value_info that is not a tensor",
    """
    OpenVINO's ONNX frontend reads the main graph's inputs, outputs and ``value_info`` as
    tensors only: a sequence, map or optional there (the ``ZipMap`` probabilities of a
    scikit-learn classifier, a list of tensors returned by the model) makes ``read_model`` fail
    ("Unsupported value_info type"). Return tensors (drop ``ZipMap`` with skl2onnx's
    ``zipmap=False``), or drop the non-tensor ``value_info`` entries.
    """,
    target="openvino",
    by=(CHECK,),
    fixture="P004-hit-sequence-output",
)

OPENVINO_LOOP_PASS_THROUGH_STATE = _code(
    "P005",
    "openvino-loop-pass-through-state",
    "error",
    "a Loop body that returns one of its inputs unchanged",
    """
    A ``Loop`` body whose output list names one of the body's own inputs (a loop-carried value
    passed through unchanged, as tf2onnx writes for a ``tf.while_loop`` variable the loop only
    reads) is valid ONNX, and onnx's checker and onnxruntime run it; OpenVINO 2026's ONNX
    frontend counts such a value twice and ``read_model`` fails ("The provided loop body graph
    canonical inputs size (...) does not match the sum of loop carried dependencies and two
    mandatory inputs"; OpenVINO issues 35874 and 37383; 2025.4 loaded such models). Give the
    body output its own name: ``Identity(x_in) -> x_out``, and list ``x_out``.
    """,
    target="openvino",
    by=(CHECK,),
    fixture="P005-hit-loop-pass-through",
)

OPENVINO_QDQ_MATMUL_SCALE_CRASH = _code(
    "P006",
    "openvino-qdq-matmul-scale-crash",
    "error",
    "a quantized MatMul result times a quantized constant used once (OpenVINO's CPU plugin fails)",
    """
    OpenVINO 2026.4's CPU plugin fails in ``compile_model`` on ``Mul(DQ(Q(MatMul(...))),
    DQ(Q(c)))`` for a constant ``c`` quantized on its own (8-bit, per-tensor): its low-precision
    ``MultiplyPartialTransformation`` throws "Check 'index < m_inputs.size()' failed ... index '0'
    out of range". onnxruntime's ``quantize_static`` writes this for the attention scale of the
    TorchScript exports of BERT, GPT-2 and Llama (``scores * 0.25``). The plugin compiles the same
    Mul when the quantized constant (or either quantized value) has a second reader, as in the
    torch.export (dynamo) exports, where one ``Constant`` feeds the scale of every layer: OpenVINO
    merges identical Q/DQ pairs of one tensor first. Checked against OpenVINO 2026.4 on this
    repro, which fails, and on the same graph with a second reader, which compiles::

        c = Constant(0.25)
        y = Mul(DQ(Q(MatMul(a, b), s1, z1), s1, z1), DQ(Q(c, s2, z2), s2, z2))  # z1, z2: uint8 or int8

    It compiles with 16-bit zero points, without the Q/DQ after the MatMul, or with Add in place of
    the MatMul. Quantize without the constant (``nodes_to_exclude`` for that Mul in onnxruntime's
    quantizer), or keep the scale as a float constant: ``Mul(DQ(Q(MatMul)), c)`` compiles.
    """,
    target="openvino",
    by=(CHECK,),
    fixture="P006-hit-qdq-scale-alone",
)

ONNXRUNTIME_NO_KERNEL = _code(
    "P201",
    "onnxruntime-no-kernel",
    "error",
    "an op onnxruntime's CPU provider has no kernel for",
    """
    onnxruntime assigns every node a kernel when it creates the session; with the CPU provider
    (the one every build has) a node whose domain, op and opset have no CPU kernel, and that is
    not a function onnxruntime expands, makes ``InferenceSession`` fail ("Could not find an
    implementation for ...", "... is not a registered function/op"). Examples: ``GemmFastGelu``
    and ``BiasAdd`` (GPU kernels only), ops of a domain no library registers, default-domain ops
    of an opset below 7. The table is the one of the onnxruntime version recorded in
    ``runtime_ops.json``. Unlike onnx's checker, onnxruntime runs its own default-domain ops
    (``SimplifiedLayerNormalization``) and the ``com.microsoft`` contrib ops it has CPU kernels
    for. A custom-op library (onnxruntime-extensions) registered in the session supplies its
    ops: ignore the rule for those.
    """,
    target="onnxruntime",
    by=(CHECK,),
    fixture="P201-hit-cuda-only-contrib-op",
)

ONNXRUNTIME_FP16_BATCH_TRANSPOSE_MATMUL = _code(
    "P202",
    "onnxruntime-fp16-batch-transpose-matmul-crash",
    "error",
    "a float16 MatMul of a batch-moving Transpose and a constant of rank 1 or 2 (onnxruntime crashes)",
    """
    onnxruntime's x86-64 CPU provider has no float16 MatMul kernel: with the default
    optimization level (``ORT_ENABLE_ALL``) the session runs such a MatMul in float32 (Casts
    inserted around it; FuseFp16InitializerToFp32NodeTransformer makes the float16 weight a
    float32 initializer) and optimizes the graph a second time. When the MatMul reads a
    Transpose whose perm moves the leading (batch) dim, ``[1, ..., r-2, 0, r-1]`` or
    ``[1, ..., r-2, r-1, 0]`` (rank 3 or more: the perms MatmulTransposeFusion,
    onnxruntime/core/optimizer/matmul_transpose_fusion.cc, folds as FusedMatMul's
    ``transBatch``), that second pass crashes the process with a segmentation fault in
    NchwcTransformer (onnxruntime/core/optimizer/nchwc_transformer.cc; the verbose log's last
    line) while the session is created. Its ``ApplyImpl`` dereferences ``graph.GetNode(index)``
    for every node of its topological order without a null check, so a node another pass
    removed without the order being rebuilt would crash it (the likely cause; not traced).
    Measured: disabling FuseFp16InitializerToFp32NodeTransformer, MatmulTransposeFusion or
    NchwcTransformer in the session, ``session.graph_optimizations_loop_level`` 0, or
    ``ORT_ENABLE_EXTENDED``, each avoids the crash.

    Reported in the main graph: a float16 MatMul one of whose inputs is such a Transpose and
    the other a float16 constant (initializer or Constant) of rank 1 or 2, the pattern
    onnxconverter-common's ``convert_float_to_float16`` leaves in a paddle2onnx CRNN text
    recognizer (Transpose ``[1, 0, 2]`` of the LSTM's output after a Reshape, then the
    classifier's MatMul and Add). Only where the Transpose reads a tensor onnxruntime keeps in
    float16: a graph input, or (through Identities) a Reshape, Squeeze, Unsqueeze, Slice,
    Concat, Gather, Expand, Split, LayerNormalization or Cast; after an op it computes in
    float32 (Relu, Sigmoid, Neg, Abs, Sqrt, Exp, Tanh, Floor, Softplus, Add, Mul, Pad, Tile,
    Where, Softmax, MatMul were measured) it loads. Not where another
    fusion takes the MatMul first: a Mul or Div reading it (MatMulScaleFusion), or an Add when
    both MatMul inputs have static shapes (MatMulAddFusion, a Gemm); it loads then. Checked
    against onnxruntime 1.32 (CPU, x86-64): of every rank-3 and rank-4 perm, with the Transpose
    on either MatMul input, exactly these crash, the weight an initializer or a Constant; the
    same model in float32, with the weight a graph input, or with a rank-3 ``[1, K, N]`` weight
    loads; the producers and readers above were measured (a Reshape, a Relu, an Add and a Mul
    are fixtures). onnx's checker and OpenVINO load it.
    Other patterns may crash the same way and are not claimed. Keep the MatMul in float32
    (``convert_float_to_float16``'s ``op_block_list=["MatMul"]``), or give the constant a
    leading 1 (``[1, K, N]``: the same product by broadcasting).
    """,
    target="onnxruntime",
    by=(CHECK,),
    fixture="P202-hit-fp16-batch-transpose-matmul",
)

ONNXRUNTIME_CONV_DILATED_SAME = _code(
    "P203",
    "onnxruntime-conv-dilated-same-pad",
    "error",
    "a convolution with dilations and auto_pad SAME_UPPER or SAME_LOWER (onnxruntime refuses to run it)",
    """
    ONNX defines ``auto_pad`` SAME_UPPER and SAME_LOWER with any dilation, and onnx's checker,
    its shape inference and its reference evaluator take them; onnxruntime's CPU provider
    computes a convolution's padding with ``ORT_ENFORCE(dilation == 1, "Dilation not supported
    for AutoPadType::SAME_UPPER or AutoPadType::SAME_LOWER.")``
    (onnxruntime/core/providers/cpu/nn/conv_attributes.h): the session loads, and every run
    fails, at every input size. Checked against onnxruntime 1.32 (CPU): ``Conv`` at opsets 1, 11,
    17 and 22, ``ConvInteger``, ``QLinearConv`` and ``com.microsoft`` ``FusedConv``, with a
    dilation above 1 on any axis, any kernel (1 too), with and without graph optimizations,
    batch 0 too; with dilations of ones, or ``auto_pad`` NOTSET or VALID, they run
    (``ConvTranspose`` and the pools pad otherwise and run). Reported for those ops, in every
    graph. Write the padding out instead: with strides of 1 the total padding of an axis is
    ``dilation*(kernel - 1)``, its first half (rounded down for SAME_UPPER, up for SAME_LOWER)
    at the start; with larger strides it depends on the input size.
    """,
    target="onnxruntime",
    by=(CHECK,),
    fixture="P203-hit-conv-dilated-same-upper",
)

ONNXRUNTIME_CONVTRANSPOSE_OUTPUT_PADDING = _code(
    "P204",
    "onnxruntime-convtranspose-output-padding",
    "error",
    "a ConvTranspose whose output_padding is not below its stride (onnxruntime refuses to run it)",
    """
    ONNX asks a ConvTranspose's ``output_padding`` to be below the stride or the dilation of its
    axis, and onnx's checker and shape inference take any; onnxruntime's CPU provider runs it
    only below the stride: with an output_padding at or above the stride it loads the model
    and fails every run ("output_padding[0] (1) must be less than max(stride, dilation)", or,
    where the dilation is larger, "Computed output shape is inconsistent with input spatial
    dimensions", "Explicit output_shape is inconsistent ..."). Checked against onnxruntime 1.32
    (CPU) over strides and dilations 1 to 3, output paddings 0 to 3 and kernels 1 to 3, with and
    without ``auto_pad`` or ``output_shape``: it runs exactly where every output padding is
    below its stride. Reported for the default domain's ConvTranspose in every graph. An output
    padding adds that many elements at the end of its axis (a stride-1 axis needs none: drop it,
    or pad the output with ``Pad``).
    """,
    target="onnxruntime",
    by=(CHECK,),
    fixture="P204-hit-output-padding-1-stride-1-dilation-2",
)

OPENVINO_IF_CONDITION_RANK = _code(
    "P007",
    "openvino-if-condition-rank",
    "error",
    "an If whose condition has rank 2 or more (OpenVINO's If takes rank 0 or 1)",
    """
    ONNX takes an ``If`` condition of any rank that holds one element, and onnx's checker and
    onnxruntime run a ``[1, 1]`` condition; OpenVINO's ``If`` validates
    ``if_condition_rank.compatible(1) || if_condition_rank.compatible(0)`` (src/core/src/op/if.cpp)
    and ``read_model`` refuses the model ("Rank of If condition input must be equal to 0 or 1").
    Checked against OpenVINO 2026.4 with conditions of rank 0, 1 (loaded) and 2, 3 (refused). A
    condition whose rank OpenVINO cannot see passes its check; reported are conditions whose
    rank inference knows. ``lint --fix --target openvino`` reads the condition through
    ``Reshape(cond, [])`` (the ``scalar-if-condition`` pass): the same value, a scalar.
    """,
    fix="scalar-if-condition",
    target="openvino",
    by=(CHECK,),
    fixture="P007-hit-if-condition-rank-2",
)

OPENVINO_GQA_SOFTCAP = _code(
    "P009",
    "openvino-gqa-softcap",
    "error",
    "a com.microsoft GroupQueryAttention with a non-zero softcap (OpenVINO's frontend refuses it)",
    """
    onnxruntime-genai's model builder writes ``softcap`` on every ``GroupQueryAttention`` of a
    Gemma-2 model (50.0: the attention logits are capped by ``softcap * tanh(x / softcap)``), and
    onnxruntime runs it; OpenVINO's ONNX frontend converts the op only without it
    (``CHECK_VALID_NODE(node, softcap == 0.0f, "GroupQueryAttention: softcap is not supported")``,
    src/frontends/onnx/frontend/src/op/com.microsoft/group_query_attention.cpp) and
    ``read_model`` refuses the model. Checked against OpenVINO 2026.4: the same node with
    ``softcap`` 0 (or absent, as in the builder's Qwen2 and Llama models) compiles. Export the
    model for OpenVINO with optimum-intel instead of the onnxruntime-genai builder.
    """,
    target="openvino",
    by=(CHECK,),
    fixture="P009-hit-softcap-50",
)

OPENVINO_ATTENTION_WITHOUT_BIAS = _code(
    "P010",
    "openvino-attention-without-bias",
    "error",
    "a com.microsoft Attention without its bias input (OpenVINO's CPU plugin fails on it)",
    """
    ``bias`` is optional in onnxruntime's ``com.microsoft.Attention`` (onnxruntime-genai's builder
    leaves it out of Whisper's encoder), and onnxruntime runs the node without it. OpenVINO's
    ONNX frontend reads it unconditionally (``const auto& bias = nodes[2]``, then
    ``Add(MatMul(input, weights), bias)``, src/frontends/onnx/frontend/src/op/com.microsoft/
    attention.cpp): an empty name gives a null input of unknown rank, so the Q, K, V it splits
    and reshapes have no rank OpenVINO knows, and the CPU plugin's
    ``MoveEltwiseUpThroughDataMovScalar`` (src/common/transformations/.../
    move_eltwise_up_data_movement.cpp: ``current->get_output_partial_shape(0).size()`` on the
    first producer above the Transpose) throws ``rank().is_static()`` in ``compile_model``; a
    node of two inputs crashes the process. Checked against OpenVINO 2026.4: with a bias (zeros)
    the same node compiles. Give the node a zero bias of ``3 * hidden`` (or the sum of
    ``qkv_hidden_sizes``) elements.
    """,
    target="openvino",
    by=(CHECK,),
    fixture="P010-hit-no-bias",
)

OPENVINO_GBQ_COMPUTED_OPERAND = _code(
    "P011",
    "openvino-gather-block-quantized-computed",
    "error",
    "a com.microsoft GatherBlockQuantized whose table, scales or zero points are computed (OpenVINO takes constants)",
    """
    onnxruntime runs ``GatherBlockQuantized`` on any ``data``, ``scales`` and ``zero_points``;
    OpenVINO's ONNX frontend converts the op only when each is a constant
    (``CHECK_VALID_NODE(node, ov::as_type<v0::Constant>(data.get_node()) != nullptr, ...)``, the
    same for scales and zero points, src/frontends/onnx/frontend/src/op/com.microsoft/
    gather_block_quantized.cpp) and ``read_model`` refuses the model ("Conversion is failed for:
    com.microsoft.GatherBlockQuantized"). Checked against OpenVINO 2026.4: an operand that is a
    graph input, a Cast or a Reshape of an initializer is refused; an initializer (a graph
    input's default too), a Constant node or an Identity of either compiles. Store the operand
    as an initializer (``optimize`` folds a constant computation into one).
    """,
    target="openvino",
    by=(CHECK,),
    fixture="P011-hit-data-input",
)

OPENVINO_DYNAMIC_RANK = _code(
    "P008",
    "openvino-dynamic-rank",
    "error",
    "a tensor whose rank is only known at run time (OpenVINO's CPU plugin compiles static ranks only)",
    """
    OpenVINO's CPU plugin creates a node for every operation with a static rank
    (``!shape.rank().is_dynamic()``, src/plugins/intel_cpu/src/node.cpp) and ``compile_model``
    fails on any tensor whose rank OpenVINO's own inference cannot fix; some of its ONNX
    converters stop earlier, in ``read_model`` (Conv: ``data.get_partial_shape().rank()
    .is_static()``, src/frontends/onnx/frontend/src/op/conv.cpp; an If whose branches give
    different ranks: "CPU plug-in doesn't support If operation with dynamic rank"). onnx's
    checker and onnxruntime run such models. Reported once, at the main-graph node where the
    rank is lost: a default-domain op with a shape rule whose inputs all have known ranks and
    whose output's rank is not (a Reshape, Expand or ConstantOfShape to a shape tensor of
    unknown length, an If whose branches disagree); a rank lost at an op without a rule is not
    claimed (OpenVINO may know it). Checked against OpenVINO 2026.4: a Reshape to a shape input
    of unknown length followed by Relu, Conv, pools or BatchNormalization is refused, the same
    with a shape of static length compiles. Give the shape tensor a static length (a declared
    input shape, or a Concat of known pieces).

    A rank inference knows only from what the model declares (``value_info``, a graph's or an
    If branch's outputs: an info G013) is unknown to OpenVINO: its ONNX frontend reads the
    shapes of the graph inputs and nothing else the model declares (core/graph.cpp makes
    Parameters of the graph inputs alone; every other tensor is what its converter infers, and
    op/if.cpp gives an If the shapes its branch bodies infer, src/frontends/onnx/frontend/src/).
    The ranks are judged as inference finds them without those declarations. Checked against
    OpenVINO 2026.4: a Reshape to a shape of unknown length declared ``[p, q]`` in
    ``value_info`` is refused, and so is an If whose branch gives such a Reshape declared
    ``[p, q]`` as its output (silero-vad's silero_vad.onnx: the ranks its nested Ifs lose are
    declared on the outer If's branch outputs); with a shape of static length both compile.

    An If one of whose branches gives an output as a constant of no elements (a Constant or
    an initializer with a 0 dim: optimum's merged seq2seq decoders return the encoder's past as
    ``[0, 4, 1, 8]`` on the use-cache branch) is reported too: OpenVINO's ONNX frontend makes
    every tensor of no elements rank 0 (measured with ``read_model``: the branch result is
    ``[]``), so the branches' ranks differ (0 against 4) and the If's rank is dynamic. Rank 0
    against rank 1 OpenVINO merges into rank 1 (torchvision's detectors return an empty ``[0]``
    from a branch, and compile): only outputs of rank 2 or more are reported. Checked against
    OpenVINO 2026.4: the same model with a one-row constant compiles, and so does an empty
    ``[0]`` against a rank-1 branch. Give the constant at least one element, or let
    ``lint --fix --target openvino`` compute it as ``ConstantOfShape`` of its dims (the
    ``empty-branch-constants`` pass): the same value, whose rank OpenVINO reads from the shape.
    Checked against OpenVINO 2026.4 on optimum's merged T5, BART, Marian and Whisper decoders:
    fixed, they compile, and compute the same in onnxruntime on both branches.
    """,
    fix="empty-branch-constants",
    target="openvino",
    by=(CHECK,),
    fixture="P008-hit-shape-of-unknown-length",
)
