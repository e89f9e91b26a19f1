"""onnxruntime's ``SymbolicShapeInference.infer_shapes`` and its command line, answered by shapeinfer.

::

    # from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference
    from shapeinfer.compat.onnxruntime import SymbolicShapeInference

    model = SymbolicShapeInference.infer_shapes(model, auto_merge=True)

    python -m shapeinfer.compat.onnxruntime --input M.onnx --output OUT.onnx [--auto_merge]
        [--int_max N] [--guess_output_rank] [--verbose N] [--save_as_external_data ...]

Same signature and return contract: a new ModelProto with ``value_info`` (graph outputs
included, as onnxruntime lists them there too) and graph output types; None (and a warning)
for a model below opset 7; ``Exception("Incomplete symbolic shape inference")`` when a
tensor's type or rank is left unknown. How it differs from onnxruntime's:

- dims are shapeinfer's: expressions of the inputs' symbols (``2*seq``) where onnxruntime
  writes sympy text or a fresh symbol, and fresh symbols spelled as onnxruntime spells its own,
  ``unk__<n>``, numbered past any the model already uses (``shapeinfer`` writes ``unk_<n>``); where a dim holds only for
  some sizes, shapeinfer writes the expression valid at every size (``min(seq, 512)`` for a
  slice of a 512-row table, where onnxruntime writes ``seq``), or records the assumption;
- a graph input with an initializer (a default the caller may override, IR >= 4) is read as
  a constant, as onnxruntime's tool reads it: dims that follow from its value hold only while
  the default is used (an info ``G013`` per input, logged with ``verbose``); ``shapeinfer``
  itself keeps such values open;
- onnxruntime's tool matches ops by name alone: a default-domain node of an op onnx does not
  define (``MatMulNBits`` written without its domain) is read as onnxruntime's ``com.microsoft``
  op of that name, as it does, and logged as a warning (logger ``shapeinfer.compat``), since
  onnxruntime's runtime refuses such a node; the returned model keeps the node's domain;
- a constant negative Slice start or end on a symbolic dim is read as onnxruntime's tool reads
  it, counting from the end *within* the dim: ``x[:, -10:-1]`` of width ``M`` gives ``9`` (not
  ``min(M - 1, 9)``, which ``shapeinfer`` writes). That holds only when ``M >= 10``: the guard
  ``10 <= M`` is recorded (``shapeinfer.infer(...).guards()`` lists it) and logged as a
  warning (logger ``shapeinfer.compat``), with or without ``verbose``;
- an Einsum whose contracted letter has two sizes (``abc,cde->abde`` with ``c`` 8 on one side,
  2 on the other: the node fails at run time) gets the output dims its other letters give, as
  onnxruntime's tool states them, and the error (G002) is logged as a warning; a letter of the
  output with two sizes leaves that dim unknown;
- an If whose branches give one output two element types raises onnxruntime's ``ValueError``
  ("For node if_node, dst_tensor_type.elem_type != src_tensor_type.elem_type: FLOAT vs
  DOUBLE"); onnx and onnxruntime refuse such a model whichever branch runs;
- ``auto_merge`` has no effect: where two symbolic dims must be equal, shapeinfer always
  continues and records the assumption (``result.guards()``), instead of stopping without it;
- ``guess_output_rank`` has no effect: an op nobody knows keeps an unknown rank (a guessed rank
  could be wrong), so such a model raises the incomplete-inference exception either way;
- ``int_max`` has no effect: slice ends are compared as int64, past any sentinel;
- ``verbose`` >= 1 logs shapeinfer's diagnostics (``logging``, logger ``shapeinfer.compat``);
- nothing is written on failure (onnxruntime saves ``sym_shape_infer_temp.onnx`` in the
  working folder); the model given is never modified;
- the command line writes the model atomically, keeping external data references; with
  ``--save_as_external_data`` it saves through ``onnx.save_model`` with the flags given, as
  onnxruntime's does, but by the same rules as every model output: never over a file the run
  did not create (a data file name taken in the output's folder is refused, one line, nothing
  written; the input's own data files may be replaced when the output replaces the input),
  never over a file the input's external data names, a folder or a symlink leaving its folder;
  a write that fails or is interrupted leaves no file behind and puts back any data file it
  replaced.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import shutil
import sys
import tempfile

import onnx
from onnx.external_data_helper import load_external_data_for_model

from shapeinfer.base import codes
from shapeinfer.compat._fresh import spell_fresh_as_onnx
from shapeinfer.document import Document
from shapeinfer.document import open as open_model
from shapeinfer.inference.ops.gather_slice import WITHIN_DIM
from shapeinfer.io.datacopy import DataCopy, StagedData
from shapeinfer.io.external import ExternalDataError, data_files, external_tensors, safe_location
from shapeinfer.io.modelsource import in_memory
from shapeinfer.io.onnxio import ModelLoadError, graphs_within
from shapeinfer.io.userfiles import UserFileError, WriteRefused, file_folder, output_target
from shapeinfer.io.writer import write_chunks, write_with_data

__all__ = ["SymbolicShapeInference", "main"]

logger = logging.getLogger("shapeinfer.compat")

INCOMPLETE = "Incomplete symbolic shape inference"


def _opset(model: onnx.ModelProto) -> int | None:
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return None


#: the engine's E031 for an If whose branches give one output two element types
_BRANCH_TYPES = re.compile(r"^If output \d+: then_branch gives (\w+), else_branch (\w+)$")


class BranchTypeError(ValueError):
    """onnxruntime's ValueError for an If whose branches give one output two element types."""


