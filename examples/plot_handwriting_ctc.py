"""
========================================
Transcribing online handwriting with CTC
========================================

Online handwriting recognition maps a pen trajectory to the text it writes,
without knowing which part of the trajectory draws which letter. A
recurrent network trained with connectionist temporal classification (CTC,
Graves et al. 2006) learns this from (trajectory, text) pairs alone: it
outputs, at every time step, the posteriors of the letters and of an extra
*blank*; a labelling is read off a path of outputs by merging repeated
letters and dropping blanks, and the loss sums the probabilities of all the
paths that give the target text. This is the set-up of the online
handwriting experiment of Carta et al. (2020a), there on IAM-OnDB, here on
the generated stand-in :func:`~sklmn.datasets.load_online_handwriting`
(words drawn with the Hershey fonts by synthetic writers; validation and
test writers are not seen in training).

Every sequence classifier of sklmn transcribes with ``target='ctc'``: ``y``
is a list of strings (or of label lists), ``classes_`` the learned
alphabet, ``predict`` the decoded strings (best-path decoding, or prefix
beam search with ``decoding='beam'``), ``predict_proba`` the per-step
posteriors (blank last), and ``score`` the best-path accuracy ``1 - label
error rate``. The model here is a bidirectional LSTM, the best model of the
paper's comparison (the multi-scale LMN estimators take the same
arguments).

Generating the data needs the optional ``Hershey-Fonts`` package
(``pip install 'sklmn[handwriting]'``).
"""

# %%
# Data: words written by synthetic writers
# ----------------------------------------
import os
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator
from sklearn.exceptions import ConvergenceWarning

from sklmn.datasets import load_online_handwriting
from sklmn.estimators import RNNClassifier
from sklmn.metrics import label_error_rate

quick = os.environ.get("SKLMN_EXAMPLE_QUICK") == "1"

vocabulary = ["an", "box", "day", "dog", "fix", "her", "now", "old", "way", "zero"]
data = load_online_handwriting(
    n_writers=8 if quick else 12,
    samples_per_writer=15 if quick else 30,
    n_valid_writers=1,
    n_test_writers=2,
    vocabulary=vocabulary[:5] if quick else vocabulary,
    point_density=2.0 if quick else 5.0,
    random_state=0,
)
print(
    f"{len(data.X_train)} training, {len(data.X_valid)} validation and "
    f"{len(data.X_test)} test trajectories; (dx, dy, pen_up) steps: "
    f"{int(np.mean([len(x) for x in data.X_train]))} on average"
)

# %%
# A bidirectional LSTM trained with the CTC loss
# ----------------------------------------------
# The validation writers select the kept epoch (early stopping on the
# validation CTC loss). The quick mode (the documentation build and the
# tests) trains a smaller network on fewer, coarser trajectories.
model = RNNClassifier(
    cell="lstm",
    hidden_size=16 if quick else 24,
    bidirectional=True,
    target="ctc",
    max_iter=30 if quick else 40,
    batch_size=16,
    learning_rate_init=0.02 if quick else 0.01,
    early_stopping=True,
    n_iter_no_change=10,
    random_state=0,
)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)
    model.fit(data.X_train, data.y_train, X_val=data.X_valid, y_val=data.y_valid)
print(f"alphabet: {''.join(model.classes_)} (+ blank)")

# %%
# Best-path accuracy on the test writers
# --------------------------------------
# ``score`` is one minus the label error rate (total edit distance over the
# total length of the test words) of best-path decoding; prefix beam search
# decodes the same posteriors more thoroughly.
predicted = model.predict(data.X_test)
print(f"best-path accuracy: {model.score(data.X_test, data.y_test):.3f}")
beam = 1 - label_error_rate(
    data.y_test, model.set_params(decoding="beam", beam_width=8).predict(data.X_test)
)
print(f"beam-search accuracy: {beam:.3f}")
model.set_params(decoding="greedy")
for truth, guess in list(zip(data.y_test, predicted, strict=True))[:5]:
    print(f"  {str(truth):5} -> {guess}")

# %%
# A test trajectory, its transcription and the per-step posteriors
# ----------------------------------------------------------------
# The first test word that the model transcribes correctly (the accuracy
# above says how often that happens). The pen path is the cumulative sum of
# the displacements; a stroke ends where ``pen_up`` is 1. Below it, the
# posteriors of the letters (colors) and of the blank (grey): CTC networks
# emit each letter as a short spike and the blank in between.
correct = [
    j
    for j, (t, p) in enumerate(zip(data.y_test, predicted, strict=True))
    if t == p
]
i = correct[0] if correct else 0
x = data.X_test[i]
position = np.cumsum(x[:, :2], axis=0)
proba = model.predict_proba([x])[0]

fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 5.5))
start = 0
for end in np.flatnonzero(x[:, 2] == 1):
    top.plot(*position[start : end + 1].T, color="k", lw=2)
    start = end + 1
top.set_aspect("equal")
top.axis("off")
top.set_title(f"written: '{data.y_test[i]}', transcribed: '{predicted[i]}'")
steps = np.arange(len(x))
bottom.plot(steps, proba[:, -1], color="0.6", label="blank")
for k, letter in enumerate(model.classes_):
    if proba[:, k].max() > 0.2:
        bottom.plot(steps, proba[:, k], label=str(letter))
bottom.xaxis.set_major_locator(MaxNLocator(integer=True))
bottom.set_xlabel("time step")
bottom.set_ylabel("posterior")
bottom.legend(ncol=6, fontsize=8, loc="upper right")
fig.tight_layout()
out_dir = os.environ.get("SKLMN_OUTPUT_DIR", ".")
fig.savefig(os.path.join(out_dir, "handwriting_ctc.png"), dpi=80)
