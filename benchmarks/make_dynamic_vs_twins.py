"""make-dynamic against dynamic twins: is every model it writes equal to the twin at every size?

    python benchmarks/make_dynamic_vs_twins.py DIR

DIR holds the twins of tools/generators/make_sweep_twins.py. For each static export (batch 1
and 2) make-dynamic runs with the twin's axes; a refusal is printed with its reason; a written
model is checked by the onnx checker and run in onnxruntime beside the dynamic twin at its own
size and at batch 1, 3 and 5 (text: (1, 1), (3, 5), (2, 13), (5, 7), the attention mask's rows
masked differently). A written model that fails or differs is UNSOUND; exit 1 if any is.
"""

import json
import sys

import numpy as np
import onnx
import onnxruntime as ort

import shapeinfer
from shapeinfer.passes.make_dynamic import MakeDynamicError

if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
    sys.exit(__doc__)
D = sys.argv[1]
unsound = 0
with open(f"{D}/table.json") as fh:
    table = json.load(fh)


def sess(m):
    return ort.InferenceSession(m if isinstance(m, str) else m.SerializeToString(), providers=["CPUExecutionProvider"])


def feeds(entry, b, s, seed):
    rng = np.random.default_rng(seed)
    out = {}
    for name in entry["inputs"]:
        if name == "images":
            out[name] = rng.standard_normal((b, 3, 64, 64)).astype(np.float32)
        elif "mask" in name:
            a = np.ones((b, s), np.int64)
            for r in range(b):
                k = r % max(s, 1)
                if k:
                    a[r, -k:] = 0
            out[name] = a
        else:
            out[name] = rng.integers(0, 100, (b, s)).astype(np.int64)
    return out


for name, entry in table.items():
    dims = {k: {int(a): v for a, v in ax.items()} for k, ax in entry["dims"].items()}
    twin = sess(f"{D}/{name}.dynamic.onnx")
    for B in (1, 2):
        path = f"{D}/{name}_b{B}.static.onnx"
        try:
            made = shapeinfer.make_dynamic(path, dims=dims)
        except MakeDynamicError as e:
            print(f"{name} b{B}: refused: {str(e)[:160]}")
            continue
        except Exception as e:
            print(f"{name} b{B}: CRASH {type(e).__name__}: {str(e)[:160]}")
            continue
        try:
            onnx.checker.check_model(made)
        except Exception as e:
            print(f"{name} b{B}: CHECKER {str(e)[:120]}")
        s = sess(made)
        bad = []
        text = "images" not in entry["inputs"]
        sizes = [(B, 12), (1, 1), (3, 5), (2, 13), (5, 7)] if text else [(B, 0), (1, 0), (3, 0), (5, 0)]
        for i, (b, n) in enumerate(sizes):
            f = feeds(entry, b, n, i)
            try:
                got = s.run(None, f)[0]
            except Exception as e:
                bad.append(f"{(b, n)} FAILS {str(e)[:80]}")
                continue
            ref = twin.run(None, f)[0]
            if got.shape != ref.shape or not np.allclose(got, ref, rtol=1e-4, atol=1e-4):
                gap = np.abs(got - ref).max() if got.shape == ref.shape else (got.shape, ref.shape)
                bad.append(f"{(b, n)} DIFFERS max {gap}")
        unsound += bool(bad)
        print(
            f"{name} b{B}: made, " + ("equal to the twin at " + str(sizes) if not bad else "UNSOUND " + "; ".join(bad))
        )
sys.exit(1 if unsound else 0)
