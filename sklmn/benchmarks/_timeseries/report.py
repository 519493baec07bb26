"""The time-series suite's Markdown report from the JSON records."""

from __future__ import annotations

import numpy as np

from .datasets import PUBLISHED, PUBLISHED_COLUMNS, PUBLISHED_SOURCES, TASKS
from .models import BASELINES, SPIKE_MODELS


# -- report --
def _mean_std(values: list[float], digits: int = 3) -> str:
    if not values:
        return ""
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return f"{np.mean(values):.{digits}f} ± {np.std(values, ddof=1):.{digits}f}"


def format_timeseries_report(
    records,
    *,
    max_fit_seconds=300.0,
    dataset_order=None,
    model_order=None,
    n_seeds=None,
    descriptions=None,
):
    """Render the Markdown report of the time-series suite.

    Parameters
    ----------
    records : list of dict
        Records as returned by :func:`run_timeseries_suite`.
    max_fit_seconds : float, default=300
        Cap above which fits are flagged.
    dataset_order, model_order : list of str, default=None
        Row and column order (order of first appearance when None).
    n_seeds : int, default=None
        Seeds requested per cell; cells with fewer results say how many.
    descriptions : dict, default=None
        One line per dataset for the list of datasets.

    Returns
    -------
    text : str

    Examples
    --------
    >>> recs = [dict(dataset="ArrowHead", task="classification", model="lmn",
    ...              seed=s, metric="accuracy", score=v, status="ok",
    ...              fit_seconds=1.0, n_iter=10, n_spikes=0, note="")
    ...         for s, v in enumerate([0.7, 0.8])]
    >>> text = format_timeseries_report(recs)
    >>> print(text.splitlines()[8])
    | ArrowHead | 0.750 ± 0.071 | lmn | 0.703 | 0.800 | 0.814 |
    """
    records = list(records)
    datasets = list(dataset_order or dict.fromkeys(r["dataset"] for r in records))
    models = list(model_order or dict.fromkeys(r["model"] for r in records))
    by_cell: dict[tuple, list[dict]] = {}
    for r in records:
        by_cell.setdefault((r["dataset"], r["model"]), []).append(r)
    task_of = {r["dataset"]: r["task"] for r in records}

    def ok_scores(ds, m):
        return [r["score"] for r in by_cell.get((ds, m), []) if r.get("status") == "ok"]

    lines = ["# sklmn time-series suite", ""]
    lines += [
        "Test accuracy (classification) or test RMSE (regression) on the standard "
        "train/test splits, mean ± sample standard deviation over seeds; every "
        "model with its library defaults except `random_state=seed`, on the raw "
        "data (no rescaling by the suite). A cell with fewer results than "
        "requested says `(n=k)` (and a mean over datasets that includes such "
        "cells, `(fewer seeds in k)`); fits that diverged or failed are listed "
        "below and left out of the means.",
    ]
    for task in TASKS:
        rows = [d for d in datasets if task_of.get(d) == task]
        cols = [m for m in models if any((d, m) in by_cell for d in rows)]
        if not rows or not cols:
            continue
        lines += _score_table(task, rows, cols, ok_scores, by_cell, n_seeds)
    lines += _time_table(datasets, models, by_cell, max_fit_seconds)
    lines += _spike_table(datasets, models, by_cell)
    lines += _start_table(datasets, models, by_cell)
    lines += _radius_table(datasets, models, by_cell)
    lines += _problem_list(records, max_fit_seconds)
    if descriptions and any(descriptions.values()):
        lines += ["", "## Datasets", ""]
        lines += [
            f"- **{d}**: {descriptions[d]}" for d in datasets if d in descriptions
        ]
    if any(task_of.get(d) == "classification" for d in datasets):
        lines += ["", "## Sources of the published accuracies", ""]
        lines += PUBLISHED_SOURCES.splitlines()
    return "\n".join(lines) + "\n"


def _base(label: str) -> str:
    """Registry name of a model label (``'lmn[max_iter=5]'`` -> ``'lmn'``)."""
    return label.split("[", 1)[0]


