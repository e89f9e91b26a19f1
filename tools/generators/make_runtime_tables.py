"""Regenerate ``shapeinfer/base/runtime_ops.json``: which ops each runtime can load, by opset.

The lint targets ``openvino`` and ``onnxruntime`` report a node the runtime has no
implementation for (P003, P201). What a runtime implements is read from the runtime itself,
so that lint's errors are the runtime's refusals:

- ``onnxruntime``: the CPU kernels it registers (``get_all_opkernel_def``, each with its version
  range of the op's domain), matched to the schema in force at each opset as onnxruntime matches
  them (:func:`_kernel_matches`). An op with a schema but no CPU kernel at a version is then loaded
  in a one-node model: when onnxruntime loads it anyway (a function body it expands, a fusion)
  or fails for another reason than a missing implementation, it counts as loadable;
- ``openvino``: one model per (domain, opset version) holding one node of every op name the onnx
  and onnxruntime schemas know in that domain, converted by OpenVINO's ONNX frontend
  (``FrontEndManager().load_by_framework("onnx")``); the ops in its "No conversion rule found
  for operations" summary have no rule at that version. A batch that crashes the frontend is
  split and retried in child processes. This matches the frontend's documented list
  (``src/frontends/onnx/docs/supported_ops.md`` in openvinotoolkit/openvino) for the installed
  version, which is recorded in the file.

Versions are stored as ranges ``[first, last]`` of the op's domain opset (``last`` is the
highest version probed: later versions are taken to behave like it).

    python tools/generators/make_runtime_tables.py [--check]   # needs onnxruntime and openvino
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import tempfile

import onnx
import onnx.defs
from onnx import TensorProto
from onnx import helper as h

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "shapeinfer", "base", "runtime_ops.json")
#: the opset versions probed per domain (the default domain: every onnx opset)
DOMAIN_VERSIONS = {
    "": range(1, onnx.defs.onnx_opset_version() + 1),
    "ai.onnx.ml": range(1, 6),
    "ai.onnx.preview.training": range(1, 2),
    "com.microsoft": range(1, 2),
    "com.microsoft.nchwc": range(1, 2),
}


def op_names() -> dict[str, set[str]]:
    """Every op name the onnx and onnxruntime schemas know, per probed domain."""
    from onnxruntime.capi import onnxruntime_pybind11_state as C

    out: dict[str, set[str]] = {d: set() for d in DOMAIN_VERSIONS}
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain in out:
            out[s.domain].add(s.name)
    for s in C.get_all_operator_schema():
        if s.domain in out:
            out[s.domain].add(s.name)
    return out


def ranges(versions: list[int]) -> list[list[int]]:
    """``[1, 2, 3, 7]`` as ``[[1, 3], [7, 7]]``."""
    out: list[list[int]] = []
    for v in sorted(versions):
        if out and v == out[-1][1] + 1:
            out[-1][1] = v
        else:
            out.append([v, v])
    return out


def _probed() -> dict[str, list[int]]:
    """domain -> [lowest, highest] opset version probed."""
    return {d: [min(vs), max(vs)] for d, vs in DOMAIN_VERSIONS.items()}


def one_node_model(domain: str, version: int, ops: list[str], n_inputs: dict[str, int] | None = None):
    nodes, ins, outs = [], [], []
    for i, op in enumerate(ops):
        k = (n_inputs or {}).get(op, 1)
        names = [f"i{i}_{j}" for j in range(k)]
        ins += [h.make_tensor_value_info(a, TensorProto.FLOAT, None) for a in names]
        outs.append(h.make_tensor_value_info(f"o{i}", TensorProto.FLOAT, None))
        nodes.append(h.make_node(op, names, [f"o{i}"], domain=domain, name=f"n{i}"))
    opsets = [h.make_opsetid(domain, version)] + ([h.make_opsetid("", 17)] if domain else [])
    return h.make_model(h.make_graph(nodes, "g", ins, outs), opset_imports=opsets, ir_version=8)


# --- OpenVINO ----------------------------------------------------------------------------------

_NO_RULE = re.compile(r"No conversion rule found for operations: (.*)")


def _ov_no_rule(domain: str, version: int, ops: list[str], tmp: str) -> set[str] | None:
    """The ops of ``ops`` with no conversion rule, converted in a forked child; None on a crash."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        try:
            from openvino.frontend import FrontEndManager

            path = os.path.join(tmp, f"probe_{os.getpid()}.onnx")
            onnx.save(one_node_model(domain, version, ops), path)
            fe = FrontEndManager().load_by_framework("onnx")
            missing: list[str] = []
            try:
                fe.convert(fe.load(path))
            except Exception as e:
                for m in _NO_RULE.finditer(str(e)):
                    missing += [x.strip() for x in m.group(1).split(",")]
            os.write(w, json.dumps(missing).encode())
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 1 << 16):
        data += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    if status != 0 or not data:
        return None
    names = set()
    for entry in json.loads(data):
        # "Foo-17" (default domain) or "com.microsoft.Foo" / "com.microsoft.Foo-1"
        entry = re.sub(r"-[0-9]+$", "", entry)
        names.add(entry[len(domain) + 1 :] if domain and entry.startswith(domain + ".") else entry)
    return names & set(ops)


