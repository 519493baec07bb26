r"""Effect of the stable initialization of the LMN memory (``init_radius``).

For several layer sizes, prints the spectral radius of the linearized memory
map ``W_mm + W_hm W_mh`` of freshly initialized LMN layers (raw draw versus
``init_radius=0.95``), the norm of the memory driven by white-noise input at
t = 100 and t = 520, and the training loss of the first epoch of an
``LMNClassifier`` (no pretraining) on a long-series dataset of the time-series
suite.

Usage::

    .venv/bin/python -m sklmn.benchmarks bench init-radius [--seeds 5] \
        [--dataset ArrowHead]

The dataset needs the wheels of ``bash dev.sh data``; without them the last
part is skipped.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import torch

from sklmn.nn import LMN
from sklmn.nn._base import memory_map_radius

SIZES = [(2, 29), (18, 18), (32, 32), (64, 64)]


def radius_and_growth(seeds: int) -> None:
    print("| hidden/memory | init | radius (median) | ||m_100|| | ||m_520|| |")
    print("|---|---|---|---|---|")
    for H, M in SIZES:
        for label, radius in (("raw draw", None), ("init_radius=0.95", 0.95)):
            rhos, n100, n520 = [], [], []
            for seed in range(seeds):
                torch.manual_seed(seed)
                lmn = LMN(1, H, M, init_radius=radius)
                layer = lmn.layers[0]
                rhos.append(
                    memory_map_radius(layer.weight_mm, layer.weight_hm, layer.weight_mh)
                )
                with torch.no_grad():
                    out, _ = lmn(torch.randn(8, 520, 1))
                norms = out.norm(dim=-1).mean(0)
                n100.append(float(norms[99]))
                n520.append(float(norms[519]))
            print(
                f"| {H}/{M} | {label} | {np.median(rhos):.3f} | "
                f"{np.median(n100):.3g} | {np.median(n520):.3g} |"
            )


def first_epoch_loss(seeds: int, dataset: str) -> None:
    from sklmn.datasets import load_timeseries_dataset
    from sklmn.estimators import LMNClassifier

    try:
        X, y = load_timeseries_dataset(dataset, split="train")
    except FileNotFoundError as exc:
        print(f"(skipped the {dataset} part: {exc})")
        return

    class RawInit(LMNClassifier):
        def _build_module(self, input_size):
            return LMN(input_size, self.hidden_size, self.memory_size, init_radius=None)

    print(
        f"\nFirst-epoch training loss on {dataset} (no pretraining), median "
        f"over {seeds} seeds:"
    )
    for label, cls in (("raw draw", RawInit), ("init_radius=0.95", LMNClassifier)):
        losses = []
        for seed in range(seeds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = cls(pretrainer=None, max_iter=1, random_state=seed).fit(X, y)
            losses.append(est.loss_curve_[0])
        print(
            f"  {label}: {np.median(losses):.3f} (all: "
            f"{', '.join(f'{v:.2f}' for v in losses)})"
        )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--dataset", default="ArrowHead")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    radius_and_growth(args.seeds)
    first_epoch_loss(args.seeds, args.dataset)


if __name__ == "__main__":
    main()