def _score_table(task, rows, cols, ok_scores, by_cell, n_seeds):
    higher = task == "classification"
    pick = max if higher else min
    metric = "accuracy ↑" if higher else "RMSE ↓"
    pub = PUBLISHED_COLUMNS if higher else ()
    lines = ["", f"## {task.capitalize()} (test {metric})", ""]
    header = ["dataset", *cols, "best sklmn", *(title for _, title in pub)]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    means: dict[str, dict[str, float]] = {}  # dataset -> model -> mean score
    short: set[tuple[str, str]] = set()  # cells with fewer seeds than asked
    for ds in rows:
        cells, means[ds] = [], {}
        for m in cols:
            vals = ok_scores(ds, m)
            cell = _mean_std(vals)
            expected = n_seeds if n_seeds is not None else len(by_cell.get((ds, m), []))
            if vals and len(vals) < expected:
                cell += f" (n={len(vals)})"
                short.add((ds, m))
            cells.append(cell)
            if vals:
                means[ds][m] = float(np.mean(vals))
        ours = {m: v for m, v in means[ds].items() if _base(m) not in BASELINES}
        best = pick(ours, key=ours.get) if ours else ""
        pub_cells = [
            "" if (v := PUBLISHED.get(ds, {}).get(k)) is None else f"{v:.3f}"
            for k, _ in pub
        ]
        lines.append("| " + " | ".join([ds, *cells, best, *pub_cells]) + " |")

    def mean_row(title, subset):
        cells, complete = [], {}
        for m in cols:
            vals = [means[d][m] for d in subset if m in means[d]]
            if not vals:
                cells.append("")
                continue
            cells.append(f"{np.mean(vals):.3f}")
            if len(vals) == len(subset):
                complete[m] = float(np.mean(vals))
            else:
                cells[-1] += f" ({len(vals)}/{len(subset)} datasets)"
            n_short = sum((d, m) in short for d in subset)
            if n_short:
                cells[-1] += f" (fewer seeds in {n_short})"
        complete = {m: v for m, v in complete.items() if _base(m) not in BASELINES}
        best = pick(complete, key=complete.get) if complete else ""
        pub_cells = []
        for k, _ in pub:
            vals = [PUBLISHED[d][k] for d in subset if k in PUBLISHED.get(d, {})]
            cell = f"{np.mean(vals):.3f}" if vals else ""
            if vals and len(vals) < len(subset):
                cell += f" ({len(vals)}/{len(subset)} datasets)"
            pub_cells.append(cell)
        return "| " + " | ".join([title, *cells, best, *pub_cells]) + " |"

    if len(rows) > 1:
        lines.append(mean_row("mean over datasets", rows))
        with_pub = [d for d in rows if all(k in PUBLISHED.get(d, {}) for k, _ in pub)]
        if pub and 1 < len(with_pub) < len(rows):
            lines.append(
                mean_row(
                    f"mean over the {len(with_pub)} with published values", with_pub
                )
            )
        if not higher:
            lines += [
                "",
                "RMSE is in the units of each dataset's target: the mean over "
                "datasets mixes scales and is only a rough summary.",
            ]
    return lines


def _dataset_table(head, datasets, cols, by_cell, cell):
    """The lines ``head``, then a table with a row per dataset and a column
    per model of ``cols``: ``cell(records)`` of the records of each (dataset,
    model), ``""`` for none; rows with no cell are left out."""
    lines = [
        *head,
        "",
        "| dataset | " + " | ".join(cols) + " |",
        "|" + "---|" * (len(cols) + 1),
    ]
    for ds in datasets:
        cells = [cell(by_cell.get((ds, m), [])) for m in cols]
        if any(cells):
            lines.append(f"| {ds} | " + " | ".join(cells) + " |")
    return lines


def _time_table(datasets, models, by_cell, cap):
    cols = [m for m in models if any((d, m) in by_cell for d in datasets)]
    if not cols:
        return []

    def cell(records):
        recs = [r for r in records if r.get("fit_seconds") is not None]
        if not recs:
            return ""
        secs = [r["fit_seconds"] for r in recs]
        its = [r["n_iter"] for r in recs if r.get("n_iter") is not None]
        text = f"{np.mean(secs):.1f}"
        if its:
            text += f" / {np.mean(its):.0f}"
        over = sum(s > cap for s in secs)
        if over:
            text += f" ⚠{over}"
        return text

    head = [
        "",
        "## Fit time (mean wall seconds per fit) and iterations",
        "",
        f"`s / it`: mean seconds / mean iterations (epochs, or the solver's "
        f"iterations); ⚠k: k fits over the {cap:g} s cap (not stopped).",
    ]
    return _dataset_table(head, datasets, cols, by_cell, cell)