def _branch_type_clash(result) -> str | None:
    """onnxruntime's ValueError message for the first If whose branches disagree on an output's
    element type (then_branch's type first, as onnxruntime fuses them), or None."""
    for d in result.diagnostics:
        m = (
            _BRANCH_TYPES.match(d.message)
            if d.code == codes.OPERAND_STRUCTURE_MISMATCH and d.severity == "error"
            else None
        )
        if m:
            node = d.node or d.op_type or "If"
            a, b = m.group(1).upper(), m.group(2).upper()  # the engine writes TensorProto names lowercased
            return f"For node {node}, dst_tensor_type.elem_type != src_tensor_type.elem_type: {a} vs {b}"
    return None


def _readings(d) -> bool:
    """Whether diagnostic ``d`` says a reading taken as onnxruntime's tool takes it (an
    assumption the returned dims hold under, or an error they were stated past): logged as a
    warning whatever ``verbose`` is, since the returned model cannot carry it."""
    return (d.code == codes.INPUT_GUARD and WITHIN_DIM in d.message) or (
        d.code == codes.BROADCAST_INCOMPATIBLE and d.op_type == "Einsum"
    )


def _unknown(result) -> list[str]:
    """Main-graph tensors made by a node whose type or rank inference left unknown."""
    out = []
    for node in result.model.graph.node:
        for name in node.output:
            f = result.facts.get(name) if name else None
            if name and (f is None or (f.kind == "tensor" and (not f.dtype or f.shape is None))):
                out.append(name)
    return out


MS = "com.microsoft"


def _read_as_contrib(model: onnx.ModelProto) -> list[tuple[onnx.NodeProto, str]]:
    """Put into ``com.microsoft`` every default-domain node whose op onnx defines at no opset,
    that no model-local function and no default-domain rule names, and for which shapeinfer
    has a ``com.microsoft`` rule: onnxruntime's tool matches ops by name alone and reads such a
    node (``MatMulNBits`` without its domain) as the contrib op. Each is logged as a warning
    (onnxruntime's runtime refuses the node). Returns the nodes changed and their own domains."""
    from shapeinfer.inference.ops.rule_index import RULE_MODULES

    local = {(f.domain, f.name) for f in model.functions}
    changed = []
    for g in graphs_within(model.graph):
        for n in g.node:
            op = n.op_type
            if n.domain not in ("", "ai.onnx") or ("", op) in RULE_MODULES or (MS, op) not in RULE_MODULES:
                continue
            if (n.domain, op) in local or onnx.defs.has(op, ""):
                continue
            logger.warning(
                "node %r: %s is no ONNX op; read as %s's %s, as onnxruntime's tool does "
                "(onnxruntime's runtime refuses it in the default domain: set the node's domain)",
                n.name or op,
                op,
                MS,
                op,
            )
            changed.append((n, n.domain))
            n.domain = MS
    if changed and not any(o.domain == MS for o in model.opset_import):
        model.opset_import.append(onnx.helper.make_opsetid(MS, 1))
    return changed


