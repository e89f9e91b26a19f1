"""The ai.onnx.ml domain (scikit-learn, LightGBM and XGBoost models exported by skl2onnx and
onnxmltools): a rule for every op of the domain, at every version onnx defines.

Shapes and types are onnxruntime's (its CPU kernels in ``onnxruntime/core/providers/cpu/ml/``),
measured op by op against onnxruntime 1.32 on 0, 1 and 3 rows, inputs of rank 1 to 3 and
attribute variants, and checked on the fixtures of tests/models/ml/ at 0, 1 and 3 rows
(tests/inference/ops/test_ops_ml.py):

- the batch ``N`` of a model-style op (classifiers, regressors, FeatureVectorizer) is 1 for a
  rank-1 input (``[C]`` is one row, also when C is 0) and the first dim of a rank-2 input;
  onnxruntime refuses other ranks (FeatureVectorizer takes the first dim of any rank >= 2);
- a classifier's label is ``[N]``, int64 or string as its ``classlabels_*`` attribute is, and
  its scores float ``[N, E]``, with E as each kernel computes it (see the rules);
- ZipMap makes a sequence of maps (int64 or string keys, float values), one map per row;
- CastMap and DictVectorizer make one row ``[1, K]`` from one map.

A dim a rule cannot know from the attributes (a dense CastMap's map size, a count whose
attributes onnxruntime would refuse) is a fresh symbol; an input rank onnxruntime refuses gives
an output of unknown rank.
"""

from __future__ import annotations

from onnx import TensorProto

from shapeinfer.inference.op_registry import register
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact, tensor

ML = "ai.onnx.ml"
FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64
STRING = TensorProto.STRING


def _batch(ctx, x: Fact | None, any_rank: bool = False) -> D.Dim | None:
    """The row count of a model-style op's input ``x``: 1 for rank 1, the first dim for rank 2
    (``any_rank``: any rank >= 2); a fresh symbol when the rank is unknown; None for a rank
    onnxruntime refuses."""
    if x is None or x.shape is None:
        return ctx.fresh()
    r = len(x.shape)
    if r == 1:
        return 1
    if r == 2 or (any_rank and r > 2):
        return x.shape[0]
    return None


def _count(ctx, name: str) -> int:
    """How many values the list attribute ``name`` holds (0 when absent)."""
    v = ctx.attr(name)
    return 0 if v is None else len(v)


def _label_type(ctx, ints: str) -> tuple[int, int]:
    """``(label dtype, class count)`` from ``classlabels_strings`` or the int labels attribute
    ``ints``; dtype 0 and count 0 when neither is given."""
    n = _count(ctx, "classlabels_strings")
    if n:
        return STRING, n
    n = _count(ctx, ints)
    return (INT64, n) if n else (0, 0)


def _rows(ctx, x: Fact | None, width: D.Dim | None, label: int | None = None) -> list:
    """``[label [N], scores float [N, width]]`` (or the scores alone when ``label`` is None);
    an unknown ``width`` is a fresh symbol, an input rank onnxruntime refuses unknown ranks."""
    n = _batch(ctx, x)
    if n is None:
        scores = Fact(FLOAT, None)
        return [scores] if label is None else [Fact(label, None), scores]
    scores = tensor(FLOAT, (n, ctx.fresh() if width is None else width))
    return [scores] if label is None else [tensor(label, (n,)), scores]


@register("ArrayFeatureExtractor", domain=ML)
def array_feature_extractor(ctx, ins: list) -> list:
    """ArrayFeatureExtractor: X's last dim becomes the number of indices (all of Y's elements,
    whatever Y's shape); a rank-1 X gives ``[1, k]``. X's element type."""
    x, y = ins[0], ins[1] if len(ins) > 1 else None
    dtype = x.dtype if x is not None else 0
    if x is None or x.shape is None or not x.shape:
        return [Fact(dtype, None)]
    k = y.numel if y is not None and y.shape is not None else ctx.fresh()
    if len(x.shape) == 1:
        return [tensor(dtype, (1, k))]
    return [tensor(dtype, tuple(x.shape[:-1]) + (k,))]


