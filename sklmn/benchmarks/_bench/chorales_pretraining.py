r"""Where does unrolled pretraining lose on the chorales? One model, one change.

The papers' report (``python -m sklmn.benchmarks --preset full``) trains
the LMN on the bundled Bach chorales with and without the unrolled
pretraining of Carta, Sperduti & Bacciu (2021, "Encoding-based memory
modules for recurrent neural networks", Alg. 1); the pretrained LMN ends
about 2.5 points below the one trained from a random start, where the
paper has it 0.5 points above. This script trains one of the experiment's
models (its settings, ``sklmn.benchmarks._exp_chorales``) with optional
changes and prints what each stage of the pretraining leaves:

- the unrolled RNN's training loss (first, middle and last epoch): whether
  it converged within its budget;
- the share of the energy of the unrolled RNN's hidden sequences that the
  LAES keeps (``explained_variance_ratio_`` summed): whether the memory
  units can hold the hidden sequences;
- the spectral radius of the transferred memory matrix (the LAES's ``B``);
- the fine-tuned model's training loss at its last epoch, its best
  validation loss and that epoch, and the test frame-level accuracy at the
  validation-tuned threshold (the report's metric).

Usage::

    .venv/bin/python -m sklmn.benchmarks bench chorales-pretraining
    .venv/bin/python -m sklmn.benchmarks bench chorales-pretraining --memory 250
    .venv/bin/python -m sklmn.benchmarks bench chorales-pretraining --model LMN \
        --memory 250
    .venv/bin/python -m sklmn.benchmarks bench chorales-pretraining --pre-epochs 150

One torch thread; 1.5-2.5 minutes per run on the 2-core machine. Results
are recorded in the chorales notes of the papers' report
(``sklmn/benchmarks/_exp_chorales.py``).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import torch

from .._exp_common import int_at_least


def main(argv=None) -> None:
    from sklearn.base import clone

    from sklmn.datasets import load_bach_chorales
    from sklmn.pretraining._common import spectral_radius

    from .._exp_chorales import _SIZES, _models, _tuned_accuracy

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", default="pretrained LMN", choices=["pretrained LMN", "LMN"]
    )
    parser.add_argument(
        "--memory",
        type=int_at_least(1),
        default=None,
        help="memory units (default: the experiment's 100)",
    )
    parser.add_argument(
        "--pre-epochs",
        type=int_at_least(1),
        default=None,
        help="epochs of the unrolled RNN (default: the experiment's 40)",
    )
    parser.add_argument("--seed", type=int_at_least(0), default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    models, _, reason = _models(_SIZES["full"], args.seed)
    if args.model not in models:
        raise SystemExit(f"{args.model} is not available: {reason}")
    est = clone(models[args.model])
    if args.memory is not None:
        est.set_params(memory_size=args.memory)
    if args.pre_epochs is not None:
        if args.model != "pretrained LMN":
            parser.error("--pre-epochs needs --model 'pretrained LMN'")
        est.set_params(pretrainer__max_iter=args.pre_epochs)
    data = load_bach_chorales()
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(data.X_train, data.y_train, X_val=data.X_valid, y_val=data.y_valid)
    seconds = time.perf_counter() - start
    acc, threshold = _tuned_accuracy(
        est, data.X_valid, data.y_valid, data.X_test, data.y_test
    )
    print(
        f"{args.model}, {est.hidden_size} hidden / {est.memory_size} memory "
        f"units, seed {args.seed}"
    )
    pre = getattr(est, "pretrainer_", None)
    if pre is not None and hasattr(pre, "laes_"):
        curve = pre.loss_curve_
        print(
            f"unrolled RNN training loss: {curve[0]:.4f} -> "
            f"{curve[len(curve) // 2]:.4f} -> {curve[-1]:.4f} "
            f"({len(curve)} epochs)"
        )
        kept = float(np.sum(pre.laes_.explained_variance_ratio_))
        radius = spectral_radius(pre.laes_.B_)
        print(
            f"LAES of its hidden sequences: {pre.n_components_} components "
            f"keep {100 * kept:.2f}% of the energy; transferred memory "
            f"matrix B: spectral radius {radius:.3f}"
        )
    print(
        f"fine-tuning: training loss {est.loss_curve_[-1]:.4f} at the last "
        f"epoch; best validation loss {est.best_loss_:.4f} at epoch "
        f"{est.best_epoch_} of {est.n_iter_}; test frame-level accuracy "
        f"{100 * acc:.2f}% (threshold {threshold})"
    )
    print(f"{seconds:.0f} s")


if __name__ == "__main__":
    main()
