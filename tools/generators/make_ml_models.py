"""Make the ai.onnx.ml fixtures in tests/models/ml/ (a few KB each): scikit-learn estimators and
pipelines exported by skl2onnx, LightGBM and XGBoost models exported by onnxmltools, and
hand-built models for the ai.onnx.ml ops no exporter here writes (CastMap, CategoryMapper,
FeatureVectorizer, LabelEncoder 1/2/4, TreeEnsemble 5, SVMClassifier in linear mode, ...).

    python -m venv ML_VENV
    ML_VENV/bin/pip install skl2onnx onnxmltools lightgbm xgboost scikit-learn onnx onnxruntime
    ML_VENV/bin/python tools/generators/make_ml_models.py

Every model is trained on random data with tiny sizes (trees of depth 3, 3 estimators).
Classifiers come twice, with skl2onnx's ZipMap (``*_zipmap``: a ``seq(map(int64|string,
float))`` of probabilities) and without (``options={'zipmap': False}``: a ``[N, n_classes]``
float tensor). The batch dim of a model without ZipMap is the symbol ``N``; a ZipMap model's
keeps the unnamed dim skl2onnx writes. The graph inputs of every model are what
tests/inference/ops/test_ops_ml.py feeds: float features in ``[-2, 2)``, int64 categories in
``{0, 1, 2}``, string categories in ``{"a", "b", "c"}``, a map ``{"a": 1.0, "b": 2.0, "c": 3.0}``
or ``{0: 1.0, 1: 2.0, 2: 3.0}``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

OUT = Path(__file__).resolve().parents[2] / "tests" / "models" / "ml"
OPSETS = {"": 17, "ai.onnx.ml": 3}


def _name_batch(m: onnx.ModelProto, symbol: str = "N") -> None:
    """Name the unnamed first dim of every tensor graph input and output ``symbol``."""
    for vi in [*m.graph.input, *m.graph.output]:
        tt = vi.type.tensor_type
        if vi.type.WhichOneof("value") != "tensor_type" or not tt.HasField("shape") or not tt.shape.dim:
            continue
        d = tt.shape.dim[0]
        if not d.HasField("dim_value") and not d.dim_param:
            d.dim_param = symbol


def _clean_opsets(m: onnx.ModelProto) -> None:
    """One import per domain (skl2onnx may write the default domain twice), in domain order."""
    seen: dict[str, int] = {}
    for o in m.opset_import:
        seen[o.domain] = max(seen.get(o.domain, 0), o.version)
    del m.opset_import[:]
    for d, v in sorted(seen.items()):
        m.opset_import.add(domain=d, version=v)


def _ints_not_bools() -> None:
    """skl2onnx 1.20 writes HistGradientBoosting's ``nodes_missing_value_tracks_true`` as Python
    bools, which protobuf 6 refuses in an ``ints`` field: make_attribute gets them as ints."""
    original = helper.make_attribute
    if getattr(original, "ints_not_bools", False):
        return

    def make_attribute(key, value, *args, **kwargs):
        if isinstance(value, (list, tuple)) and any(isinstance(v, (bool, np.bool_)) for v in value):
            value = [int(v) for v in value]
        return original(key, value, *args, **kwargs)

    make_attribute.ints_not_bools = True
    helper.make_attribute = make_attribute


def sklearn_models() -> dict[str, onnx.ModelProto]:
    """skl2onnx exports of the common estimators and pipelines."""
    _ints_not_bools()
    from skl2onnx import convert_sklearn
    from skl2onnx.common.data_types import (
        DictionaryType,
        FloatTensorType,
        Int64TensorType,
        StringTensorType,
    )
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        ExtraTreesRegressor,
        GradientBoostingClassifier,
        GradientBoostingRegressor,
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
    )
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
    from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import (
        Binarizer,
        LabelEncoder,
        MinMaxScaler,
        Normalizer,
        OneHotEncoder,
        StandardScaler,
    )
    from sklearn.svm import SVC, SVR, LinearSVC
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    rng = np.random.default_rng(0)
    x = (rng.random((40, 4)) * 4 - 2).astype(np.float32)
    y2 = (x[:, 0] > 0).astype(np.int64)
    y3 = y2 + (x[:, 1] > 0)
    yr = (x @ np.array([1.0, -2.0, 0.5, 3.0]) + rng.standard_normal(40) * 0.1).astype(np.float32)
    yr2 = np.stack([yr, -yr], axis=1)
    small = {"n_estimators": 3, "max_depth": 3, "random_state": 0}
    classifiers = {
        "rf": lambda: RandomForestClassifier(**small),
        "et": lambda: ExtraTreesClassifier(**small),
        "gb": lambda: GradientBoostingClassifier(**small),
        "hgb": lambda: HistGradientBoostingClassifier(max_iter=3, max_depth=3, random_state=0),
        "dt": lambda: DecisionTreeClassifier(max_depth=3, random_state=0),
        "logreg": lambda: LogisticRegression(),
        "linearsvc": lambda: LinearSVC(),
        "svc": lambda: SVC(),
        "svc_proba": lambda: SVC(probability=True, random_state=0),
        "knn": lambda: KNeighborsClassifier(n_neighbors=3),
    }
    regressors = {
        "rf_reg": RandomForestRegressor(**small),
        "et_reg": ExtraTreesRegressor(**small),
        "gb_reg": GradientBoostingRegressor(**small),
        "hgb_reg": HistGradientBoostingRegressor(max_iter=3, max_depth=3, random_state=0),
        "dt_reg": DecisionTreeRegressor(max_depth=3, random_state=0),
        "svr": SVR(),
        "knn_reg": KNeighborsRegressor(n_neighbors=3),
        "ridge": Ridge(),
        "linreg": LinearRegression(),
    }
    features = [("X", FloatTensorType([None, 4]))]
    out: dict[str, onnx.ModelProto] = {}

    def convert(name, est, types=features, zipmap=None):
        options = None if zipmap is None else {"zipmap": zipmap}
        try:
            m = convert_sklearn(est, initial_types=types, target_opset=OPSETS, options=options)
        except NameError as e:  # LinearSVC's converter has no zipmap option (it writes no ZipMap)
            if "zipmap" not in str(e):
                raise
            m = convert_sklearn(est, initial_types=types, target_opset=OPSETS)
        _clean_opsets(m)
        if name.endswith("_zipmap"):
            if any(n.op_type == "ZipMap" for n in m.graph.node):
                out[name] = m
        else:
            _name_batch(m)
            out[name] = m

    for name, make in classifiers.items():
        for kind, y in (("bin", y2), ("multi", y3)):
            convert(f"{name}_{kind}", make().fit(x, y), zipmap=False)
            convert(f"{name}_{kind}_zipmap", make().fit(x, y))
    labels = np.array(["a", "b", "c"])[y3]
    convert("rf_multi_strlabels", RandomForestClassifier(**small).fit(x, labels), zipmap=False)
    convert("rf_multi_strlabels_zipmap", RandomForestClassifier(**small).fit(x, labels))
    convert("svc_bin_strlabels", SVC().fit(x, np.array(["a", "b"])[y2]), zipmap=False)
    for name, est in regressors.items():
        convert(name, est.fit(x, yr))
    convert("rf_reg_2targets", RandomForestRegressor(**small).fit(x, yr2))
    convert("linreg_2targets", LinearRegression().fit(x, yr2))
    # preprocessing pipelines
    pipes = {
        "pipe_standardscaler_logreg": (make_pipeline(StandardScaler(), LogisticRegression()), y3),
        "pipe_minmaxscaler_ridge": (make_pipeline(MinMaxScaler(), Ridge()), yr),
        "pipe_normalizer_logreg": (make_pipeline(Normalizer(), LogisticRegression()), y2),
        "pipe_binarizer_dt": (make_pipeline(Binarizer(threshold=0.1), DecisionTreeClassifier(max_depth=3)), y3),
        "pipe_imputer_rf_reg": (make_pipeline(SimpleImputer(), RandomForestRegressor(**small)), yr),
    }
    for name, (est, y) in pipes.items():
        convert(name, est.fit(x, y), zipmap=False)
    xi = rng.integers(0, 3, size=(40, 2)).astype(np.int64)
    est = make_pipeline(OneHotEncoder(), LogisticRegression()).fit(xi, y3)
    convert("pipe_onehot_logreg", est, [("X", Int64TensorType([None, 2]))], zipmap=False)
    xs = np.array(["a", "b", "c"])[xi]
    est = make_pipeline(OneHotEncoder(handle_unknown="ignore"), RandomForestClassifier(**small)).fit(xs, y2)
    convert("pipe_onehot_strings_rf", est, [("X", StringTensorType([None, 2]))], zipmap=False)
    convert("labelencoder_int", LabelEncoder().fit(np.array([0, 1, 2, 5])), [("X", Int64TensorType([None]))])
    convert("labelencoder_str", LabelEncoder().fit(np.array(["a", "b", "c"])), [("X", StringTensorType([None]))])
    # a ColumnTransformer over a float block and a string block
    import pandas as pd

    num = np.asarray(x[:, :2])
    cat = np.asarray(xs[:, :1])
    frame = pd.DataFrame({"f0": num[:, 0], "f1": num[:, 1], "c0": cat[:, 0]})
    ct = ColumnTransformer([("num", StandardScaler(), ["f0", "f1"]), ("cat", OneHotEncoder(), ["c0"])])
    est = make_pipeline(ct, LogisticRegression()).fit(frame, y3)
    types = [
        ("f0", FloatTensorType([None, 1])),
        ("f1", FloatTensorType([None, 1])),
        ("c0", StringTensorType([None, 1])),
    ]
    convert("pipe_columntransformer_logreg", est, types, zipmap=False)
    dicts = [{"a": float(r[0]), "b": float(r[1]), "c": float(r[2])} for r in x]
    est = make_pipeline(DictVectorizer(sparse=False), LogisticRegression()).fit(dicts, y3)
    convert(
        "pipe_dictvectorizer_logreg", est, [("X", DictionaryType(StringTensorType([1]), FloatTensorType([1])))], False
    )
    return out


def booster_models() -> dict[str, onnx.ModelProto]:
    """onnxmltools exports of LightGBM and XGBoost models."""
    import lightgbm
    import onnxmltools
    import xgboost
    from onnxmltools.convert.common.data_types import FloatTensorType

    rng = np.random.default_rng(1)
    x = (rng.random((60, 4)) * 4 - 2).astype(np.float32)
    y2 = (x[:, 0] > 0).astype(np.int64)
    y3 = y2 + (x[:, 1] > 0)
    yr = (x @ np.array([1.0, -2.0, 0.5, 3.0])).astype(np.float32)
    types = [("X", FloatTensorType([None, 4]))]
    lgb = {"n_estimators": 3, "max_depth": 3, "num_leaves": 4, "min_child_samples": 2, "verbose": -1}
    xgbp = {"n_estimators": 3, "max_depth": 3}
    out: dict[str, onnx.ModelProto] = {}
    models = {
        "lgbm_bin": (lightgbm.LGBMClassifier(**lgb).fit(x, y2), onnxmltools.convert_lightgbm),
        "lgbm_multi": (lightgbm.LGBMClassifier(**lgb).fit(x, y3), onnxmltools.convert_lightgbm),
        "lgbm_reg": (lightgbm.LGBMRegressor(**lgb).fit(x, yr), onnxmltools.convert_lightgbm),
        "xgb_bin": (xgboost.XGBClassifier(**xgbp).fit(x, y2), onnxmltools.convert_xgboost),
        "xgb_multi": (xgboost.XGBClassifier(**xgbp).fit(x, y3), onnxmltools.convert_xgboost),
        "xgb_reg": (xgboost.XGBRegressor(**xgbp).fit(x, yr), onnxmltools.convert_xgboost),
    }
    for name, (est, convert) in models.items():
        for zipmap in (True, False) if not name.endswith("_reg") else (None,):
            kw = {} if zipmap is None else {"zipmap": zipmap}
            try:
                m = convert(est, initial_types=types, target_opset=15, **kw)
            except TypeError:  # a converter without the zipmap option writes its default only
                if zipmap is False:
                    continue
                m = convert(est, initial_types=types, target_opset=15)
            _clean_opsets(m)
            if zipmap:
                out[f"{name}_zipmap"] = m
            else:
                _name_batch(m)
                out[name] = m
    return out


# ---------------------------------------------------------------------------- hand-built models
ML = "ai.onnx.ml"


def _model(nodes, inputs, outputs, ml: int = 3, default: int = 17, inits=()) -> onnx.ModelProto:
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", default), helper.make_opsetid(ML, ml)])
    m.ir_version = 8 if ml < 4 else 10
    return m


def _t(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def _map_input(name, key, value=TensorProto.FLOAT):
    return helper.make_value_info(name, helper.make_map_type_proto(key, helper.make_tensor_type_proto(value, None)))


def _untyped(name):
    return onnx.ValueInfoProto(name=name)


def hand_models() -> dict[str, onnx.ModelProto]:
    """The ops and attribute variants no exporter above writes, one small model each."""
    F, I64, S, D = TensorProto.FLOAT, TensorProto.INT64, TensorProto.STRING, TensorProto.DOUBLE
    x4 = _t("X", F, ["N", 4])
    out: dict[str, onnx.ModelProto] = {}
    # ArrayFeatureExtractor on a rank-2 and a rank-1 input (onnxruntime: [1, k] for rank 1)
    idx = helper.make_tensor("idx", I64, [2], [0, 3])
    out["afe_rank2"] = _model(
        [helper.make_node("ArrayFeatureExtractor", ["X", "idx"], ["Y"], domain=ML)], [x4], [_untyped("Y")], inits=[idx]
    )
    out["afe_rank1"] = _model(
        [helper.make_node("ArrayFeatureExtractor", ["X", "idx"], ["Y"], domain=ML)],
        [_t("X", F, [4])],
        [_untyped("Y")],
        inits=[idx],
    )
    out["afe_strings"] = _model(
        [helper.make_node("ArrayFeatureExtractor", ["X", "idx"], ["Y"], domain=ML)],
        [_t("X", S, ["N", 4])],
        [_untyped("Y")],
        inits=[idx],
    )
    # CastMap: dense (as many columns as the map has entries) and sparse (max_map columns)
    for to in ("TO_FLOAT", "TO_STRING", "TO_INT64"):
        out[f"castmap_dense_{to[3:].lower()}"] = _model(
            [helper.make_node("CastMap", ["M"], ["Y"], domain=ML, cast_to=to)],
            [_map_input("M", I64)],
            [_untyped("Y")],
        )
    out["castmap_sparse"] = _model(
        [helper.make_node("CastMap", ["M"], ["Y"], domain=ML, map_form="SPARSE", max_map=5)],
        [_map_input("M", I64)],
        [_untyped("Y")],
    )
    # CategoryMapper both ways
    cats = {"cats_strings": ["a", "b", "c"], "cats_int64s": [0, 1, 2]}
    out["categorymapper_s2i"] = _model(
        [helper.make_node("CategoryMapper", ["X"], ["Y"], domain=ML, **cats)], [_t("X", S, ["N", 2])], [_untyped("Y")]
    )
    out["categorymapper_i2s"] = _model(
        [helper.make_node("CategoryMapper", ["X"], ["Y"], domain=ML, **cats)], [_t("X", I64, ["N"])], [_untyped("Y")]
    )
    # DictVectorizer on both key types
    out["dictvectorizer_str"] = _model(
        [helper.make_node("DictVectorizer", ["M"], ["Y"], domain=ML, string_vocabulary=["a", "b", "c", "d"])],
        [_map_input("M", S)],
        [_untyped("Y")],
    )
    out["dictvectorizer_int"] = _model(
        [helper.make_node("DictVectorizer", ["M"], ["Y"], domain=ML, int64_vocabulary=[0, 1, 2])],
        [_map_input("M", I64)],
        [_untyped("Y")],
    )
    # FeatureVectorizer over two inputs
    out["featurevectorizer"] = _model(
        [helper.make_node("FeatureVectorizer", ["A", "B"], ["Y"], domain=ML, inputdimensions=[2, 3])],
        [_t("A", I64, ["N", 2]), _t("B", I64, ["N", 3])],
        [_untyped("Y")],
    )
    # Imputer on int64
    out["imputer_int64"] = _model(
        [helper.make_node("Imputer", ["X"], ["Y"], domain=ML, imputed_value_int64s=[7], replaced_value_int64=0)],
        [_t("X", I64, ["N", 3])],
        [_untyped("Y")],
    )
    # LabelEncoder at 1 (strings <-> int64), 2 (float/int64/string attributes) and 4 (tensor attributes)
    out["labelencoder_v1"] = _model(
        [helper.make_node("LabelEncoder", ["X"], ["Y"], domain=ML, classes_strings=["a", "b", "c"], default_int64=-1)],
        [_t("X", S, ["N"])],
        [_untyped("Y")],
        ml=1,
    )
    out["labelencoder_v2_float_string"] = _model(
        [helper.make_node("LabelEncoder", ["X"], ["Y"], domain=ML, keys_floats=[0.0, 1.0], values_strings=["x", "y"])],
        [_t("X", F, ["N", 2])],
        [_untyped("Y")],
        ml=2,
    )
    keys = helper.make_tensor("keys_tensor", I64, [3], [0, 1, 2])
    values = helper.make_tensor("values_tensor", D, [3], [0.5, 1.5, 2.5])
    default = helper.make_tensor("default_tensor", D, [1], [-1.0])
    out["labelencoder_v4_tensors"] = _model(
        [
            helper.make_node(
                "LabelEncoder",
                ["X"],
                ["Y"],
                domain=ML,
                keys_tensor=keys,
                values_tensor=values,
                default_tensor=default,
            )
        ],
        [_t("X", I64, ["N", 2])],
        [_untyped("Y")],
        ml=4,
        default=21,
    )
    # LinearRegressor with 2 targets, Normalizer and ZipMap on a rank-1 input
    out["linearregressor_rank1"] = _model(
        [
            helper.make_node(
                "LinearRegressor", ["X"], ["Y"], domain=ML, coefficients=[1.0] * 8, intercepts=[0.0, 1.0], targets=2
            )
        ],
        [_t("X", F, [4])],
        [_untyped("Y")],
    )
    out["normalizer_rank1_zipmap"] = _model(
        [
            helper.make_node("Normalizer", ["X"], ["P"], domain=ML, norm="L1"),
            helper.make_node("ZipMap", ["P"], ["Z"], domain=ML, classlabels_strings=["a", "b", "c", "d"]),
        ],
        [_t("X", F, [4])],
        [_untyped("P"), _untyped("Z")],
    )
    # LinearClassifier: one row of coefficients and two labels (binary: two score columns)
    out["linearclassifier_1row_2labels"] = _model(
        [
            helper.make_node(
                "LinearClassifier",
                ["X"],
                ["L", "P"],
                domain=ML,
                coefficients=[1.0, -1.0, 0.5, 0.0],
                intercepts=[0.1],
                classlabels_ints=[3, 7],
                post_transform="LOGISTIC",
            )
        ],
        [x4],
        [_untyped("L"), _untyped("P")],
    )
    # OneHotEncoder of int64 categories on a rank-2 input
    out["onehotencoder_int"] = _model(
        [helper.make_node("OneHotEncoder", ["X"], ["Y"], domain=ML, cats_int64s=[0, 1, 2, 3], zeros=1)],
        [_t("X", I64, ["N", 2])],
        [_untyped("Y")],
    )
    # SVMClassifier in linear mode (no support vectors), three classes
    out["svmclassifier_linear"] = _model(
        [
            helper.make_node(
                "SVMClassifier",
                ["X"],
                ["L", "P"],
                domain=ML,
                classlabels_ints=[0, 1, 2],
                coefficients=[0.1] * 12,
                rho=[0.0, 0.1, 0.2],
                kernel_type="LINEAR",
                kernel_params=[0.0, 0.0, 0.0],
            )
        ],
        [x4],
        [_untyped("L"), _untyped("P")],
    )
    # TreeEnsemble (ai.onnx.ml 5): one tree, two targets, double
    te = {
        "nodes_featureids": [0],
        "nodes_modes": helper.make_tensor("nodes_modes", TensorProto.UINT8, [1], [0]),
        "nodes_splits": helper.make_tensor("nodes_splits", D, [1], [0.0]),
        "nodes_truenodeids": [0],
        "nodes_trueleafs": [1],
        "nodes_falsenodeids": [1],
        "nodes_falseleafs": [1],
        "leaf_targetids": [0, 1],
        "leaf_weights": helper.make_tensor("leaf_weights", D, [2], [1.0, 2.0]),
        "tree_roots": [0],
        "n_targets": 2,
        "aggregate_function": 1,
        "post_transform": 0,
    }
    out["treeensemble_v5"] = _model(
        [helper.make_node("TreeEnsemble", ["X"], ["Y"], domain=ML, **te)],
        [_t("X", D, ["N", 4])],
        [_untyped("Y")],
        ml=5,
        default=21,
    )
    # TreeEnsembleClassifier with one label (one score column) and TreeEnsembleRegressor with
    # tensor attributes (ai.onnx.ml 3)
    tree = {
        "nodes_treeids": [0, 0, 0],
        "nodes_nodeids": [0, 1, 2],
        "nodes_featureids": [0, 0, 0],
        "nodes_values": [0.0, 0.0, 0.0],
        "nodes_modes": ["BRANCH_LEQ", "LEAF", "LEAF"],
        "nodes_truenodeids": [1, 0, 0],
        "nodes_falsenodeids": [2, 0, 0],
    }
    out["treeclassifier_3labels_strings"] = _model(
        [
            helper.make_node(
                "TreeEnsembleClassifier",
                ["X"],
                ["L", "P"],
                domain=ML,
                **tree,
                class_treeids=[0, 0, 0],
                class_nodeids=[1, 2, 2],
                class_ids=[0, 1, 2],
                class_weights=[1.0, 0.5, 0.5],
                classlabels_strings=["x", "y", "z"],
            )
        ],
        [x4],
        [_untyped("L"), _untyped("P")],
    )
    out["treeclassifier_binary_one_class_id"] = _model(
        [
            helper.make_node(
                "TreeEnsembleClassifier",
                ["X"],
                ["L", "P"],
                domain=ML,
                **tree,
                class_treeids=[0, 0],
                class_nodeids=[1, 2],
                class_ids=[0, 0],
                class_weights=[-1.0, 1.0],
                classlabels_int64s=[0, 1],
                post_transform="LOGISTIC",
            )
        ],
        [x4],
        [_untyped("L"), _untyped("P")],
    )
    out["treeregressor_tensor_attrs"] = _model(
        [
            helper.make_node(
                "TreeEnsembleRegressor",
                ["X"],
                ["Y"],
                domain=ML,
                nodes_treeids=tree["nodes_treeids"],
                nodes_nodeids=tree["nodes_nodeids"],
                nodes_featureids=tree["nodes_featureids"],
                nodes_values_as_tensor=helper.make_tensor("v", D, [3], [0.0, 0.0, 0.0]),
                nodes_modes=tree["nodes_modes"],
                nodes_truenodeids=tree["nodes_truenodeids"],
                nodes_falsenodeids=tree["nodes_falsenodeids"],
                target_treeids=[0, 0, 0],
                target_nodeids=[1, 2, 2],
                target_ids=[0, 0, 2],
                target_weights_as_tensor=helper.make_tensor("w", D, [3], [1.0, 2.0, 3.0]),
                n_targets=3,
            )
        ],
        [_t("X", D, ["N", 4])],
        [_untyped("Y")],
    )
    return out


_ORT_TYPES = {
    "float": TensorProto.FLOAT,
    "double": TensorProto.DOUBLE,
    "int64": TensorProto.INT64,
    "string": TensorProto.STRING,
    "int32": TensorProto.INT32,
}


def _parse_ort_type(text: str) -> onnx.TypeProto:
    """onnxruntime's spelling of a type (``tensor(float)``, ``seq(map(int64,tensor(float)))``) as
    a TypeProto without shape."""
    if text.startswith("tensor("):
        return helper.make_tensor_type_proto(_ORT_TYPES[text[7:-1]], None)
    if text.startswith("seq("):
        return helper.make_sequence_type_proto(_parse_ort_type(text[4:-1]))
    key, value = text[4:-1].split(",", 1)
    return helper.make_map_type_proto(_ORT_TYPES[key], _parse_ort_type(value))


def _feed(vi: onnx.ValueInfoProto, rows: int = 3):
    """A value for graph input ``vi`` (what the module docstring says the tests feed)."""
    tp = vi.type
    if tp.WhichOneof("value") == "map_type":
        keys = ["a", "b", "c"] if tp.map_type.key_type == TensorProto.STRING else [0, 1, 2]
        return {k: float(i + 1) for i, k in enumerate(keys)}
    tt = tp.tensor_type
    shape = [d.dim_value if d.HasField("dim_value") else rows for d in tt.shape.dim]
    if tt.elem_type == TensorProto.STRING:
        return np.full(shape, "a", dtype=object)
    return np.zeros(shape, dtype=helper.tensor_dtype_to_np_dtype(tt.elem_type))


def _type_outputs(m: onnx.ModelProto) -> None:
    """Declare each untyped graph output with the type onnxruntime gives it and the rank of the
    value it computes, every dim left open (what a valid model declares: onnx.checker wants a
    shape, and the dims are for inference to find)."""
    import onnxruntime as ort

    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    types = {o.name: o.type for o in sess.get_outputs()}
    values = dict(zip(types, sess.run(None, {vi.name: _feed(vi) for vi in m.graph.input})))
    for vi in m.graph.output:
        if not vi.HasField("type"):
            vi.type.CopyFrom(_parse_ort_type(types[vi.name]))
            if vi.type.WhichOneof("value") == "tensor_type":
                shape = vi.type.tensor_type.shape
                for _ in range(np.asarray(values[vi.name]).ndim):
                    shape.dim.add()


def main() -> None:
    sections = ("sklearn", "boosters", "hand")
    if any(a.startswith("-") or a not in sections for a in sys.argv[1:]):
        print(f"usage: python tools/generators/make_ml_models.py [{' '.join(sections)}]  (writes {OUT})")
        raise SystemExit(0 if sys.argv[1] in ("-h", "--help") else 2)
    OUT.mkdir(parents=True, exist_ok=True)
    which = set(sys.argv[1:]) or set(sections)
    models: dict[str, onnx.ModelProto] = {}
    if "hand" in which:
        for name, m in hand_models().items():
            _type_outputs(m)
            models[name] = m
    if "sklearn" in which:
        models.update(sklearn_models())
    if "boosters" in which:
        models.update(booster_models())
    for name, m in models.items():
        m.graph.name = name  # skl2onnx names the graph with a random uuid
        m.producer_name = m.producer_name or "make_ml_models"
        onnx.save(m, OUT / f"{name}.onnx")
    total = sum(p.stat().st_size for p in OUT.glob("*.onnx"))
    print(f"wrote {len(models)} models to {OUT} ({total / 1024:.0f} KB in all)")


if __name__ == "__main__":
    main()