@register(["Binarizer", "Imputer"], domain=ML)
def same_as_input(ctx, ins: list) -> list:
    """Binarizer, Imputer: X's shape and element type."""
    x = ins[0]
    return [Fact(x.dtype, x.shape)] if x is not None else []


@register("Scaler", domain=ML)
def scaler(ctx, ins: list) -> list:
    """Scaler: X's shape, float."""
    x = ins[0]
    return [Fact(FLOAT, None if x is None else x.shape)]


@register("Normalizer", domain=ML)
def normalizer(ctx, ins: list) -> list:
    """Normalizer: X's shape, float; onnxruntime takes rank 1 or 2 only."""
    x = ins[0]
    if x is None or x.shape is None or len(x.shape) not in (1, 2):
        return [Fact(FLOAT, None)]
    return [tensor(FLOAT, x.shape)]


_CAST_TO = {"TO_FLOAT": FLOAT, "TO_STRING": STRING, "TO_INT64": INT64}


@register("CastMap", domain=ML)
def cast_map(ctx, ins: list) -> list:
    """CastMap: one row ``[1, K]`` of the map's values cast to ``cast_to``; K is the map's size
    (``DENSE``, unknown here) or ``max_map`` (``SPARSE``)."""
    dtype = _CAST_TO.get(ctx.attr("cast_to", "TO_FLOAT"), 0)
    form = ctx.attr("map_form", "DENSE")
    if form == "SPARSE":
        width = ctx.attr("max_map", 1)
    elif form == "DENSE":
        width = ctx.fresh()
    else:
        return [Fact(dtype, None)]
    return [tensor(dtype, (1, width))]


@register("CategoryMapper", domain=ML)
def category_mapper(ctx, ins: list) -> list:
    """CategoryMapper: X's shape; strings become int64 and int64 strings."""
    x = ins[0]
    if x is None:
        return []
    dtype = {STRING: INT64, INT64: STRING}.get(x.dtype, 0)
    return [Fact(dtype, x.shape)]


@register("DictVectorizer", domain=ML)
def dict_vectorizer(ctx, ins: list) -> list:
    """DictVectorizer: one row ``[1, V]`` (V the vocabulary's size) of the map's value type."""
    m = ins[0]
    dtype = m.elem.dtype if m is not None and m.kind == "map" and m.elem is not None else 0
    v = _count(ctx, "string_vocabulary") or _count(ctx, "int64_vocabulary") or ctx.fresh()
    return [tensor(dtype, (1, v))]


@register("FeatureVectorizer", domain=ML)
def feature_vectorizer(ctx, ins: list) -> list:
    """FeatureVectorizer: float ``[N, sum(inputdimensions)]``, N the first input's row count (1
    for rank 1, its first dim for any higher rank)."""
    n = _batch(ctx, ins[0] if ins else None, any_rank=True)
    if n is None:
        return [Fact(FLOAT, None)]
    dims = ctx.attr("inputdimensions")
    return [tensor(FLOAT, (n, sum(dims) if dims else ctx.fresh()))]


_VALUES = {"values_strings": STRING, "values_int64s": INT64, "values_floats": FLOAT}


@register("LabelEncoder", domain=ML)
def label_encoder_v1(ctx, ins: list) -> list:
    """LabelEncoder 1: X's shape; strings become int64 and int64 strings."""
    x = ins[0]
    if x is None:
        return []
    return [Fact({STRING: INT64, INT64: STRING}.get(x.dtype, 0), x.shape)]


@register("LabelEncoder", since=2, domain=ML)
def label_encoder(ctx, ins: list) -> list:
    """LabelEncoder 2 and 4: X's shape, of the type of the values (``values_*`` lists, from 4
    also ``values_doubles`` or the ``values_tensor``'s element type)."""
    x = ins[0]
    types = {t for name, t in _VALUES.items() if ctx.has_attr(name)}
    if ctx.version >= 4:
        if ctx.has_attr("values_doubles"):
            types.add(TensorProto.DOUBLE)
        if ctx.has_attr("values_tensor"):
            t = ctx.attr_tensor_fact("values_tensor")
            types.add(t.dtype if t is not None else 0)
    dtype = types.pop() if len(types) == 1 else 0  # none, or several (onnxruntime refuses): unknown
    return [Fact(dtype, None if x is None else x.shape)]


