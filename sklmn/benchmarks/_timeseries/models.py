"""The time-series suite's models: the registry, the variants and ``--models`` specs.

A factory receives the seed and a
:class:`~sklmn.benchmarks._timeseries.datasets.DatasetInfo` and returns an
estimator, or ``(estimator, note)`` to record a note.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.dummy import DummyRegressor
from sklearn.ensemble import ExtraTreesClassifier
from sklearn.linear_model import LogisticRegression, RidgeCV
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import SplineTransformer, StandardScaler

from ...pretraining import IncrementalTraining, ProjectionFineTuning
from .datasets import LAES_COMPONENTS, DatasetInfo


# -- models --
class PadFlatten(TransformerMixin, BaseEstimator):
    """Zero-pad sequences to the longest training length and flatten them.

    Turns any layout of :mod:`sklmn.utils.sequences` into a 2-D array
    ``(n_samples, max_length * n_features)`` for tabular estimators; test
    sequences longer than the longest training one are truncated.

    Examples
    --------
    >>> import numpy as np
    >>> PadFlatten().fit([np.ones((2, 1)), np.ones((3, 1))]).transform(
    ...     [np.full((1, 1), 2.0)]).tolist()
    [[2.0, 0.0, 0.0]]
    """

    def fit(self, X, y=None):
        """Record the longest training length and the number of features."""
        from ...utils.sequences import check_sequences

        seqs = check_sequences(X)
        self.max_length_ = seqs.n_timesteps
        self.n_features_in_ = seqs.n_features
        return self

    def transform(self, X):
        """Return the zero-padded, flattened sequences."""
        from ...utils.sequences import check_sequences

        data = check_sequences(X).data[:, : self.max_length_]
        out = np.zeros((data.shape[0], self.max_length_, data.shape[2]))
        out[:, : data.shape[1]] = data
        return out.reshape(len(out), -1)


def _laes_logreg(seed: int, info: DatasetInfo):
    from ...laes import LAESTransformer

    bound = min(info.n_steps_total, info.max_length * info.n_features)
    n_components = min(LAES_COMPONENTS, bound)
    note = ""
    if n_components < LAES_COMPONENTS:
        note = (
            f"LAES n_components capped at {n_components} (at most "
            f"min(n_steps_total, max_length * n_features) = {bound})"
        )
    model = make_pipeline(
        LAESTransformer(n_components=n_components, random_state=seed),
        LogisticRegression(max_iter=1000, random_state=seed),
    )
    return model, note


def _est(cls_name: str, **params):
    """Factory of ``sklmn.estimators.<cls_name>(**params, random_state=seed)``."""

    def factory(seed: int, info: DatasetInfo):
        from ... import estimators

        return getattr(estimators, cls_name)(**params, random_state=seed)

    factory.__qualname__ = (
        f"{cls_name}({', '.join(f'{k}={v!r}' for k, v in params.items())})"
    )
    return factory


def _on_readout(cls_name: str, model: Callable, label: str):
    """Factory of ``model(seed)`` fitted on the readout's features of a
    default ``sklmn.estimators.<cls_name>``
    (:class:`~sklmn.estimators.ReadoutFeatures`), labelled ``label``."""

    def factory(seed: int, info: DatasetInfo):
        from ... import estimators

        network = getattr(estimators, cls_name)(random_state=seed)
        return make_pipeline(estimators.ReadoutFeatures(network), model(seed))

    factory.__qualname__ = f"ReadoutFeatures({cls_name}()) + {label}"
    return factory


def _trees(seed: int):
    """A seeded tree ensemble."""
    return ExtraTreesClassifier(n_estimators=500, random_state=seed)


def _splines_or_standardized(seed: int):
    """A logistic readout of each feature's piecewise-linear spline basis
    (knots at quantiles) or of the standardized features, the basis and the
    penalty chosen by 5-fold cross-validation on the training sequences."""
    splines = SplineTransformer(n_knots=9, degree=1, knots="quantile")
    readout = Pipeline(
        [("basis", splines), ("logistic", LogisticRegression(max_iter=3000))]
    )
    grid = {"basis": [splines, StandardScaler()], "logistic__C": [0.01, 0.1, 1.0, 10.0]}
    return GridSearchCV(readout, grid)


_SPLINES = "splines or standardized, logistic"


def _ridge(seed: int, info: DatasetInfo):
    return make_pipeline(
        PadFlatten(), StandardScaler(), RidgeCV(alphas=np.logspace(-3, 3, 13))
    )


def _mean(seed: int, info: DatasetInfo):
    return DummyRegressor(strategy="mean")


#: name -> {task: factory(seed, info) -> estimator or (estimator, note)}.
MODELS: dict[str, dict[str, Callable]] = {
    "lmn": {
        "classification": _est("LMNClassifier"),
        "regression": _est("LMNRegressor"),
    },
    "mslmn": {
        "classification": _est("MultiScaleLMNClassifier"),
        "regression": _est("MultiScaleLMNRegressor"),
    },
    "lstm": {
        "classification": _est("RNNClassifier", cell="lstm"),
        "regression": _est("RNNRegressor", cell="lstm"),
    },
    "gru": {"classification": _est("RNNClassifier", cell="gru")},
    "enrnn": {"classification": _est("ENRNNClassifier")},
    "laes_logreg": {"classification": _laes_logreg},
    "mean": {"regression": _mean},
    "ridge": {"regression": _ridge},
}


def _lmn_variant(prefix: str = "", **params):
    """Factories of LMN classifier/regressor variants for the default study
    (``prefix='MultiScale'``: of the multi-scale LMN)."""

    def make(cls_name: str):
        def factory(seed: int, info: DatasetInfo):
            from ... import estimators, pretraining

            # ("ClassName", {params}) builds a sklmn.pretraining object
            kwargs = {
                k: getattr(pretraining, v[0])(**v[1], random_state=seed)
                if isinstance(v, tuple)
                else v
                for k, v in params.items()
            }
            return getattr(estimators, cls_name)(**kwargs, random_state=seed)

        return factory

    return {
        "classification": make(f"{prefix}LMNClassifier"),
        "regression": make(f"{prefix}LMNRegressor"),
    }


def with_init_radius(base: type, radius: float | None) -> type:
    """A subclass of an LMN estimator class whose module starts at another
    ``init_radius`` (a class attribute, not a public parameter): ``None``
    without the stable initialization, or another radius of the linearized
    memory map."""
    name = "RawInit" if radius is None else f"Radius{radius:g}"
    return type(f"{name}{base.__name__}", (base,), {"_init_radius": radius})


def _raw_init(task_cls: str, radius=None, **params):
    # the free memory, whose random start the radius rescales (a Schur
    # memory's ring start ignores it: the variants would equal the default)
    params.setdefault("memory_matrix", "free")

    def factory(seed: int, info: DatasetInfo):
        from ... import estimators

        cls = with_init_radius(getattr(estimators, task_cls), radius)
        return cls(**params, random_state=seed)

    return factory


#: Variants used to choose the defaults (``docs/training.md``); selected by
#: name with ``--models``, never run by default. Simple parameter changes
#: need no entry: ``--models "lmn:standardize=False"``.
VARIANTS: dict[str, dict[str, Callable]] = {
    # pretraining choices of the LMN
    "lmn_nopretrain": _lmn_variant(pretrainer=None),
    "lmn_unrolled": _lmn_variant(pretrainer=("UnrolledPretrainer", {})),
    "lmn_laes_paper": _lmn_variant(pretrainer=("LAESInitializer", {})),
    # the default LAES initialization without centring (the paper's, no bias)
    "lmn_laes_nocenter": _lmn_variant(
        pretrainer=("LAESInitializer", {"alpha": 0.1, "center": False})
    ),
    # the stable initialization, without pretraining
    "lmn_rawinit": {
        "classification": _raw_init("LMNClassifier", pretrainer=None),
        "regression": _raw_init("LMNRegressor", pretrainer=None),
    },
    # the stable initialization at a radius closer to one
    "lmn_radius0.99": {
        "classification": _raw_init("LMNClassifier", 0.99),
        "regression": _raw_init("LMNRegressor", 0.99),
    },
    "mslmn_laes": {
        "classification": _est("MultiScaleLMNClassifier", pretrainer="auto"),
        "regression": _est("MultiScaleLMNRegressor", pretrainer="auto"),
    },
    # the LAES initialization with a logistic-regression readout
    "lmn_laes_logistic": _lmn_variant(
        pretrainer=("LAESInitializer", {"alpha": 0.1, "readout": "auto"})
    ),
    # a tree ensemble on the pooled features of the default network
    "lmn_trees": {
        "classification": _on_readout("LMNClassifier", _trees, "ExtraTreesClassifier")
    },
    "mslmn_trees": {
        "classification": _on_readout(
            "MultiScaleLMNClassifier", _trees, "ExtraTreesClassifier"
        )
    },
    # a logistic readout of the same features' splines, chosen by cross-validation
    "lmn_splines": {
        "classification": _on_readout(
            "LMNClassifier", _splines_or_standardized, _SPLINES
        )
    },
    "mslmn_splines": {
        "classification": _on_readout(
            "MultiScaleLMNClassifier", _splines_or_standardized, _SPLINES
        )
    },
    "lmn_laes_logistic_C0.1": _lmn_variant(
        pretrainer=("LAESInitializer", {"alpha": 0.1, "readout": "auto", "C": 0.1})
    ),
    # the ridge readout's penalty chosen by generalized cross-validation
    "lmn_laes_gcv": _lmn_variant(
        pretrainer=("LAESInitializer", {"alpha": "gcv", "readout": "auto"})
    ),
    "mslmn_laes_gcv": _lmn_variant(
        "MultiScale",
        pretrainer=("LAESInitializer", {"alpha": "gcv", "readout": "auto"}),
    ),
    "mslmn_laes_logistic": _lmn_variant(
        "MultiScale", pretrainer=("LAESInitializer", {"alpha": 0.1, "readout": "auto"})
    ),
    # the LMN's start at other penalties of its logistic readout
    "lmn_laes_C0.3": _lmn_variant(
        pretrainer=("LAESInitializer", {"alpha": "gcv", "readout": "auto", "C": 0.3})
    ),
    "lmn_laes_C3": _lmn_variant(
        pretrainer=("LAESInitializer", {"alpha": "gcv", "readout": "auto", "C": 3.0})
    ),
    # the residual multi-scale start (mslmn_laes_gcv: the independent one,
    # the default before) at other penalties of its logistic readout
    "mslmn_laes_residual_C1": _lmn_variant(
        "MultiScale",
        pretrainer=(
            "LAESInitializer",
            {"alpha": "gcv", "readout": "auto", "modules": "residual"},
        ),
    ),
    "mslmn_laes_residual_C10": _lmn_variant(
        "MultiScale",
        pretrainer=(
            "LAESInitializer",
            {"alpha": "gcv", "readout": "auto", "modules": "residual", "C": 10.0},
        ),
    ),
}


def model_registry_for(models) -> dict[str, dict[str, Callable]]:
    """:data:`MODELS`, plus :data:`VARIANTS` when models are named."""
    return dict(MODELS) if models is None else {**MODELS, **VARIANTS}


#: Registry models that are not sklmn models (left out of "best sklmn").
BASELINES = ("mean", "ridge")

#: Models whose loss spikes the report lists first (the others with a
#: ``loss_curve_`` follow).
SPIKE_MODELS = ("lmn", "mslmn")


def _split_items(text: str, spec: str) -> list[str]:
    """Split ``text`` at the commas outside brackets and quotes."""
    items, depth, quote, start = [], 0, "", 0
    for i, char in enumerate(text):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    if quote or depth:
        raise ValueError(
            f"model spec {spec!r}: unbalanced "
            f"{'quote' if quote else 'brackets'} in {text!r}."
        )
    return [*items, text[start:]]


#: The settings objects a ``--models`` value may construct, by name (keyword
#: arguments that are Python literals only).
SPEC_OBJECTS = {
    "IncrementalTraining": IncrementalTraining,
    "ProjectionFineTuning": ProjectionFineTuning,
}


def _spec_object(raw, spec):
    """The object of a value ``Name(key=literal, ...)`` with ``Name`` in
    :data:`SPEC_OBJECTS`; None when ``raw`` is not such a call."""
    try:
        node = ast.parse(raw, mode="eval").body
    except SyntaxError:
        return None
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in SPEC_OBJECTS
    ):
        return None
    if node.args or any(kw.arg is None for kw in node.keywords):
        raise ValueError(
            f"model spec {spec!r}: {raw!r} takes keyword arguments only."
        )
    kwargs = {}
    for kw in node.keywords:
        try:
            kwargs[kw.arg] = ast.literal_eval(kw.value)
        except ValueError:
            raise ValueError(
                f"model spec {spec!r}: the value of {kw.arg!r} in {raw!r} is not "
                f"a Python literal."
            ) from None
    try:
        return SPEC_OBJECTS[node.func.id](**kwargs)
    except TypeError as error:  # an unknown keyword
        raise ValueError(f"model spec {spec!r}: {error}") from None


def parse_model_spec(spec):
    """Split a ``--models`` entry ``name[:param=value,...]``.

    Values are Python literals (numbers, True/False/None, quoted strings,
    tuples, lists) or a settings object of :data:`SPEC_OBJECTS` written as
    its constructor with literal keyword arguments
    (``fine_tuning=ProjectionFineTuning(lr=0.003)``); anything else is kept
    as a string. Commas inside brackets or quotes belong to the value. For a
    pipeline, name the step as scikit-learn does
    (``laes_logreg:logisticregression__C=0.1``).

    Parameters
    ----------
    spec : str

    Returns
    -------
    name : str
        Registry name.
    overrides : dict
        Parameters set with ``set_params`` after the factory.
    label : str
        Name of the variant in the results (``spec`` normalized).

    Examples
    --------
    >>> parse_model_spec("lmn")
    ('lmn', {}, 'lmn')
    >>> parse_model_spec("lmn:learning_rate_init=0.003,optimizer=adamw")
    ('lmn', {'learning_rate_init': 0.003, 'optimizer': 'adamw'}, \
'lmn[learning_rate_init=0.003,optimizer=adamw]')
    >>> parse_model_spec("lmn:memory_ring=(0.5,0.999,1.5),hidden_size=8")
    ('lmn', {'memory_ring': (0.5, 0.999, 1.5), 'hidden_size': 8}, \
'lmn[memory_ring=(0.5, 0.999, 1.5),hidden_size=8]')
    >>> parse_model_spec("mslmn:fine_tuning=ProjectionFineTuning(steps=50)")
    ('mslmn', {'fine_tuning': ProjectionFineTuning(steps=50)}, \
'mslmn[fine_tuning=ProjectionFineTuning(steps=50)]')
    >>> parse_model_spec("lmn:0.003")
    Traceback (most recent call last):
    ...
    ValueError: model spec 'lmn:0.003': expected param=value after ':', got '0.003'.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"model spec must be a non-empty string, got {spec!r}.")
    name, _, rest = spec.strip().partition(":")
    overrides, labels = {}, []
    for item in filter(None, (s.strip() for s in _split_items(rest, spec))):
        key, eq, raw = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(
                f"model spec {spec!r}: expected param=value after ':', got {item!r}."
            )
        if key.strip() in overrides:
            raise ValueError(
                f"model spec {spec!r}: parameter {key.strip()!r} is given twice."
            )
        shown = None  # the label shows the value, or the object as written
        try:
            value = ast.literal_eval(raw.strip())
        except (ValueError, SyntaxError):
            value = _spec_object(raw.strip(), spec)
            if value is None:
                value = raw.strip()
            else:
                shown = raw.strip()
        overrides[key.strip()] = value
        labels.append(f"{key.strip()}={value if shown is None else shown}")
    label = name
    if overrides:
        label += "[" + ",".join(labels) + "]"
    return name, overrides, label
