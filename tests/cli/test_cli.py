"""The `shapeinfer MODEL` command, run as users run it: a subprocess of the installed script."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import onnx
import pytest
from support.common import load_stripped, model_path, run_cli

run = run_cli


def test_help_and_version():
    r = run("--help")
    assert r.returncode == 0
    assert "shapeinfer MODEL" in r.stdout and "Exit codes" in r.stdout
    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith("shapeinfer ")
    r = run("infer", "--help")
    assert r.returncode == 0 and "--input-shape" in r.stdout and "--bind" in r.stdout


def test_infer_prints_inputs_outputs_and_summary():
    r = run(str(model_path("bert_ts")))
    assert r.returncode == 0, r.stderr
    assert "input_ids" in r.stdout and "[batch, seq]" in r.stdout
    assert "[batch, seq, 64]" in r.stdout
    assert "100.0% fully resolved" in r.stdout and "0 fresh symbols" in r.stdout


def test_output_model_has_value_info(tmp_path):
    src = tmp_path / "m.onnx"
    onnx.save(load_stripped("llama_dynamo"), str(src))
    out = tmp_path / "o.onnx"
    r = run(str(src), "-o", str(out))
    assert r.returncode == 0, r.stderr
    m = onnx.load(str(out))
    names = {vi.name for vi in m.graph.value_info}
    produced = {o for n in m.graph.node for o in n.output if o} - {o.name for o in m.graph.output}
    assert names == produced
    dims = [d.dim_param or d.dim_value for d in m.graph.output[0].type.tensor_type.shape.dim]
    assert dims == ["batch", "seq", 1000]
    # weights untouched
    orig = onnx.load(str(src))
    assert [t.SerializeToString() for t in m.graph.initializer] == [
        t.SerializeToString() for t in orig.graph.initializer
    ]


def test_json_output():
    r = run(str(model_path("vit_dynamo")), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["inputs"][0]["shape"] == ["batch", 3, 64, 64]
    assert doc["outputs"][0]["shape"] == ["batch", 17, 64]
    assert doc["summary"]["resolved_pct"] == 100.0
    assert doc["symbols"]["inputs"] == ["batch"]
    assert len(doc["tensors"]) > 300


def test_input_shape_and_bind():
    r = run(str(model_path("gpt2_ts")), "--input-shape", "input_ids=1,seq", "--input-shape", "attention_mask=1,seq")
    assert r.returncode == 0, r.stderr
    assert "[1, seq, 1000]" in r.stdout
    r = run(str(model_path("gpt2_ts")), "--bind", "batch=2,seq=7", "--json")
    doc = json.loads(r.stdout)
    assert doc["outputs"][0]["shape"] == [2, 7, 1000]


def test_a_binding_the_model_cannot_run_at_prints_no_conditions():
    """Past BERT's 512 positions the model cannot run: G015 says so, and no "holds when" line
    lists conditions on the symbols the failed run invented."""
    r = run(str(model_path("bert_ts")), "--bind", "seq=600")
    assert "G015" in r.stdout and "seq <= 512" in r.stdout
    assert "holds when" not in r.stdout
    assert "holds when: seq <= 512" in run(str(model_path("bert_ts"))).stdout


@pytest.mark.parametrize(
    "content,needle",
    [
        (None, "no such file"),
        (b"", "empty file"),
        (b"\x00\x01\x02garbage" * 50, "not an ONNX model"),
        (b"hello, this is text\n", "not an ONNX model"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path, content, needle):
    p = tmp_path / "bad.onnx"
    if content is not None:
        p.write_bytes(content)
    r = run(str(p))
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and str(p) in lines[0]


def test_directory_and_bad_flags(tmp_path):
    r = run(str(tmp_path))
    assert r.returncode == 2 and "directory" in r.stderr and "Traceback" not in r.stderr
    r = run(str(model_path("bert_ts")), "--bind", "batch=two")
    assert r.returncode == 2 and "integer" in r.stderr
    r = run(str(model_path("bert_ts")), "--input-shape", "nosuch=1,2")
    assert r.returncode == 2 and "nosuch" in r.stderr and "Traceback" not in r.stderr


def test_output_equal_to_input_is_refused(tmp_path):
    src = tmp_path / "m.onnx"
    src.write_bytes(model_path("bert_ts").read_bytes())
    before = src.read_bytes()
    r = run(str(src), "-o", str(src))
    assert r.returncode == 2 and "--in-place" in r.stderr
    assert src.read_bytes() == before
    r = run(str(src), "-o", str(src), "--in-place")
    assert r.returncode == 0
    assert len(onnx.load(str(src)).graph.value_info) > 300
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".shapeinfer-")]


def test_timeout_is_a_clear_error(tmp_path):
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    nodes = [helper.make_node("Add", [f"x{i}", "one"], [f"x{i + 1}"]) for i in range(20000)]
    g = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x0", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("x20000", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([1.0], np.float32), "one")],
    )
    p = tmp_path / "chain.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(p))
    r = run(str(p), "--timeout", "0.001")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.strip() == f"shapeinfer: error: {p}: gave up after 0.001s (--timeout)"
    r = run(str(p), "--timeout", "300")
    assert r.returncode == 0 and "[n]" in r.stdout


def test_unreadable_file_is_one_line(tmp_path, monkeypatch):
    """A file the user may not read (simulated: the tests run as root, who reads anything)."""
    from click.testing import CliRunner

    from shapeinfer.cli.main import main

    p = tmp_path / "secret.onnx"
    p.write_bytes(model_path("bert_ts").read_bytes())
    real_open = os.open

    def deny(file, *a, **k):
        if str(file) == str(p):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *a, **k)

    monkeypatch.setattr(os, "open", deny)
    r = CliRunner().invoke(main, [str(p)])
    assert r.exit_code == 2
    assert r.output.strip() == f"shapeinfer: error: {p}: cannot read: Permission denied"


# ------------------------------------------------------------------ flags a newcomer mistypes


def one_error_line(r: subprocess.CompletedProcess) -> str:
    """The single stderr line of a refused run (exit 2, no traceback, nothing on stdout)."""
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("shapeinfer: error: ")
    return lines[0]


def test_bind_must_name_an_input_symbol_once_with_a_positive_value():
    m = str(model_path("gpt2_ts"))
    line = one_error_line(run(m, "--bind", "bacth=1"))
    assert "--bind bacth" in line and "did you mean 'batch'?" in line and "symbols: batch, seq" in line
    line = one_error_line(run(m, "--bind", "batch=1", "--bind", "batch=2"))
    assert line.endswith("--bind batch is given twice, with 1 and 2")
    line = one_error_line(run(m, "--bind", "batch=0"))
    assert "--bind batch=0" in line and "at least 1" in line
    line = one_error_line(run(m, "--bind", "batch=" + "9" * 55))
    assert "out of range (at most 2**63-1)" in line
    # the same symbol twice with the same value is fine, and binds
    r = run(m, "--bind", "batch=2", "--bind", "batch=2,seq=3", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["outputs"][0]["shape"] == [2, 3, 1000]


def test_bind_checks_in_the_python_api():
    import shapeinfer
    from shapeinfer.api import BindError

    with pytest.raises(BindError, match="did you mean 'batch'"):
        shapeinfer.infer(str(model_path("gpt2_ts")), bind={"bacth": 1})
    with pytest.raises(ValueError, match="at least 1"):
        shapeinfer.infer_shapes(str(model_path("gpt2_ts")), bind={"batch": 0})


@pytest.mark.parametrize(
    "value,needle",
    [
        ("input_ids=[1,seq]", "without brackets"),
        ("input_ids=1x128", "'1x128' is not an int or a dims expression"),
        ("input_ids=1,seq]", "'seq]' is not an int or a dims expression"),
        ("input_ids=1,-3", "cannot be negative"),
        ("input_ids=1," + "*".join(["(a+b+c+d+e+f+g+h+i+j)"] * 12), "more complex than the expression cap"),
    ],
)
def test_input_shape_junk_is_refused(value, needle):
    line = one_error_line(run(str(model_path("gpt2_ts")), "--input-shape", value))
    assert needle in line and "--input-shape input_ids" in line


def test_input_shape_takes_expressions():
    r = run(
        str(model_path("gpt2_ts")),
        "--input-shape",
        "input_ids=2*b,seq + 1",
        "--input-shape",
        "attention_mask=2*b,seq + 1",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["outputs"][0]["shape"] == ["2*b", "seq + 1", 1000]


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--timeout", "0"], "invalid value for --timeout: 0 is not a number of seconds above 0"),
        (["--timeout", "nan"], "invalid value for --timeout: nan is not"),
        (["optimize", "{m}", "--target-opset", "abc"], "invalid value for --target-opset: 'abc' is not an opset"),
        (["lint", "-j", "-1", "{m}"], "invalid value for -j / --jobs: -1 is not a number of workers"),
        (["lint", "--format", "bogus", "{m}"], "invalid value for --format: 'bogus' is not one of"),
        (["verify", "{m}", "--seed", "-3"], "invalid value for --seed: -3"),
        (["--bnd", "x=1"], "no such option '--bnd' (did you mean '--bind'?)"),
        (["optimze", "{m}"], "unknown command 'optimze' (did you mean 'optimize'?)"),
        (["lnt", "{m}"], "unknown command 'lnt' (did you mean 'lint'?)"),
        (
            ["check", "{m}"],
            "unknown command 'check' (commands: diff, explain, infer, lint, make-dynamic, optimize, profile, verify)",
        ),
        (["optimize", "{m}", "--passes", "fold-shape"], "unknown pass 'fold-shape' (did you mean 'fold-shapes'?)"),
        (["optimize", "{m}", "--bind", "bacth=1"], "did you mean 'batch'?"),
    ],
)
def test_usage_errors_are_one_line_naming_flag_and_value(args, needle):
    m = str(model_path("bert_ts"))
    if "{m}" not in args:
        args = [m, *args]
    line = one_error_line(run(*[m if a == "{m}" else a for a in args]))
    assert needle in line, line


def test_top_level_help_shows_whole_command_descriptions():
    r = run("--help")
    assert r.returncode == 0
    commands = r.stdout.split("Commands:")[1]
    assert "..." not in commands
    for name in ("infer", "lint", "optimize", "verify"):
        assert f"  {name} " in commands
    assert "NO_COLOR" in r.stdout


def test_version_and_help_import_nothing_heavy():
    code = (
        "import sys\nfrom shapeinfer.cli.main import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in ('onnx', 'numpy', 'shapeinfer.inference.engine') if m in sys.modules)\n"
        "print('HEAVY', heavy)\n"
    )
    for args in (["--version"], ["--help"], ["lint", "--help"]):
        r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60)
        assert "HEAVY []" in r.stdout, (args, r.stdout, r.stderr)


_ENV_PROBE = """
import os, sys
from shapeinfer.cli import main as cli
inner = cli.main.main
def probe(*a, **k):
    seen = (os.environ.get("OPENBLAS_NUM_THREADS"), "numpy" in sys.modules)
    try:
        return inner(*a, **k)
    finally:
        tasks = len(os.listdir("/proc/self/task"))
        print("PROBE", *seen, "numpy" in sys.modules, tasks, flush=True)
