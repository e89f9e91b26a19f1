"""Model-structure rules M001-M030: what a model file must look like before any shape matters
(IR version, opset imports, names, declared types, model-local functions), and dead code.

Each rule's severity is what the runtimes do with such a model, measured with onnx 1.23
(``onnx.checker.check_model(full_check=True)``), onnxruntime 1.32 (``InferenceSession`` on CPU)
and OpenVINO 2026.4 (``read_model`` + ``compile_model("CPU")``) on the fixture models of
``testkit/structure_models.py`` (``benchmarks/structure_vs_doctor.py`` prints the table). A
finding is an error under a ``--target`` only where that target's runtime refuses the model
(the ``onnx`` target's runtime is the checker; ``onednn``, with no runtime to ask, follows
``onnx``); elsewhere it is a warning, or info where nothing is wrong for that runtime. The
severity under the default ``onnx`` target is the finding's default; another target that grades
it otherwise says so (``regraded``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import onnx

from shapeinfer.base import runtimes
from shapeinfer.io.onnxio import graph_path, initializer_names, subgraph_attrs
from shapeinfer.lint.context import LintContext
from shapeinfer.lint.registry import check

#: lint target -> the runtime whose verdict grades a finding
ALL = frozenset({"onnx", "onnxruntime", "openvino"})


def _domain(d: str) -> str:
    return "" if d == "ai.onnx" else d


def _shown(domain: str) -> str:
    return domain or "ai.onnx"


@dataclass
class _Graph:
    """A graph of the model with its path and the names its enclosing graphs define before it."""

    graph: onnx.GraphProto
    path: str
    outer: frozenset[str]  # names visible from the enclosing graphs where this subgraph sits
    depth: int
    reads: set[str] = field(default_factory=set)  # names read by its nodes and nested graphs


def _graphs(model: onnx.ModelProto) -> list[_Graph]:
    out: list[_Graph] = []

    def walk(g: onnx.GraphProto, path: str, outer: frozenset[str], depth: int) -> set[str]:
        me = _Graph(g, path, outer, depth)
        out.append(me)
        defined = {i.name for i in g.input} | set(initializer_names(g))
        for k, n in enumerate(g.node):
            me.reads.update(x for x in n.input if x)
            for attr, sub in subgraph_attrs(n):
                me.reads |= walk(sub, graph_path(path, k, attr), outer | frozenset(defined), depth + 1)
            defined.update(o for o in n.output if o)
        return me.reads

    walk(model.graph, "main", frozenset(), 0)
    return out


def _all_nodes(model: onnx.ModelProto) -> Iterator[onnx.NodeProto]:
    for g in _graphs(model):
        yield from g.graph.node
    for f in model.functions:
        yield from f.node


# ---------------------------------------------------------------------------------- model


@check("M001")
def ir_version_missing(ctx: LintContext) -> None:
    v = ctx.model.ir_version
    if v < 1:
        ctx.report("M001", f"ir_version is {v}: onnx.checker refuses the model", refused_by={"onnx"})


@check("M002")
def ir_version_unsupported(ctx: LintContext) -> None:
    v = ctx.model.ir_version
    if v > onnx.IR_VERSION:
        ctx.report(
            "M002",
            f"ir_version {v} is newer than IR {onnx.IR_VERSION}, the newest onnx {onnx.__version__} knows: "
            "onnx.checker and onnxruntime refuse the model",
            refused_by={"onnx", "onnxruntime"},
        )


@check("M031")
def opset_newer_than_runtime(ctx: LintContext) -> None:
    newer = []
    for o in ctx.model.opset_import:
        top = runtimes.newest_opset("onnxruntime", _domain(o.domain))
        if top is not None and o.version > top:
            newer.append(f"{_shown(_domain(o.domain))}:{o.version} (up to {top})")
    if newer:
        ctx.report(
            "M031",
            f"opset imports newer than onnxruntime {runtimes.version('onnxruntime')} loads: "
            f"{', '.join(newer)}: onnxruntime refuses the model",
            refused_by={"onnxruntime"},
        )


@check("M003")
def opset_import_missing(ctx: LintContext) -> None:
    imported = {_domain(o.domain) for o in ctx.model.opset_import}
    seen: set[str] = set()
    for ref in ctx.nodes():
        d = _domain(ref.node.domain)
        if d in imported or d in seen:
            continue
        seen.add(d)
        ctx.report(
            "M003",
            f"domain {_shown(d)!r} of this {ref.node.op_type} is not in the model's opset_import: "
            "onnx.checker refuses the model",
            ref,
            refused_by={"onnx"},
        )


@check("M004")
def opset_import_below_ir3(ctx: LintContext) -> None:
    v = ctx.model.ir_version
    if 1 <= v < 3 and len(ctx.model.opset_import):
        ctx.report(
            "M004",
            f"ir_version {v} predates opset imports, yet the model has {len(ctx.model.opset_import)}: "
            "onnx.checker refuses the model",
            refused_by={"onnx"},
        )


@check("M005")
def duplicate_metadata_key(ctx: LintContext) -> None:
    for key, n in Counter(p.key for p in ctx.model.metadata_props).items():
        if n > 1:
            ctx.report(
                "M005",
                f"metadata key {key!r} appears {n} times: onnx.checker refuses the model",
                refused_by={"onnx"},
            )


#: the imports onnxruntime writes into every model it saves (its optimizer, ``optimized_model_filepath``)
ORT_SAVED_IMPORTS = frozenset(
    {
        "ai.onnx.ml",
        "ai.onnx.training",
        "ai.onnx.preview",
        "ai.onnx.preview.training",
        "com.microsoft",
        "com.microsoft.experimental",
        "com.microsoft.nchwc",
        "org.pytorch.aten",
    }
)


@check("M006")
def unused_opset_import(ctx: LintContext) -> None:
    used = {_domain(n.domain) for n in _all_nodes(ctx.model)} | {_domain(f.domain) for f in ctx.model.functions}
    imported = {_domain(o.domain) for o in ctx.model.opset_import}
    skip = ORT_SAVED_IMPORTS if imported >= ORT_SAVED_IMPORTS else frozenset()
    unused = [f"{o.domain}:{o.version}" for o in ctx.model.opset_import if _domain(o.domain) not in used | skip | {""}]
    if unused:
        ctx.report(
            "M006",
            f"{len(unused)} opset import{'s are' if len(unused) > 1 else ' is'} used by no node: {', '.join(unused)}",
        )


@check("M007")
def duplicate_opset_import(ctx: LintContext) -> None:
    versions: dict[str, list[int]] = {}
    for o in ctx.model.opset_import:
        versions.setdefault(_domain(o.domain), []).append(o.version)
    for d, vs in versions.items():
        if len(vs) > 1:
            ctx.report("M007", f"domain {_shown(d)!r} is imported {len(vs)} times (versions {', '.join(map(str, vs))})")


@check("M008")
def function_opset_mismatch(ctx: LintContext) -> None:
    model_ops = {_domain(o.domain): o.version for o in ctx.model.opset_import}
    for f in ctx.model.functions:
        fops = {_domain(o.domain): o.version for o in f.opset_import}
        for n in f.node:
            d = _domain(n.domain)
            fv, mv = fops.get(d), model_ops.get(d)
            if fv is None or mv is None or fv == mv:
                continue
            a, b = _since(n.op_type, fv, d), _since(n.op_type, mv, d)
            if a is not None and b is not None and a != b:
                ctx.report(
                    "M008",
                    f"function {f.domain}.{f.name} imports {_shown(d)} {fv}, where its {n.op_type} is "
                    f"{n.op_type}-{a}; the model imports {mv}, where it is {n.op_type}-{b}: onnx.checker refuses "
                    "the model",
                    refused_by={"onnx"},
                )
                break


def _since(op: str, version: int, domain: str) -> int | None:
    try:
        return onnx.defs.get_schema(op, version, domain).since_version
    except onnx.defs.SchemaError:
        return None


@check("M009")
def unused_function(ctx: LintContext) -> None:
    called = {(_domain(n.domain), n.op_type) for n in _all_nodes(ctx.model)}
    for f in ctx.model.functions:
        if (_domain(f.domain), f.name) not in called:
            ctx.report("M009", f"function {f.domain}.{f.name} is called by no node")


# ---------------------------------------------------------------------------------- graphs


@check("M010")
def empty_graph_name(ctx: LintContext) -> None:
    for g in _graphs(ctx.model):
        if not g.graph.name:
            refused = {"onnx", "onnxruntime"} if g.depth else {"onnx"}
            what = "the main graph" if not g.depth else f"subgraph {g.path}"
            ctx.report(
                "M010",
                f"{what} has no name: {' and '.join(sorted(refused))} refuse the model",
                graph=g.path,
                refused_by=refused,
            )


@check("M011")
def duplicate_graph_input(ctx: LintContext) -> None:
    for g in _graphs(ctx.model):
        for name, n in Counter(i.name for i in g.graph.input if i.name).items():
            if n > 1:
                ctx.report(
                    "M011",
                    f"graph input {name!r} is listed {n} times: runtimes refuse the model",
                    graph=g.path,
                    tensor=name,
                )


@check("M012")
def duplicate_graph_output(ctx: LintContext) -> None:
    for g in _graphs(ctx.model):
        for name, n in Counter(o.name for o in g.graph.output if o.name).items():
            if n > 1:
                ctx.report("M012", f"graph output {name!r} is listed {n} times", graph=g.path, tensor=name)


@check("M013")
def value_defined_twice(ctx: LintContext) -> None:
    for g in _graphs(ctx.model):
        where: dict[str, str] = {i.name: "a graph input" for i in g.graph.input if i.name}
        for t in g.graph.initializer:
            where.setdefault(t.name, "an initializer")
        refs = _refs(ctx, g.path)
        for k, n in enumerate(g.graph.node):
            for o in n.output:
                if not o:
                    continue
                if o in where:
                    ctx.report(
                        "M013",
                        f"output {o!r} is already defined by {where[o]}: onnx.checker and onnxruntime refuse the model",
                        refs[k] if k < len(refs) else None,
                        tensor=o,
                        graph=g.path,
                        refused_by={"onnx", "onnxruntime"},
                    )
                else:
                    where[o] = f"node {n.name or n.op_type} (#{k})"


def _refs(ctx: LintContext, path: str):
    for _, name, refs in ctx.graphs():
        if name == path:
            return refs
    return []


@check("M014")
def subgraph_name_shadowing(ctx: LintContext) -> None:
    for g in _graphs(ctx.model):
        if not g.depth:
            continue
        refs = _refs(ctx, g.path)
        for i in g.graph.input:
            if i.name in g.outer:
                ctx.report(
                    "M014",
                    f"body input {i.name!r} shadows a value of an enclosing graph: OpenVINO refuses the model",
                    graph=g.path,
                    tensor=i.name,
                    refused_by={"openvino"},
                )
        for t in g.graph.initializer:
            if t.name in g.outer:
                ctx.report(
                    "M014",
                    f"body initializer {t.name!r} shadows a value of an enclosing graph: onnx.checker and "
                    "onnxruntime refuse the model",
                    graph=g.path,
                    tensor=t.name,
                    refused_by={"onnx", "onnxruntime"},
                )
        for k, n in enumerate(g.graph.node):
            for o in n.output:
                if o and o in g.outer:
                    ctx.report(
                        "M014",
                        f"output {o!r} shadows a value of an enclosing graph: onnx.checker and onnxruntime "
                        "refuse the model",
                        refs[k] if k < len(refs) else None,
                        graph=g.path,
                        tensor=o,
                        refused_by={"onnx", "onnxruntime"},
                    )


@check("M015")
def empty_initializer_name(ctx: LintContext) -> None:
    for g in _graphs(ctx.model):
        n = sum(1 for t in g.graph.initializer if not t.name)
        if n:
            ctx.report(
                "M015",
                f"{n} initializer{'s' if n > 1 else ''} without a name: onnx.checker refuses the model",
                graph=g.path,
                refused_by={"onnx"},
            )


@check("M016")
def duplicate_initializer(ctx: LintContext) -> None:
    for g in _graphs(ctx.model):
        names = [t.name for t in g.graph.initializer] + [t.values.name for t in g.graph.sparse_initializer]
        for name, n in Counter(x for x in names if x).items():
            if n > 1:
                ctx.report(
                    "M016",
                    f"{n} initializers are named {name!r}: onnx.checker refuses the model",
                    graph=g.path,
                    tensor=name,
                    refused_by={"onnx"},
                )


def _has_type(v: onnx.ValueInfoProto) -> bool:
    return v.HasField("type") and v.type.WhichOneof("value") is not None


@check("M017")
def graph_input_missing_type(ctx: LintContext) -> None:
    for i in ctx.model.graph.input:
        if not _has_type(i):
            ctx.report("M017", f"graph input {i.name!r} has no type: runtimes refuse the model", tensor=i.name)


@check("M018")
def graph_input_missing_shape(ctx: LintContext) -> None:
    for i in ctx.model.graph.input:
        if _has_type(i) and i.type.WhichOneof("value") == "tensor_type" and not i.type.tensor_type.HasField("shape"):
            ctx.report(
                "M018",
                f"graph input {i.name!r} has no shape: onnx.checker and OpenVINO refuse the model",
                tensor=i.name,
                refused_by={"onnx", "openvino"},
                otherwise="info",
            )


@check("M019")
def graph_output_missing_type(ctx: LintContext) -> None:
    for o in ctx.model.graph.output:
        if not _has_type(o):
            ctx.report(
                "M019",
                f"graph output {o.name!r} has no type: onnx.checker refuses the model",
                tensor=o.name,
                refused_by={"onnx"},
                otherwise="info",
            )


@check("M020")
def graph_output_missing_shape(ctx: LintContext) -> None:
    for o in ctx.model.graph.output:
        if _has_type(o) and o.type.WhichOneof("value") == "tensor_type" and not o.type.tensor_type.HasField("shape"):
            ctx.report(
                "M020",
                f"graph output {o.name!r} has no shape: onnx.checker refuses the model",
                tensor=o.name,
                refused_by={"onnx"},
                otherwise="info",
            )


@check("M021")
def undefined_element_type(ctx: LintContext) -> None:
    for g in _graphs(ctx.model):
        for kind, vis in (
            ("graph input", g.graph.input),
            ("graph output", g.graph.output),
            ("value_info", g.graph.value_info),
        ):
            for v in vis:
                if (
                    v.type.WhichOneof("value") == "tensor_type"
                    and v.type.tensor_type.elem_type == onnx.TensorProto.UNDEFINED
                ):
                    refused = ALL if kind == "graph input" else {"onnxruntime"}
                    ctx.report(
                        "M021",
                        f"{kind} {v.name!r} has element type UNDEFINED: {' and '.join(sorted(refused))} "
                        "refuse the model",
                        graph=g.path,
                        tensor=v.name,
                        refused_by=refused,
                    )


# ---------------------------------------------------------------------------------- nodes


@check("M022")
def ref_attribute_outside_function(ctx: LintContext) -> None:
    for ref in ctx.nodes():
        for a in ref.node.attribute:
            if a.ref_attr_name:
                ctx.report(
                    "M022",
                    f"attribute {a.name!r} refers to {a.ref_attr_name!r} of an enclosing function, but this node "
                    "is in a graph: runtimes use an empty value",
                    ref,
                )


#: deprecated (domain, op) that onnxruntime 1.32 still loads (the others it refuses as the checker does)
_ORT_LOADS_DEPRECATED = frozenset({("", "GroupNormalization")})


@check("M023")
def deprecated_op(ctx: LintContext) -> None:
    for ref in ctx.nodes():
        s = ctx.schema(ref.node)
        if s is None or not s.deprecated:
            continue
        d = _domain(ref.node.domain)
        refused = {"onnx"} if (d, ref.node.op_type) in _ORT_LOADS_DEPRECATED else {"onnx", "onnxruntime"}
        ctx.report(
            "M023",
            f"{_shown(d)}.{ref.node.op_type} is deprecated at opset {ctx.opset(d)}: "
            f"{' and '.join(sorted(refused))} refuse the model",
            ref,
            refused_by=refused,
        )


@check("M024")
def experimental_op(ctx: LintContext) -> None:
    for ref in ctx.nodes():
        s = ctx.schema(ref.node)
        if s is not None and s.support_level == onnx.defs.OpSchema.SupportType.EXPERIMENTAL:
            d = _domain(ref.node.domain)
            ctx.report("M024", f"{_shown(d)}.{ref.node.op_type} is experimental at opset {ctx.opset(d)}", ref)


@check("M025")
def unused_node(ctx: LintContext) -> None:
    for g in _graphs(ctx.model):
        live = g.reads | {o.name for o in g.graph.output}
        refs = _refs(ctx, g.path)
        for k, n in enumerate(g.graph.node):
            outs = [o for o in n.output if o]
            if outs and not any(o in live for o in outs):
                ctx.report(
                    "M025",
                    f"no node reads the output{'s' if len(outs) > 1 else ''} of this {n.op_type} "
                    f"({', '.join(map(repr, outs[:4]))}{', ...' if len(outs) > 4 else ''}) and none is a graph output",
                    refs[k] if k < len(refs) else None,
                    graph=g.path,
                )


@check("M026")
def unused_initializer(ctx: LintContext) -> None:
    for g in _graphs(ctx.model):
        live = g.reads | {o.name for o in g.graph.output}
        for t in g.graph.initializer:
            if t.name and t.name not in live:
                ctx.report("M026", f"initializer {t.name!r} is read by no node", graph=g.path, tensor=t.name)


_VALUE_FIELDS = {
    onnx.AttributeProto.FLOAT: "f",
    onnx.AttributeProto.INT: "i",
    onnx.AttributeProto.STRING: "s",
    onnx.AttributeProto.TENSOR: "t",
    onnx.AttributeProto.GRAPH: "g",
    onnx.AttributeProto.SPARSE_TENSOR: "sparse_tensor",
    onnx.AttributeProto.TYPE_PROTO: "tp",
    onnx.AttributeProto.FLOATS: "floats",
    onnx.AttributeProto.INTS: "ints",
    onnx.AttributeProto.STRINGS: "strings",
    onnx.AttributeProto.TENSORS: "tensors",
    onnx.AttributeProto.GRAPHS: "graphs",
    onnx.AttributeProto.SPARSE_TENSORS: "sparse_tensors",
    onnx.AttributeProto.TYPE_PROTOS: "type_protos",
}
_SINGULAR = {"f", "i", "s", "t", "g", "sparse_tensor", "tp"}


def _set_fields(a: onnx.AttributeProto) -> list[str]:
    return [f for f in _VALUE_FIELDS.values() if (a.HasField(f) if f in _SINGULAR else len(getattr(a, f)))]


@check("M027")
def attribute_value_mismatch(ctx: LintContext) -> None:
    for ref in ctx.nodes():
        for a in ref.node.attribute:
            if a.ref_attr_name:
                continue
            fields = _set_fields(a)
            want = _VALUE_FIELDS.get(a.type)
            if len(fields) > 1 or (want is not None and fields and fields != [want]):
                ctx.report(
                    "M027",
                    f"attribute {a.name!r} of type {onnx.AttributeProto.AttributeType.Name(a.type)} holds "
                    f"{', '.join(fields)}: onnx.checker and onnxruntime refuse the model",
                    ref,
                    refused_by={"onnx", "onnxruntime"},
                )


@check("M028")
def empty_value_name(ctx: LintContext) -> None:
    for kind, vis in (("input", ctx.model.graph.input), ("output", ctx.model.graph.output)):
        for k, v in enumerate(vis):
            if not v.name:
                ctx.report(
                    "M028",
                    f"graph {kind} #{k} has no name: onnx.checker refuses the model",
                    refused_by={"onnx"},
                )


@check("M030")
def initializer_not_input_before_ir4(ctx: LintContext) -> None:
    v = ctx.model.ir_version
    if not 1 <= v < 4:
        return
    inputs = {vi.name for vi in ctx.model.graph.input}
    for t in ctx.model.graph.initializer:
        if t.name not in inputs:
            ctx.report(
                "M030",
                f"initializer {t.name!r} is no graph input, which ir_version {v} requires (IR 4 lifted "
                "it): onnx.checker refuses the model",
                refused_by={"onnx"},
            )


@check("M029")
def function_invalid(ctx: LintContext) -> None:
    for f in ctx.model.functions:
        where = f"function {f.domain or '(default domain)'}.{f.name or '(no name)'}"
        problems: list[tuple[str, frozenset[str]]] = []
        if not f.name:
            problems.append(("a function needs a name", ALL))
        if _domain(f.domain) == "":
            problems.append(("a function needs a domain of its own; its calls are taken for ONNX ops", ALL))
        for what, names, refused in (
            ("output", f.output, frozenset({"onnx", "onnxruntime"})),
            ("attribute", [*f.attribute, *(a.name for a in f.attribute_proto)], frozenset({"onnx"})),
        ):
            for name, n in Counter(names).items():
                if n > 1:
                    problems.append((f"{what} {name!r} is listed {n} times", refused))
        defined: set[str] = set()
        for i in f.input:
            if i in defined:
                problems.append((f"input {i!r} is listed twice", ALL))
            defined.add(i)
        for k, n in enumerate(f.node):
            for x in n.input:
                if x and x not in defined:
                    later = any(x in m.output for m in f.node[k + 1 :])
                    problems.append(
                        (
                            f"node #{k} ({n.op_type}) reads {x!r} "
                            + ("before the node that computes it" if later else "which nothing in the body defines"),
                            ALL,
                        )
                    )
            for o in n.output:
                if o and o in defined:
                    problems.append((f"{o!r} is defined twice", ALL))
                defined.add(o)
        for p, refused in problems[:3]:
            who = "runtimes refuse" if refused == ALL else f"{' and '.join(sorted(refused))} refuse"
            ctx.report("M029", f"{where}: {p}: {who} the model", refused_by=refused)
