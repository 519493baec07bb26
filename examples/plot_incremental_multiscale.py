"""
=========================================
Incremental training of a multi-scale LMN
=========================================

A multi-scale LMN splits its linear memory into modules updated at
exponentially slower rates (module ``k`` every ``2**k`` steps). The papers
train it incrementally (Carta et al. 2021 Alg. 2, Carta et al. 2020a §4.1): start with
one module, train, then add the next slower module, whose weights come from a
linear autoencoder for sequences (LAES) fit on the hidden states subsampled
at the new module's clock, and whose readout columns are a least-squares fit;
then fine-tune everything and repeat until every module has been added;
only the ordinary early-stopping rule (on the validation loss) may end
training sooner, and the model of the best epoch is kept (Carta et al. 2020a
§5.3). ``growth='adaptive'`` instead stops growing at the first stage that
does not improve the validation loss.

:class:`~sklmn.pretraining.IncrementalTraining` plugs this schedule into
:class:`~sklmn.estimators.MultiScaleLMNRegressor`; ``n_modules`` is the
maximum number of modules. The task: remember the first value of a noisy
sequence of 32 steps. Each growth rebuilds the optimizer (fresh Adam state
for the new parameters), so a moderate learning rate keeps the transferred
weights from being jolted at the start of each stage.
"""

# %%
# Data and model
# --------------
import os
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from sklearn.exceptions import ConvergenceWarning

from sklmn.estimators import MultiScaleLMNRegressor
from sklmn.pretraining import IncrementalTraining

quick = os.environ.get("SKLMN_EXAMPLE_QUICK") == "1"

rng = np.random.RandomState(0)
n, T = (200, 16) if quick else (500, 32)
X = rng.randn(n, T, 1)
y = X[:, 0, 0]  # the target is the very first input

model = MultiScaleLMNRegressor(
    hidden_size=16,
    memory_size=4,
    n_modules=4,  # at most 4 modules: periods 1, 2, 4, 8
    max_iter=12 if quick else 40,
    learning_rate_init=0.003,
    early_stopping=True,  # the validation loss selects the kept model
    validation_fraction=0.2,
    n_iter_no_change=100,
    incremental=IncrementalTraining(epochs_per_module=3 if quick else 8),
    random_state=0,
)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)
    model.fit(X, y)

# %%
# What happened at each stage
# ---------------------------
for stage in model.module_history_:
    print(
        f"{stage['n_modules']} module(s) from epoch {stage['epoch_added']}: "
        f"best validation loss {-stage['best_score']:.3f}, kept: {stage['kept']}"
    )
print(f"modules in the final model: {model.n_modules_}")

# %%
# Validation score per epoch, and where modules were added
# --------------------------------------------------------
fig, ax = plt.subplots(figsize=(6, 4))
epochs = np.arange(1, len(model.validation_scores_) + 1)
ax.plot(epochs, model.validation_scores_, marker=".", color="k")
for stage in model.module_history_[1:]:
    ax.axvline(stage["epoch_added"] + 0.5, color="tab:red", linestyle="--")
    ax.text(
        stage["epoch_added"] + 0.7,
        min(model.validation_scores_),
        f"+module {stage['n_modules']}",
        color="tab:red",
        rotation=90,
        va="bottom",
    )
ax.set_xlabel("epoch")
ax.set_ylabel("validation R²")
ax.set_title("Incremental multi-scale LMN")
fig.tight_layout()
out_dir = os.environ.get("SKLMN_OUTPUT_DIR", ".")
fig.savefig(os.path.join(out_dir, "incremental_multiscale.png"), dpi=80)
