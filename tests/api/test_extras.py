"""Importing an interop module without its extra says which extra to install (issue 37 item 9)."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    ("module", "dependency", "extra", "distribution"),
    [
        ("shapeinfer.graphsurgeon", "onnx_graphsurgeon", "graphsurgeon", "onnx-graphsurgeon"),
        ("shapeinfer.networkx", "networkx", "networkx", "networkx"),
    ],
)
def test_a_missing_extra_names_the_extra(module, dependency, extra, distribution):
    code = (
        f"import sys; sys.modules[{dependency!r}] = None\n"
        f"try:\n    import {module}\nexcept ModuleNotFoundError as e:\n"
        "    print(type(e).__name__, e.name); print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == f"ModuleNotFoundError {dependency}"
    assert out[1] == (
        f"{module} needs {distribution}, which is not installed: pip install {distribution}"
        f" (or pip install -e '.[{extra}]' in a checkout of shapeinfer)"
    )


def test_a_missing_dependency_of_the_dependency_is_not_blamed_on_the_extra(tmp_path):
    """Only the package itself missing is the extra's message; anything else propagates as is."""
    from shapeinfer.base.extras import require

    (tmp_path / "brokenpkg").mkdir()
    (tmp_path / "brokenpkg" / "__init__.py").write_text("import not_a_module_anywhere\n")
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(ModuleNotFoundError) as info:
            require("brokenpkg", "x", "brokenpkg", "test")
        assert info.value.name == "not_a_module_anywhere"
    finally:
        sys.path.remove(str(tmp_path))