class SymbolicShapeInference:
    """The class onnxruntime's tool exposes; only its static ``infer_shapes`` is offered."""

    def __init__(self, int_max=2**31 - 1, auto_merge=False, guess_output_rank=False, verbose=0, prefix=""):
        self.int_max_ = int_max
        self.auto_merge_ = auto_merge
        self.guess_output_rank_ = guess_output_rank
        self.verbose_ = verbose
        self.prefix_ = prefix

    @staticmethod
    def infer_shapes(
        in_mp: onnx.ModelProto,
        int_max: int = 2**31 - 1,
        auto_merge: bool = False,
        guess_output_rank: bool = False,
        verbose: int = 0,
    ) -> onnx.ModelProto | None:
        """``in_mp`` with every tensor's type and dims (a new model; ``in_mp`` is not modified).

        None, with a warning, below opset 7. Raises ``Exception("Incomplete symbolic shape
        inference")`` when a tensor's element type or rank stays unknown. ``int_max``,
        ``auto_merge`` and ``guess_output_rank`` are accepted and have no effect (the module
        docstring says why); ``verbose`` >= 1 logs the diagnostics, errors (a node that fails
        at every size, which may leave a rank unknown) are logged as warnings at any level.
        """
        m, callers = in_memory(in_mp) or (None, False)
        if m is None:
            raise TypeError("infer_shapes takes a ModelProto (load a path with onnx.load)")
        opset = _opset(m)
        if not opset or opset < 7:
            logger.warning("Only support models of onnx opset 7 and above.")
            return None
        if callers:
            m = onnx.ModelProto()
            m.CopyFrom(in_mp)
        opsets = len(m.opset_import)
        renamed = _read_as_contrib(m)
        doc = Document.adopt(m)  # this copy, read as the tool reads it, inferred and annotated in place
        result = doc.infer(reading="onnxruntime")
        for d in result.diagnostics:
            reading = _readings(d)
            if verbose or reading or d.severity == "error":
                logger.log(logging.WARNING if d.severity == "error" or reading else logging.INFO, "%s", d)
        clash = _branch_type_clash(result)
        if clash:
            raise BranchTypeError(clash)  # a ValueError with onnxruntime's message
        unknown = _unknown(result)
        if unknown:
            if verbose:
                logger.warning("unknown type or rank: %s", ", ".join(unknown[:10]))
            raise Exception(INCOMPLETE)  # onnxruntime's exact type and message
        out = doc.annotated(result, name_fresh=True, refuse_contradictions=False)
        spell_fresh_as_onnx(out, result.fresh_symbols)
        for n, domain in renamed:  # the model keeps its own domains: the reading is the tool's
            n.domain = domain
        del out.opset_import[opsets:]
        listed = {vi.name for vi in out.graph.value_info}
        out.graph.value_info.extend(o for o in out.graph.output if o.name not in listed and o.type.WhichOneof("value"))
        return out


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m shapeinfer.compat.onnxruntime")
    p.add_argument("--input", required=True, help="The input model file")
    p.add_argument("--output", help="The output model file")
    p.add_argument("--auto_merge", action="store_true", default=False, help="Accepted; shapeinfer always merges")
    p.add_argument("--int_max", type=int, default=2**31 - 1, help="Accepted; no effect")
    p.add_argument("--guess_output_rank", action="store_true", default=False, help="Accepted; no effect")
    p.add_argument("--verbose", type=int, default=0, help="1 or more: log the diagnostics")
    p.add_argument("--save_as_external_data", action="store_true", default=False)
    p.add_argument("--all_tensors_to_one_file", action="store_true", default=False)
    p.add_argument("--external_data_location", default="./")
    p.add_argument("--external_data_size_threshold", type=int, default=1024)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """The command line of ``python -m onnxruntime.tools.symbolic_shape_infer``; returns the
    exit code (0 written or nothing asked, 1 inference incomplete or the model unreadable)."""

    args = _arguments(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    try:
        doc = open_model(args.input)
        out = SymbolicShapeInference.infer_shapes(
            doc.model, args.int_max, args.auto_merge, args.guess_output_rank, args.verbose
        )
    except ModelLoadError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except BranchTypeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except Exception as e:
        if str(e) != INCOMPLETE:
            raise
        print(f"error: {e}", file=sys.stderr)
        return 1
    if not args.output or out is None:
        return 0
    try:
        if args.save_as_external_data:
            _save_with_external_data(out, args, doc.data_files)
        else:
            doc.write(args.output, in_place=True, model=out)  # onnxruntime's may overwrite its input
    except (UserFileError, ExternalDataError, OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def _save_with_external_data(model: onnx.ModelProto, args: argparse.Namespace, inputs: list[str]) -> None:
    """``--save_as_external_data``: ``onnx.save_model`` with the flags given, as onnxruntime's tool
    saves, but by the write contract. The output is checked as every model output is
    (:func:`~shapeinfer.io.userfiles.output_target`: not a folder, not a file the input's
    external data names (``inputs``), no symlink leaving its folder; the input model itself may
    be replaced, as onnxruntime's tool does). onnx saves into a fresh folder beside the output;
    each data file goes in place only if no file of its name is there (the input's own data
    files excepted when the output replaces the input) and never outside the output's folder,
    with the model (:func:`~shapeinfer.io.writer.write_with_data`: a failure or an interrupt
    takes every data file back, a replaced one restored). Raises
    :class:`~shapeinfer.io.userfiles.UserFileError` (:class:`~shapeinfer.io.userfiles.WriteRefused`)
    or :class:`~shapeinfer.io.external.ExternalDataError` naming the file, with nothing written."""

    src = os.path.join(file_folder(args.input), os.path.basename(args.input))  # (as the OS resolves it)
    target = output_target(args.output, inputs=[src], allow_inputs=True, what="model", data_inputs=inputs)
    folder = os.path.dirname(target)
    in_place = os.path.exists(target) and os.path.samefile(target, src)
    mine = set(inputs) if in_place else set()
    load_external_data_for_model(model, os.path.dirname(src))  # onnx writes them
    stage = tempfile.mkdtemp(prefix=".shapeinfer-", dir=folder)
    try:
        saved = os.path.join(stage, os.path.basename(target))
        onnx.save_model(
            model,
            saved,
            save_as_external_data=True,
            all_tensors_to_one_file=args.all_tensors_to_one_file,
            location=args.external_data_location,
            size_threshold=args.external_data_size_threshold,
            convert_attribute=False,
        )
        with open(saved, "rb") as f:
            data = f.read()
        written = onnx.ModelProto()
        written.ParseFromString(data)
        if os.path.realpath(target) in data_files(external_tensors(written), folder):
            raise WriteRefused(args.output, "its external data file would be the model file itself")
        made = [os.path.relpath(os.path.join(r, f), stage) for r, _, fs in os.walk(stage) for f in fs]
        staged = StagedData()
        try:
            for m in sorted(m for m in made if m != os.path.basename(target)):
                tmp = os.path.join(stage, m)
                copy = DataCopy(safe_location(m, folder), m, ((tmp, 0),), os.path.getsize(tmp))
                there = copy.existing(folder)
                if there is not None:
                    if copy.target not in mine:
                        raise WriteRefused(
                            args.output,
                            f"its external data file {m!r} would replace {there}, a file this run did not create",
                        )
                    copy = DataCopy(copy.target, m, copy.sources, copy.size, replace=True)
                staged.adopt(tmp, copy)
        except BaseException:
            staged.discard()
            raise
        write_with_data(
            args.output,
            lambda fd: write_chunks(fd, [data]),
            staged,
            inputs=[src],
            allow_inputs=True,
            data_inputs=inputs,
        )
    finally:
        shutil.rmtree(stage, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