cli.main.main = probe
sys.argv = ["shapeinfer", *sys.argv[1:]]
cli.entry()
"""


def test_console_script_sets_openblas_threads_unless_the_user_did(tmp_path):
    """The console script defaults OPENBLAS_NUM_THREADS to 1 before numpy is imported (numpy's
    OpenBLAS would otherwise start a thread per core at import); a user's value is kept, and
    importing or using the library changes nothing."""
    model = str(model_path("bert_ts"))
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    args = [sys.executable, "-c", _ENV_PROBE, model, "-o", str(tmp_path / "o.onnx")]
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    # set before numpy was imported; numpy was imported by the command; no OpenBLAS workers
    assert "PROBE 1 False True 1" in r.stdout, r.stdout
    r = subprocess.run(args, capture_output=True, text=True, env={**env, "OPENBLAS_NUM_THREADS": "2"}, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "PROBE 2 False True" in r.stdout, r.stdout
    # the library: importing the cli module or running inference leaves the environment alone
    code = (
        "import os, shapeinfer, shapeinfer.cli\n"
        f"shapeinfer.infer({model!r})\n"
        "print('ENV', os.environ.get('OPENBLAS_NUM_THREADS'))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert "ENV None" in r.stdout, (r.stdout, r.stderr)


def test_fail_on_gates_ci(tmp_path):
    from onnx import TensorProto, helper

    # bert_ts: 2 warnings (G003), no error
    m = str(model_path("bert_ts"))
    assert run(m).returncode == 0
    assert run(m, "--fail-on", "error").returncode == 0
    r = run(m, "--fail-on", "warning")
    assert r.returncode == 1 and "2 warning" in r.stdout
    # an undefined input is an error-level diagnostic (G005)
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "ghost"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    p = tmp_path / "bad.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(p))
    assert run(str(p)).returncode == 0
    r = run(str(p), "--fail-on", "error")
    assert r.returncode == 1 and "G005" in r.stdout


def test_all_lists_every_tensor_aligned_and_filter_narrows_it():
    m = str(model_path("bert_ts"))
    doc = json.loads(run(m, "--json").stdout)
    r = run(m, "--all")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    start = lines.index("tensors:") + 1
    head, rows = lines[start], lines[start + 1 : start + 1 + len(doc["tensors"])]
    assert head.split() == ["tensor", "dtype", "dims", "op", "node"]
    assert lines[start + 1 + len(doc["tensors"])] == f"{len(doc['tensors'])} tensors listed"
    col = head.index("dtype")
    by_name = {}
    for row in rows:
        name = row[:col].strip()
        assert row[col - 2 : col] == "  "  # aligned columns
        by_name[name] = row
    assert set(by_name) == set(doc["tensors"])
    for name, t in doc["tensors"].items():
        dims = "[" + ", ".join(str(d) for d in t["shape"]) + "]"
        assert f" {t['dtype']} " in by_name[name] and dims in by_name[name]
    assert "initializer" in by_name["m.embeddings.word_embeddings.weight"]
    assert by_name["input_ids"].split()[-1] == "input"

    model = onnx.load(m)
    reshapes = {o for n in model.graph.node if n.op_type == "Reshape" for o in n.output}
    r = run(m, "--filter", "Reshape")
    table = r.stdout.split("tensors:\n")[1].split(" tensors listed")[0].splitlines()[1:-1]
    listed = {ln.split()[0] for ln in table}
    named = {o for n in model.graph.node if "Reshape" in n.name for o in n.output}
    assert reshapes <= listed and listed == reshapes | named | {t for t in doc["tensors"] if "Reshape" in t}
    # a glob matches whole names; --json keeps only the matching tensors
    r = run(m, "--filter", "*layer.0/attention/self/Reshape_3*", "--json")
    assert list(json.loads(r.stdout)["tensors"]) == ["/m/encoder/layer.0/attention/self/Reshape_3_output_0"]
    assert json.loads(r.stdout)["tensors"]["/m/encoder/layer.0/attention/self/Reshape_3_output_0"]["shape"] == [
        "batch",
        "seq",
        64,
    ]


def test_result_dims_of_an_unknown_tensor_raises():
    import shapeinfer

    r = shapeinfer.infer(str(model_path("bert_ts")))
    assert r.dims("out")[2] == 64
    with pytest.raises(KeyError, match="nosuch"):
        r.dims("nosuch")


def test_readme_python_example_runs_as_written():
    from support.common import ROOT

    text = (ROOT / "README.md").read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "(1, Expr('seq'), 64)" in r.stdout


def test_json_has_the_subgraph_tensors_that_all_lists():
    """Issue 37 item 1: --all listed every tensor of an If's branches, --json only the main
    graph's; --json's subgraph_tensors has them, keyed by the --all table's graph column, and
    --filter narrows both alike."""
    from pathlib import Path

    merged = str(Path(__file__).resolve().parents[1] / "models" / "optimum" / "gpt2_tiny_merged.onnx")
    doc = json.loads(run_cli(merged, "--json").stdout)
    listed = run_cli(merged, "--all").stdout.splitlines()
    n_listed = next(int(line.split()[0]) for line in listed if line.endswith(" tensors listed"))
    in_json = len(doc["tensors"]) + sum(len(t) for t in doc["subgraph_tensors"].values())
    assert doc["subgraph_tensors"] and n_listed == in_json, (n_listed, in_json)
    rows = [line.split()[0] for line in listed if line.startswith("  main/")]
    assert set(rows) == set(doc["subgraph_tensors"])
    narrowed = json.loads(run_cli(merged, "--json", "--filter", "*MatMul*").stdout)
    assert narrowed["subgraph_tensors"] and all(
        "MatMul" in name or "MatMul" in t["producer"].get("node", "") + t["producer"]["op"]
        for tensors in narrowed["subgraph_tensors"].values()
        for name, t in tensors.items()
    )


def test_a_sparse_initializer_is_listed_as_an_initializer(tmp_path):
    """`-a` showed no producer for a sparse initializer (an empty op column) and `--json` gave
    it no `producer`; dense and sparse initializers are both "initializer"."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    sparse = helper.make_sparse_tensor(
        numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "w"),
        numpy_helper.from_array(np.array([1, 5], np.int64), "w_idx"),
        [2, 4],
    )
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["z"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
    )
    g.sparse_initializer.append(sparse)
    path = tmp_path / "sparse.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    r = run(str(path), "-a")
    assert r.returncode == 0
    assert [line.split() for line in r.stdout.splitlines() if line.split()[:1] == ["w"]] == [
        ["w", "float", "[2,", "4]", "initializer"]
    ]
    doc = json.loads(run(str(path), "--json").stdout)
    assert doc["tensors"]["w"]["producer"] == {"op": "initializer"}
