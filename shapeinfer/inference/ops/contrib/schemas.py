"""onnxruntime's contrib operator schemas, read from the checked-in table ``schemas.json``.

onnx.defs knows only the ai.onnx and ai.onnx.ml schemas. The table beside this module holds
those of onnxruntime's contrib operators (``com.microsoft``), generated from onnxruntime's
``docs/ContribOperators.md`` by ``tools/gen_contrib_schemas.py`` (its ``source`` field names the
document's version) and checked against an installed onnxruntime's registered schemas in
``tests/inference/ops/test_contrib_schemas.py``. Inference reads it without onnxruntime installed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from onnx import AttributeProto

TABLE = Path(__file__).with_name("schemas.json")


@dataclass(frozen=True)
class Param:
    """A formal input or output: its name, type (a type parameter or a type string) and option."""

    name: str
    type: str
    optional: bool
    variadic: bool
    heterogeneous: bool


@dataclass(frozen=True)
class Schema:
    """One operator version: formal inputs/outputs, attributes and type constraints."""

    domain: str
    op: str
    since_version: int
    inputs: tuple[Param, ...]
    outputs: tuple[Param, ...]
    min_input: int
    max_input: int | None  # None: unbounded (variadic)
    min_output: int
    max_output: int | None
    attributes: dict[str, tuple[int, bool]]  # name -> (AttributeProto type, required)
    type_constraints: dict[str, tuple[str, ...]]
    experimental: bool = False

    @property
    def attr_types(self) -> dict[str, int]:
        """Attribute name -> AttributeProto type."""
        return {name: t for name, (t, _) in self.attributes.items()}


def _schema(entry: dict) -> Schema:
    def params(items: list[dict]) -> tuple[Param, ...]:
        return tuple(Param(p["name"], p["type"], p["optional"], p["variadic"], p["heterogeneous"]) for p in items)

    return Schema(
        domain=entry["domain"],
        op=entry["op"],
        since_version=entry["since_version"],
        inputs=params(entry["inputs"]),
        outputs=params(entry["outputs"]),
        min_input=entry["min_input"],
        max_input=entry["max_input"],
        min_output=entry["min_output"],
        max_output=entry["max_output"],
        attributes={
            name: (int(AttributeProto.AttributeType.Value(a["type"])), a["required"])
            for name, a in entry["attributes"].items()
        },
        type_constraints={k: tuple(v) for k, v in entry["type_constraints"].items()},
        experimental=entry.get("experimental", False),
    )


@lru_cache(maxsize=1)
def _table() -> tuple[str, dict[tuple[str, str], list[Schema]]]:
    data = json.loads(TABLE.read_text())
    by_op: dict[tuple[str, str], list[Schema]] = {}
    for entry in data["ops"]:
        s = _schema(entry)
        by_op.setdefault((s.domain, s.op), []).append(s)
    for versions in by_op.values():
        versions.sort(key=lambda s: s.since_version)
    return data["source"], by_op


def source() -> str:
    """Which onnxruntime document the table was generated from."""
    return _table()[0]


def lookup(domain: str, op_type: str, version: int) -> Schema | None:
    """The schema of ``domain``.``op_type`` in force at opset ``version`` of its domain, or None."""
    found = None
    for s in _table()[1].get((domain, op_type), ()):
        if s.since_version <= version:
            found = s
    return found


def all_schemas() -> list[Schema]:
    """Every schema in the table, by (domain, op, since_version)."""
    return [s for versions in _table()[1].values() for s in versions]
