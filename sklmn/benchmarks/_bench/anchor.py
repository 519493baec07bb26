"""Does an anchor to the pretrained start hold a weak start back?

``pretrained_alpha`` pulls fine-tuning toward the pretrained start (L2-SP).
On the small tuning datasets the LAES start is strong, and the anchor keeps
the multi-scale LMN near it. This script measures the other side on a task a
LAES start represents poorly: the class of a sequence is the sign of its
*first* step's first feature (2 features, 3-7 steps), so the memory must keep
the oldest input. Test accuracy on 400 test sequences, mean over seeds, for
the LMN and the multi-scale LMN with the automatic anchor (``'auto'``: 10
for a start whose cross-validated accuracy is at least 0.9, else free), free
fine-tuning, anchors of 0.3 and 10 (all with ``fine_tuning='full'``), the
smooth fine-tuning (the default with a LAES start) and no pretraining, at
40 and 200 training sequences.

Usage::

    .venv/bin/python -m sklmn.benchmarks bench anchor [--seeds 0 1 2]

About 1 minute on 2 cores. Results are recorded in ``docs/training.md``
("Fine-tuning anchored to the start").
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

#: the anchors are measured with the papers' full fine-tuning (the
#: classifiers' default when they were recorded); the last rows are the
#: smooth fine-tuning (today's default with a LAES start) and no start
VARIANTS = (
    {"fine_tuning": "full", "pretrained_alpha": "auto"},
    {"fine_tuning": "full", "pretrained_alpha": 0.0},
    {"fine_tuning": "full", "pretrained_alpha": 0.3},
    {"fine_tuning": "full", "pretrained_alpha": 10.0},
    {"fine_tuning": "smooth"},
    {"pretrainer": None},
)


def first_step_task(n: int, rng: np.random.RandomState):
    """Ragged sequences and the sign of their first step's first feature."""
    X = [rng.randn(rng.randint(3, 8), 2) for _ in range(n)]
    return X, np.array(["up" if x[0, 0] > 0 else "down" for x in X])


def main(argv=None) -> None:
    from sklmn.estimators import LMNClassifier, MultiScaleLMNClassifier

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args(argv)
    rng = np.random.RandomState(0)
    small, large, test = (first_step_task(n, rng) for n in (40, 200, 400))
    print("| model | variant | 40 training sequences | 200 training sequences |")
    print("|---|---|---|---|")
    for cls in (LMNClassifier, MultiScaleLMNClassifier):
        for variant in VARIANTS:
            row = []
            for X, y in (small, large):
                scores = []
                for seed in args.seeds:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        est = cls(random_state=seed, **variant).fit(X, y)
                    scores.append(est.score(*test))
                row.append(f"{np.mean(scores):.3f}")
            name = ", ".join(f"{k}={v}" for k, v in variant.items())
            print(f"| {cls.__name__} | {name} | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