def _spike_table(datasets, models, by_cell):
    with_curve = [
        m
        for m in models
        if any(
            r.get("n_spikes") is not None
            for d in datasets
            for r in by_cell.get((d, m), [])
        )
    ]
    cols = sorted(
        with_curve, key=lambda m: (_base(m) not in SPIKE_MODELS, with_curve.index(m))
    )
    if not cols:
        return []

    def cell(records):
        spikes = [r["n_spikes"] for r in records if r.get("n_spikes") is not None]
        if not spikes:
            return ""
        hit = sum(s > 0 for s in spikes)
        return f"{sum(spikes)} ({hit}/{len(spikes)})"

    head = [
        "",
        "## Loss spikes",
        "",
        "An epoch is a spike when its training loss exceeds twice the minimum "
        "of all earlier epochs. Cells: total spikes over the seeds (fits with "
        "at least one spike / fits).",
    ]
    return _dataset_table(head, datasets, cols, by_cell, cell)


def _models_with(key, datasets, models, by_cell):
    return [
        m
        for m in models
        if any(
            r.get(key) is not None for d in datasets for r in by_cell.get((d, m), [])
        )
    ]


def _start_table(datasets, models, by_cell):
    """Start -> final test score of the network models (mean over seeds)."""
    cols = _models_with("start_score", datasets, models, by_cell)
    if not cols:
        return []

    def cell(records):
        pairs = [
            (r["start_score"], r["score"])
            for r in records
            if r.get("status") == "ok" and r.get("start_score") is not None
        ]
        if not pairs:
            return ""
        start, final = np.mean(pairs, axis=0)
        return f"{start:.3f} → {final:.3f}"

    head = [
        "",
        "## Start and final model",
        "",
        "Test score of the network before its first epoch (after any "
        "pretraining: for the LMN and multi-scale LMN the LAES start) and at "
        "the end of the fit, mean over seeds.",
    ]
    return _dataset_table(head, datasets, cols, by_cell, cell)


def _radius_table(datasets, models, by_cell):
    """Largest radius of the memory matrix and linearized memory map."""
    cols = _models_with("radii", datasets, models, by_cell)
    if not cols:
        return []

    def cell(records):
        logs = [r["radii"] for r in records if r.get("radii")]
        epochs = [e for log in logs for e in log if e is not None]
        if not epochs:
            return ""
        r_mm, r_id, r_d = np.max(np.asarray(epochs, dtype=float), axis=0)
        return f"{r_mm:.4f} / {r_id:.4f} / {r_d:.4f}"

    head = [
        "",
        "## Memory map radius",
        "",
        "Largest spectral radius over the seeds, layers, directions and epochs "
        "(start included) of `W_mm` / `W_mm + W_hm W_mh` / `W_mm + W_hm D W_mh` "
        "over 8 random diagonal `D` in `[0, I]` per epoch (the tanh "
        "derivative), on the module's dense matrices in float64.",
    ]
    return _dataset_table(head, datasets, cols, by_cell, cell)


def _problem_list(records, cap):
    lines = []
    bad = [r for r in records if r.get("status") != "ok"]
    slow = [r for r in records if (r.get("fit_seconds") or 0) > cap]
    notes = sorted(
        {(r["dataset"], r["model"], r["note"]) for r in records if r.get("note")}
    )
    if bad:
        lines += ["", "## Diverged or failed fits", ""]
        lines += [
            f"- {r['dataset']} / {r['model']} / seed {r['seed']}: {r['status']}: "
            f"{r.get('error') or ''}"
            for r in bad
        ]
    recovered: dict[tuple, list] = {}
    for r in records:
        recovered.setdefault((r["dataset"], r["model"]), []).append(
            bool(r.get("recovered"))
        )
    recovered = {k: v for k, v in recovered.items() if any(v)}
    if recovered:
        lines += ["", "## Fits stopped at a divergence (best weights kept)", ""]
        lines += [
            f"- {d} / {m}: {sum(v)} of {len(v)} fits"
            for (d, m), v in sorted(recovered.items())
        ]
    if slow:
        lines += ["", f"## Fits over the {cap:g} s cap", ""]
        lines += [
            f"- {r['dataset']} / {r['model']} / seed {r['seed']}: "
            f"{r['fit_seconds']:.0f} s"
            for r in slow
        ]
    if notes:
        lines += ["", "## Notes", ""]
        lines += [f"- {d} / {m}: {note}" for d, m, note in notes]
    return lines
