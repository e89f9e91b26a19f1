"""Make the scikit-learn fixtures in tests/models/sklearn/ (a few KB each) with skl2onnx.

    pip install skl2onnx scikit-learn && python tools/generators/make_sklearn_models.py

Classifiers as skl2onnx converts them (ai.onnx.ml ops ending in ZipMap, whose output is a
``seq(map(int64|string, tensor(float)))``) and a text pipeline (com.microsoft Tokenizer,
StringNormalizer, TfIdfVectorizer). The StringNormalizer's locale is set to "C": onnxruntime
refuses ``en_US.UTF-8`` on machines without that locale installed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from skl2onnx import convert_sklearn, to_onnx
from skl2onnx.common.data_types import StringTensorType
from sklearn.ensemble import RandomForestClassifier
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

OUT = Path(__file__).resolve().parents[2] / "tests" / "models" / "sklearn"
OPSETS = {"": 17, "ai.onnx.ml": 3}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    x = rng.random((40, 4)).astype(np.float32)
    y = (x[:, 0] > 0.5).astype(np.int64) + (x[:, 1] > 0.5)
    models = {
        "logreg_zipmap": (make_pipeline(StandardScaler(), LogisticRegression()), y),
        "logreg_string_labels_zipmap": (LogisticRegression(), np.array(["a", "b", "c"])[y]),
        "forest_zipmap": (RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0), y),
    }
    for name, (est, labels) in models.items():
        est.fit(x, labels)
        onnx.save(to_onnx(est, x[:1], target_opset=OPSETS), OUT / f"{name}.onnx")
    texts = np.array(["the cat sat", "a dog ran", "the dog sat on a mat", "cats and dogs"] * 10)
    est = make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(texts, y)
    m = convert_sklearn(est, initial_types=[("text", StringTensorType([None, 1]))], target_opset=OPSETS)
    for n in m.graph.node:
        if n.op_type == "StringNormalizer":
            kept = [a for a in n.attribute if a.name != "locale"]
            del n.attribute[:]
            n.attribute.extend([*kept, onnx.helper.make_attribute("locale", "C")])
    onnx.save(m, OUT / "tfidf_tokenizer.onnx")


if __name__ == "__main__":
    main()