def _ov_batch(domain: str, version: int, ops: list[str], tmp: str) -> set[str]:
    got = _ov_no_rule(domain, version, ops, tmp)
    if got is not None:
        return got
    if len(ops) == 1:
        return set()  # the frontend has a rule for it (it crashed converting a bare node)
    mid = len(ops) // 2
    return _ov_batch(domain, version, ops[:mid], tmp) | _ov_batch(domain, version, ops[mid:], tmp)


def openvino_table(names: dict[str, set[str]]) -> dict:
    import openvino

    ops: dict[str, dict[str, list[list[int]]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for domain, versions in DOMAIN_VERSIONS.items():
            have: dict[str, list[int]] = {op: [] for op in sorted(names[domain])}
            for v in versions:
                missing = _ov_batch(domain, v, sorted(names[domain]), tmp)
                for op in have:
                    if op not in missing:
                        have[op].append(v)
            ops[domain] = {op: ranges(vs) for op, vs in have.items() if vs}
            print(f"openvino {domain or 'ai.onnx'}: {len(ops[domain])}/{len(have)} ops", file=sys.stderr)
    return {"version": openvino.__version__.split("-")[0], "opsets": _probed(), "ops": ops}


# --- onnxruntime -------------------------------------------------------------------------------


#: A value of each attribute type for the required attributes of a probed node.
_DUMMY = {
    "FLOAT": 1.0,
    "INT": 1,
    "STRING": "x",
    "FLOATS": [1.0],
    "INTS": [1],
    "STRINGS": ["x"],
    "TENSOR": h.make_tensor("t", TensorProto.FLOAT, [], [1.0]),
}


def _type_as_schema(values, params, schema) -> None:
    """Give each tensor value of a probe node the first type its schema parameter allows (float
    where allowed), so that a type error does not hide a missing kernel (RoiAlign's int64
    ``batch_indices``). A parameter of a type that is not a tensor keeps float."""
    allowed = {c.type_param_str: list(c.allowed_type_strs) for c in schema.type_constraints}
    for vi, p in zip(values, params):
        types = allowed.get(p.typeStr, [p.typeStr])
        text = "tensor(float)" if "tensor(float)" in types else types[0]
        if text.startswith("tensor("):
            with contextlib.suppress(ValueError):  # (onnx's element type of that name: tensor(int64) is INT64)
                vi.type.tensor_type.elem_type = TensorProto.DataType.Value(text[len("tensor(") : -1].upper())


def _ort_refuses(domain: str, version: int, op: str, schema) -> bool:
    """Whether onnxruntime refuses a one-node model of ``op`` (``schema``: onnxruntime's schema in
    force at ``version``) for lack of an implementation. The node has the schema's required
    attributes, so that a missing attribute does not hide a missing kernel (Upsample-1)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 4
    m = one_node_model(domain, version, [op], {op: max(1, schema.min_input)})
    _type_as_schema(m.graph.input, schema.inputs, schema)
    _type_as_schema(m.graph.output, schema.outputs, schema)
    for name, a in sorted(schema.attributes.items()):
        kind = str(a.type).rsplit(".", 1)[-1].split(":")[0]
        if a.required and kind in _DUMMY:
            m.graph.node[0].attribute.append(h.make_attribute(name, _DUMMY[kind]))
    try:
        ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    except Exception as e:
        text = str(e)
        return "NOT_IMPLEMENTED" in text or "Could not find an implementation" in text
    return False


def _ort_newest_opsets() -> dict[str, int]:
    """domain -> the newest opset version of it onnxruntime loads a model importing (it refuses a
    newer one whatever the nodes: "Current official support for domain ai.onnx.ml is till opset
    5"), probed on a one-Identity model up to 64 versions past the newest onnx knows."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 4
    out = {}
    for domain, versions in DOMAIN_VERSIONS.items():
        newest = None
        for v in range(1, max(versions) + 65):
            m = one_node_model("", 17, ["Identity"])
            if domain:
                m.opset_import.append(h.make_opsetid(domain, v))
            else:
                m.opset_import[0].version = v
            try:
                ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
            except Exception as e:
                if "official support" in str(e):
                    break
                continue  # refused for another reason at this version (Identity-1's types): not the import
            newest = v
        if newest is not None:
            out[domain] = newest
    return out


#: onnxruntime's open end of a kernel's version range
_OPEN = 2**31 - 1


def _kernel_matches(registered: list[tuple[int, int]], since_version: int) -> bool:
    """Whether a kernel of ``registered`` (version ranges) serves a node whose schema is the one
    since ``since_version``: onnxruntime's rule (``KernelRegistry::VerifyKernelDef``) is a kernel
    that starts at that version, or one whose closed range holds it. A kernel open at the top
    (``[16, INT_MAX]``) serves the schema it starts at and no later one: RoiAlign's
    ``[16, INT_MAX]`` kernel does not run RoiAlign-22, which opset 22 selects."""
    return any(lo == since_version or (lo < since_version <= hi != _OPEN) for lo, hi in registered)


def onnxruntime_table(names: dict[str, set[str]]) -> dict:
    import onnxruntime
    from onnxruntime.capi import onnxruntime_pybind11_state as C

    kernels: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for k in C.get_all_opkernel_def():
        if k.provider != "CPUExecutionProvider" or k.domain not in DOMAIN_VERSIONS:
            continue
        kernels.setdefault((k.domain, k.op_name), []).append(tuple(k.version_range))
    schemas: dict[tuple[str, str], list] = {}
    for s in C.get_all_operator_schema():
        schemas.setdefault((s.domain, s.name), []).append(s)
    ops: dict[str, dict[str, list[list[int]]]] = {d: {} for d in DOMAIN_VERSIONS}
    for domain, versions in DOMAIN_VERSIONS.items():
        for op in sorted(names[domain]):
            registered = kernels.get((domain, op), [])
            since = [s for s in schemas.get((domain, op), [])]
            have: set[int] = set()
            for v in versions:
                live = [s for s in since if s.since_version <= v]
                if not live:  # no schema in force: a kernel's range is all there is to go by
                    if any(lo <= v <= hi for lo, hi in registered):
                        have.add(v)
                    continue
                s = max(live, key=lambda s: s.since_version)
                if _kernel_matches(registered, s.since_version) or not _ort_refuses(domain, v, op, s):
                    have.add(v)
            if have:
                ops[domain][op] = ranges(sorted(have))
        print(f"onnxruntime {domain or 'ai.onnx'}: {len(ops[domain])}/{len(names[domain])} ops", file=sys.stderr)
    return {
        "version": onnxruntime.__version__,
        "provider": "CPUExecutionProvider",
        "opsets": _probed(),
        "newest_opsets": _ort_newest_opsets(),
        "ops": ops,
    }


def main(argv: list[str]) -> int:
    if argv not in ([], ["--check"]):
        print(
            "usage: python tools/generators/make_runtime_tables.py [--check]"
            f"  (rewrites {OUT}; --check: is it up to date?)"
        )
        return 0 if argv[0] in ("-h", "--help") else 2
    names = op_names()
    table = {
        "generated_by": "tools/generators/make_runtime_tables.py",
        "onnxruntime": onnxruntime_table(names),
        "openvino": openvino_table(names),
    }
    text = json.dumps(table, indent=1, sort_keys=True) + "\n"
    # one op a line: [[1, 28]] instead of six lines
    text = re.sub(r"\[\s*([0-9]+),\s*([0-9]+)\s*\]", r"[\1, \2]", text)
    text = re.sub(
        r"\[\s*(\[[0-9, ]+\](?:,\s*\[[0-9, ]+\])*)\s*\]", lambda m: "[" + re.sub(r",\s+", ", ", m.group(1)) + "]", text
    )
    if "--check" in argv:
        with open(OUT, encoding="utf-8") as f:
            same = f.read() == text
        print("up to date" if same else f"out of date: {OUT}")
        return 0 if same else 1
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
