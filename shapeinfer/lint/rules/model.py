"""Model-level rules: external data every runtime needs (E003), ops the onnx checker does not
know (G014).
"""

from __future__ import annotations

import onnx

from shapeinfer.base import runtimes
from shapeinfer.io.external import (
    ExternalDataError,
    ExternalDataMissing,
    external_tensors,
    missing_data_files,
    resolve,
    tensor_nbytes,
)
from shapeinfer.lint.context import LintContext
from shapeinfer.lint.registry import check

#: Domains whose ops onnx's checker looks up (an op of another domain is not checked).
ONNX_DOMAINS = frozenset({"", *(s.domain for s in onnx.defs.get_all_schemas_with_history())})


@check("E003")
def external_data(ctx: LintContext) -> None:
    """E003 (declared in :mod:`shapeinfer.base.codes`) for every external tensor of a model read
    from a file: the engine reports only the ones it reads. A missing file is one finding naming
    it (the engine's line), not one per tensor stored in it."""
    if ctx.base_dir is None:
        return

    tensors = external_tensors(ctx.model)
    for f in missing_data_files(tensors, ctx.base_dir):
        ctx.report("E003", f.message())
    for t in tensors:
        try:
            ref = resolve(t, ctx.base_dir)
        except ExternalDataMissing:
            continue  # its file is reported above
        except ExternalDataError as e:
            problem = str(e)
        else:
            need = tensor_nbytes(t)
            if need is None or need <= ref.nbytes:
                continue
            problem = (
                f"tensor {t.name!r}: external data {ref.location!r} holds {ref.nbytes} bytes at offset "
                f"{ref.offset} for a tensor of {need} bytes"
            )
        ctx.report("E003", f"{problem}: runtimes cannot load the model", tensor=t.name or None)


@check("G014")
def unknown_onnx_op(ctx: LintContext) -> None:
    for ref in ctx.nodes():
        n = ref.node
        domain = "" if n.domain == "ai.onnx" else n.domain
        if domain not in ONNX_DOMAINS or (n.domain, n.op_type) in ctx.functions or ctx.schema(n) is not None:
            continue
        v = ctx.opset(domain)
        msg = f"onnx has no op {domain or 'ai.onnx'}.{n.op_type} at opset {v}: onnx.checker refuses the model"
        if runtimes.loads("onnxruntime", domain, n.op_type, v):
            msg += " (an onnxruntime op: lint with --target onnxruntime for a model meant for onnxruntime only)"
        ctx.report("G014", msg, ref)