@register("LinearClassifier", domain=ML)
def linear_classifier(ctx, ins: list) -> list:
    """LinearClassifier: label ``[N]``, scores ``[N, E]``: E is the number of intercepts (one per
    class), 2 for one intercept and two labels (onnxruntime adds the other class's score);
    other counts onnxruntime refuses (E unknown)."""
    label, classes = _label_type(ctx, "classlabels_ints")
    rows = _count(ctx, "intercepts")
    width = rows if rows == classes else 2 if (rows, classes) == (1, 2) else None
    return _rows(ctx, ins[0], width, label)


@register("LinearRegressor", domain=ML)
def linear_regressor(ctx, ins: list) -> list:
    """LinearRegressor: float ``[N, targets]``."""
    return _rows(ctx, ins[0], ctx.attr("targets", 1))


@register("OneHotEncoder", domain=ML)
def one_hot_encoder(ctx, ins: list) -> list:
    """OneHotEncoder: float, X's shape plus a last dim of one column per category."""
    x = ins[0]
    if x is None or x.shape is None:
        return [Fact(FLOAT, None)]
    cats = _count(ctx, "cats_int64s") or _count(ctx, "cats_strings") or ctx.fresh()
    return [tensor(FLOAT, tuple(x.shape) + (cats,))]


@register("SVMClassifier", domain=ML)
def svm_classifier(ctx, ins: list) -> list:
    """SVMClassifier: label ``[N]``, scores ``[N, E]``. With support vectors (``SVC`` mode) and
    without ``prob_a``, E is the number of class pairs ``k(k-1)/2`` (2 for two classes);
    otherwise (linear mode, or probabilities) E is the class count k."""
    label, k = _label_type(ctx, "classlabels_ints")
    vectors = ctx.attr("vectors_per_class")
    if k < 2:
        width = None  # no labels, or one: counts no fixture here checks
    elif not ctx.has_attr("vectors_per_class"):
        width = k  # linear mode
    elif sum(vectors) <= 0:
        width = None  # a mode onnxruntime's kernel decides from counts checked nowhere here
    elif _count(ctx, "prob_a"):
        width = k
    else:
        width = k * (k - 1) // 2 if k > 2 else 2
    return _rows(ctx, ins[0], width, label)


@register("SVMRegressor", domain=ML)
def svm_regressor(ctx, ins: list) -> list:
    """SVMRegressor: float ``[N, 1]``."""
    return _rows(ctx, ins[0], 1)


@register("TreeEnsembleClassifier", domain=ML)
def tree_ensemble_classifier(ctx, ins: list) -> list:
    """TreeEnsembleClassifier: label ``[N]``, scores ``[N, E]``, E the number of class labels
    (also for a binary model whose trees score one class only: onnxruntime writes both)."""
    label, classes = _label_type(ctx, "classlabels_int64s")
    return _rows(ctx, ins[0], classes or None, label)


@register("TreeEnsembleRegressor", domain=ML)
def tree_ensemble_regressor(ctx, ins: list) -> list:
    """TreeEnsembleRegressor: float ``[N, n_targets]`` (onnxruntime refuses no ``n_targets``)."""
    return _rows(ctx, ins[0], ctx.attr("n_targets") or None)


@register("TreeEnsemble", since=5, domain=ML)
def tree_ensemble(ctx, ins: list) -> list:
    """TreeEnsemble: ``[N, n_targets]`` of X's element type."""
    x = ins[0]
    (out,) = _rows(ctx, x, ctx.attr("n_targets") or None)
    return [Fact(x.dtype if x is not None else 0, out.shape)]


@register("ZipMap", domain=ML)
def zip_map(ctx, ins: list) -> list:
    """ZipMap: a sequence (one per row) of maps from the class labels (int64 or string) to
    float scores."""
    key, _ = _label_type(ctx, "classlabels_int64s")
    return [Fact(0, None, kind="sequence", elem=Fact(key, None, kind="map", elem=tensor(FLOAT, ())))]
