"""Fresh symbols in onnx's and onnxruntime's spelling.

Both originals name a dim they cannot determine ``unk__<n>``; shapeinfer names it ``unk_<n>``.
Scripts written against the originals look for the ``unk__`` prefix to find such dims, so the
drop-ins write shapeinfer's fresh symbols that way: numbered in shapeinfer's order, skipping any
``unk__<n>`` the model already uses (as onnx's symbol table does), inside expressions too
(``unk_0 + 3`` becomes ``unk__0 + 3``). Graph inputs are never touched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import onnx

from shapeinfer.io.onnxio import graphs_within, type_dims

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _value_infos(model: onnx.ModelProto, with_inputs: bool) -> Iterable[onnx.ValueInfoProto]:
    for g in graphs_within(model.graph):
        yield from g.value_info
        yield from g.output
        if with_inputs:
            yield from g.input


def spell_fresh_as_onnx(model: onnx.ModelProto, fresh: Iterable[str]) -> None:
    """Rename, in place, the fresh symbols ``fresh`` in ``model``'s value_info and graph outputs
    (every graph) to ``unk__<n>``, numbered in the order given, past the model's own names."""
    fresh = list(dict.fromkeys(fresh))
    if not fresh:
        return
    taken = set()
    for vi in _value_infos(model, with_inputs=True):
        for d in type_dims(vi.type):
            if d.dim_param:
                taken.update(_TOKEN.findall(d.dim_param))
    mapping: dict[str, str] = {}
    n = 0
    for name in fresh:
        if name not in taken:
            continue  # not written anywhere
        while f"unk__{n}" in taken:
            n += 1
        mapping[name] = f"unk__{n}"
        n += 1
    if not mapping:
        return
    for vi in _value_infos(model, with_inputs=False):
        for d in type_dims(vi.type):
            if d.dim_param:
                d.dim_param = _TOKEN.sub(lambda m: mapping.get(m.group(0), m.group(0)), d.dim_param)
