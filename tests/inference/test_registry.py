"""The rule registry's lazy loading: the generated index agrees with the registrations, a lookup
gives the same rules whether the families are imported lazily or all at once, and inference
imports only the families a model uses."""

from __future__ import annotations

import json
import subprocess
import sys

from shapeinfer.inference import op_registry as registry
from shapeinfer.inference.ops.rule_index import RULE_MODULES


def test_index_matches_the_registrations():
    """rule_index.py is what the register calls say (regenerate: python tools/gen_rule_index.py)."""
    registry.load_all()
    found = registry.sources()
    assert found == RULE_MODULES, "shapeinfer/inference/ops/rule_index.py is stale: run python tools/gen_rule_index.py"
    assert len(found) > 250
    # every family module that registers something is in the index
    assert {m for mods in found.values() for m in mods} >= {"elementwise", "reshape", "contrib.attention", "rnn"}


_LAZY_VS_EAGER = """
import json, sys
from shapeinfer.inference import op_registry as registry
from shapeinfer.inference.ops.rule_index import RULE_MODULES

def fresh():
    for name in [m for m in sys.modules if m.startswith("shapeinfer.inference.ops.") and m != registry.INDEX_MODULE]:
        del sys.modules[name]
    registry._RULES.clear(); registry._SOURCES.clear(); registry._COMPLETE.clear()

def entries(key):
    return [[since, fn.__module__, fn.__qualname__] for since, fn in registry._RULES.get(key, [])]

lazy = {}
for key in RULE_MODULES:
    fresh()
    found = registry.lookup(key[0], key[1], 10**6)
    lazy[repr(key)] = [entries(key), found is registry._RULES[key][-1][1]]
fresh()
registry.load_all()
eager = {repr(key): [entries(key), True] for key in registry._RULES}
print(json.dumps({"lazy": lazy, "eager": eager}))
"""


def test_lazy_lookup_gives_what_importing_everything_gives():
    """For each op, in a fresh registry: importing only the families the index names registers
    exactly the rules (each since-version, same function) that importing every family does."""
    r = subprocess.run([sys.executable, "-c", _LAZY_VS_EAGER], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["lazy"] == out["eager"]


_IMPORTS = """
import json, sys
import onnx
from onnx import TensorProto, helper
import shapeinfer.inference.engine
before = sorted(m for m in sys.modules if m.startswith("shapeinfer.inference.ops."))
g = helper.make_graph(
    [helper.make_node("Add", ["x", "x"], ["y"]), helper.make_node("Shape", ["y"], ["s"])],
    "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
    [helper.make_tensor_value_info("s", TensorProto.INT64, None)],
)
r = shapeinfer.inference.engine.infer(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
after = sorted(m for m in sys.modules if m.startswith("shapeinfer.inference.ops."))
print(json.dumps({"before": before, "after": after, "s": [str(d) for d in r.facts["s"].value]}))
"""


def test_inference_imports_only_the_families_the_model_uses():
    r = subprocess.run([sys.executable, "-c", _IMPORTS], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert "shapeinfer.inference.ops.elementwise" not in out["before"]
    assert {"shapeinfer.inference.ops.elementwise", "shapeinfer.inference.ops.shape"} <= set(out["after"])
    unused_families = ("rnn", "signal", "sequence", "contrib.attention", "contrib.quantization", "resize")
    for unused in (*unused_families, "contrib.schemas"):
        assert f"shapeinfer.inference.ops.{unused}" not in out["after"]
    assert out["s"] == ["n", "3"]  # the rules ran: Shape's value is known


def test_registered_lists_every_family():
    """registered() imports every family first, so it never depends on what ran before."""
    rows = registry.registered()
    keys = {(d, op) for d, op, _ in rows}
    assert keys == set(RULE_MODULES)
