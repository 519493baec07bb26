"""The channels-first warning's rule against both kinds of mistake.

Usage::

    python -m sklmn.benchmarks bench layout-rule  # the suite needs `bash dev.sh data`

For every bundled dataset (``sklmn.datasets``), every set of the time-series
suite (``load_timeseries_dataset``, skipped when its wheels are missing),
the data of the estimator checks, and synthetic short wide panels of the
kind tabular users have (a few quarterly steps x tens of features: per
feature AR(1) over the quarters, lognormal scales, a common factor), it
prints what the warning reads (``sklmn.utils.sequences.layout_statistics``)
and whether it fires (``looks_channels_first``; and the former rule, at
least 10 times more features than steps), for the data in sklmn's layout
and for its channels-first version read as if it were batch-first (the
mistake the warning is for). A good rule fires on every "channels-first"
row and on no "batch-first" row.
"""

from __future__ import annotations

import argparse

import numpy as np

from sklmn import datasets
from sklmn.utils.sequences import (
    check_sequences,
    layout_statistics,
    looks_channels_first,
    to_channels_first,
)


def _bundled():
    yield "sequential digits", datasets.load_sequential_digits(return_X_y=True)[0]
    yield "adding problem (T=50)", datasets.make_adding_problem(200, length=50)[0]
    yield "copy task", datasets.make_copy_task(200)[0]
    yield "Bach chorales", datasets.load_bach_chorales().X_train
    yield "common-suffix words", datasets.load_common_suffix_words().X_train
    yield "online handwriting", datasets.load_online_handwriting().X_train
    yield "generated handwriting", datasets.make_online_handwriting(100)[0]
    yield "generation signal", datasets.load_generation_signal().data


def _suite():
    names = ["ArrowHead", "BasicMotions", "ItalyPowerDemand", "OSULeaf", "PLAID",
             "ACSF1", "CardanoSentiment"]
    for name in names:
        try:
            X = datasets.load_timeseries_dataset(name)[0]
        except Exception as exc:  # wheels missing
            print(f"(suite set {name} skipped: {type(exc).__name__})")
            continue
        yield f"suite {name}", X


def _reported():
    """The aeon layout of a user report, (400, 3, 20): noisy sines of random
    frequency and phase, stored here batch-first."""
    rng = np.random.default_rng(0)
    t = np.linspace(0, 1, 20)[None, :, None]
    freq = rng.uniform(1, 3, size=(400, 1, 3))
    phase = rng.uniform(0, 2 * np.pi, size=(400, 1, 3))
    noise = 0.05 * rng.normal(size=(400, 20, 3))
    yield "3 channels x 20 steps (sines)", np.sin(2 * np.pi * freq * t + phase) + noise


def _check_data():
    rng = np.random.default_rng(0)
    yield "checks: normal (20, 5, 2)", rng.normal(size=(20, 5, 2))
    yield "checks: normal (30, 3, 4)", rng.normal(size=(30, 3, 4))
    ragged = [rng.normal(size=(t, 2)) for t in range(3, 13)]
    yield "checks: ragged list, 2 features", ragged


def panel(n, steps, features, *, phi=0.8, factor=0.5, factor_phi=0.8, seed=0):
    """A short wide panel: ``n`` entities x ``steps`` quarters x ``features``
    columns with AR(``phi``) columns, a common AR(``factor_phi``) factor of
    weight ``factor``, and lognormal column scales."""
    rng = np.random.default_rng(seed)
    def ar(shape, rho):
        x = np.empty(shape)
        x[:, 0] = rng.normal(size=shape[:1] + shape[2:])
        for t in range(1, shape[1]):
            x[:, t] = rho * x[:, t - 1] + np.sqrt(1 - rho**2) * rng.normal(
                size=shape[:1] + shape[2:])
        return x
    own = ar((n, steps, features), phi)
    common = ar((n, steps, 1), factor_phi)
    scales = rng.lognormal(sigma=1.0, size=features)
    loadings = rng.uniform(0.5, 1.0, size=features)
    X = np.sqrt(1 - factor) * own + np.sqrt(factor) * loadings * common
    return X * scales + rng.normal(size=features) * scales


def _panels():
    yield "panel 4 quarters x 50", panel(300, 4, 50)
    yield "panel 8 quarters x 30", panel(300, 8, 30, seed=1)
    yield "panel 12 quarters x 100", panel(300, 12, 100, seed=2)
    yield "panel 2 steps x 20", panel(300, 2, 20, seed=3)
    yield "panel 4 x 50, no factor", panel(300, 4, 50, factor=0.0, seed=4)
    yield "panel 4 x 50, i.i.d. quarters", panel(
        300, 4, 50, phi=0.0, factor_phi=0.0, seed=5
    )
    yield "panel 4 x 50, strong i.i.d. factor", panel(
        300, 4, 50, phi=0.0, factor=0.9, factor_phi=0.0, seed=6)


def _row(name, layout, X):
    try:
        seqs = check_sequences(X)
    except ValueError as exc:
        message = str(exc)[:40]
        return f"| {name} | {layout} | - | - | - | - | ValueError: {message}... | - |"
    if seqs.univariate:
        return f"| {name} | {layout} | {seqs.n_timesteps} | 1 | - | - | no | no |"
    s = layout_statistics(seqs)
    new = "**yes**" if looks_channels_first(s) else "no"
    old = "**yes**" if s["n_features"] >= 10 * s["n_timesteps"] else "no"
    return (f"| {name} | {layout} | {s['n_timesteps']} | {s['n_features']} | "
            f"{s['time_corr']:.2f} | {s['feature_corr']:.2f} | {new} | {old} |")


def main(argv=None):
    """Print the table (no options)."""
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args(argv)
    print("| data | read as | steps | features | time corr | feature corr "
          "| warns | former rule warns |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for source in (_bundled, _suite, _reported, _check_data, _panels):
        for name, X in source():
            print(_row(name, "batch-first", X), flush=True)
            if not name.startswith("panel"):
                items = X if isinstance(X, list) else np.asarray(X)
                if not isinstance(items, list) and items.ndim == 2:
                    items = items[:, :, None]
                elif isinstance(items, list) and np.asarray(items[0]).ndim == 1:
                    items = [np.asarray(x)[:, None] for x in items]
                print(_row(name, "channels-first", to_channels_first(items)))

