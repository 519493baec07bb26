"""
==========================================
Generating a signal with a multi-scale LMN
==========================================

Carta et al. 2021 §5.4 asks a recurrent network to *generate* 300 consecutive samples
of a recording from an all-zero input: the network must store the waveform in
its parameters and replay it with its own dynamics. The multi-scale LMN
(:class:`~sklmn.estimators.MultiScaleLMNRegressor`) splits its linear memory
into modules updated every 1, 2, 4, ... steps, so the slow modules can keep
the long-range shape of the signal while the fast ones add detail.

The signal is a window of speech shipped with sklmn
(:func:`~sklmn.datasets.load_generation_signal`); the input is zeros of shape
``(1, 300, 1)`` and the target the 300 samples, one per step
(``target='timestep'``). The score is the normalized mean squared error
``Σ(y - ŷ)² / Σ(y - ȳ)²``.
"""

# %%
# Data
# ----
import os
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import torch
from sklearn.exceptions import ConvergenceWarning

from sklmn.datasets import load_generation_signal
from sklmn.estimators import MultiScaleLMNRegressor
from sklmn.metrics import normalized_mse

quick = os.environ.get("SKLMN_EXAMPLE_QUICK") == "1"
# Small recurrent models train fastest on one thread (intra-op parallelism
# costs more than it saves at these sizes), and the fixed epoch budgets below
# are meant to end before convergence.
torch.set_num_threads(1)
warnings.filterwarnings("ignore", category=ConvergenceWarning)
X, y = load_generation_signal(return_X_y=True)
print(f"input {X.shape} (all zeros), target {y.shape}")

# %%
# A multi-scale LMN with 9 modules (periods 1 .. 256)
# ---------------------------------------------------
# 16 hidden units and 2 memory units per module: about 950 parameters, the
# budget of Carta et al. 2021 Table 4. One sequence, so each epoch is one gradient step.
model = MultiScaleLMNRegressor(
    hidden_size=16,
    memory_size=2,
    n_modules=9,
    target="timestep",
    max_iter=60 if quick else 500,
    batch_size=1,
    learning_rate_init=1e-2,
    alpha=0.0,
    n_iter_no_change=10_000,
    tol=0.0,
    random_state=0,
)
model.fit(X, y)
y_gen = model.predict(X)
print(f"NMSE after {model.n_iter_} epochs: {normalized_mse(y[0], y_gen[0]):.4f}")

# %%
# Generated sequence against the target (Carta et al. 2021 Fig. 9)
# ----------------------------------------------------------------
fig, ax = plt.subplots(figsize=(6, 2.8))
ax.plot(y[0], color="0.6", lw=2, label="target")
ax.plot(y_gen[0], color="C3", lw=1, label="MS-LMN")
ax.set_xlabel("time step")
ax.set_title("Sequence generation from zero input")
ax.legend(loc="upper right")
fig.tight_layout()
out_dir = os.environ.get("SKLMN_OUTPUT_DIR", ".")
fig.savefig(os.path.join(out_dir, "sequence_generation.png"), dpi=80)
