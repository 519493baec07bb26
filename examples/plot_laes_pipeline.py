"""
========================================================
The "linear RNN": a LAES followed by a linear classifier
========================================================

The memory of a Linear Memory Network can be solved in closed form: a linear
autoencoder for sequences (LAES) encodes each sequence into its final memory
state ``m_T`` with ``m_t = A x_t + B m_{t-1}``. Followed by a linear
classifier, it is the papers' "linear RNN" baseline, and exactly the model
that :class:`~sklmn.pretraining.LAESInitializer` transfers into an LMN before
fine-tuning (Carta et al. 2020b §3.2). In scikit-learn it is a two-step pipeline:
``make_pipeline(LAESTransformer(p), LogisticRegression())``.

We plot its test accuracy on sequential digits against the memory size
``p``, for the digits read one row (8 steps) or one pixel (64 steps) at a time.
"""

# %%
# The pipeline
# ------------
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklmn.datasets import load_sequential_digits
from sklmn.laes import LAESTransformer

quick = os.environ.get("SKLMN_EXAMPLE_QUICK") == "1"
sizes = [2, 8, 32] if quick else [2, 4, 8, 16, 32, 48, 64]

results = {}
for mode in ["row", "pixel"]:
    X, y = load_sequential_digits(mode=mode, return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, random_state=0, stratify=y
    )
    scores = []
    for p in sizes:
        linear_rnn = make_pipeline(
            LAESTransformer(p, center=True),
            StandardScaler(),
            LogisticRegression(max_iter=300),
        )
        scores.append(linear_rnn.fit(X_train, y_train).score(X_test, y_test))
    results[mode] = scores
    print(mode, " ".join(f"p={p}: {s:.3f}" for p, s in zip(sizes, scores, strict=True)))

# %%
# Accuracy against memory size
# ----------------------------
fig, ax = plt.subplots(figsize=(6, 4))
labels = {"row": "8 steps x 8 pixels", "pixel": "64 steps x 1 pixel"}
for mode, scores in results.items():
    ax.plot(sizes, scores, marker="o", label=labels[mode])
ax.set_xlabel("memory size p (LAES components)")
ax.set_ylabel("test accuracy")
ax.set_title("LAES + logistic regression on sequential digits")
ax.legend()
fig.tight_layout()
out_dir = os.environ.get("SKLMN_OUTPUT_DIR", ".")
fig.savefig(os.path.join(out_dir, "laes_pipeline.png"), dpi=80)
