"""The package's layers (docs/architecture.md): which layer a module of ``shapeinfer`` belongs to.

Shared by the layering test (``tests/test_layers.py``: imports go only downward) and
``benchmarks/layer_walk.py`` (how often a run calls back down into the protobuf layer).
"""

from __future__ import annotations

#: (rank, layer, module prefixes); a module belongs to the layer of its longest matching prefix.
#: Layers of the same rank are siblings: neither may import the other.
LAYERS = [
    (0, "base", ["shapeinfer.base"]),
    (1, "symbolic", ["shapeinfer.symbolic"]),
    (2, "io", ["shapeinfer.io"]),
    # the model as nodes and values with links: what the passes edit (read and written through io)
    (3, "ir", ["shapeinfer.ir"]),
    (4, "inference", ["shapeinfer.inference"]),
    (5, "passes", ["shapeinfer.passes"]),
    # one model from load to write, for every front end above it (issue 33)
    (6, "document", ["shapeinfer.document"]),
    (7, "analysis", ["shapeinfer.analysis"]),
    (7, "lint", ["shapeinfer.lint"]),
    (
        8,
        "api",
        [
            "shapeinfer",
            "shapeinfer.api",
            "shapeinfer.graphsurgeon",
            "shapeinfer.networkx",
            "shapeinfer.compat",
        ],
    ),
    (9, "cli", ["shapeinfer.cli", "shapeinfer.__main__"]),
]


def layer_of(mod: str) -> tuple[int, str]:
    best = None
    for rank, name, prefixes in LAYERS:
        for pre in prefixes:
            if (mod == pre or mod.startswith(pre + ".")) and (best is None or len(pre) > best[0]):
                best = (len(pre), rank, name)
    assert best is not None, f"{mod} is in no layer: add it to LAYERS"
    return best[1], best[2]
