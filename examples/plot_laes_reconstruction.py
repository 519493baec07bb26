"""
=========================================================
Reconstructing sequences with a linear autoencoder (LAES)
=========================================================

A linear autoencoder for sequences encodes a whole sequence into one memory
vector with the recursion ``m_t = A x_t + B m_{t-1}`` and decodes it backwards.
:class:`~sklmn.laes.LAESTransformer` computes ``A`` and ``B`` in closed form
from the singular value decomposition of the matrix Ξ of all reversed prefixes
(Carta, Sperduti & Bacciu, §2.3).

We read scikit-learn's 8x8 digits as sequences in two ways, as 8 steps of 8
pixels (one image row per step) and as 64 steps of 1 pixel, and plot the
reconstruction error against the memory size, like Fig. 8a of the paper: the
*SVD error* is the part of ``||Ξ||^2`` outside the top singular directions
(``1 - sum(explained_variance_ratio_)``), the *LAES error* is the relative
error of decoding every prefix from its memory state
(:meth:`~sklmn.laes.LAESTransformer.reconstruction_error`). Both reach zero
once the memory is as large as the rank of Ξ.
"""

# %%
# Data: digits as sequences
# -------------------------
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits

from sklmn.laes import LAESTransformer

images = load_digits().images / 16.0  # (1797, 8, 8), values in [0, 1]
readings = {
    "8 steps x 8 pixels": images,  # (n, T=8, a=8): one row per step
    "64 steps x 1 pixel": images.reshape(len(images), 64),  # univariate (n, T)
}

# %%
# Reconstruction error against memory size
# ----------------------------------------
# One closed-form fit per memory size (the Gram solver: ΞᵀΞ is 64 x 64 here).
sizes = [1, 2, 4, 8, 16, 24, 32, 48, 64]
errors = {}
for name, X in readings.items():
    svd_err, laes_err = [], []
    for p in sizes:
        laes = LAESTransformer(n_components=p, center=True).fit(X)
        svd_err.append(1.0 - laes.explained_variance_ratio_.sum())
        laes_err.append(laes.reconstruction_error(X))
    errors[name] = (np.array(svd_err), np.array(laes_err))
    print(f"{name}:")
    print("  memory size " + " ".join(f"{p:6d}" for p in sizes))
    print("  SVD error   " + " ".join(f"{e:6.3f}" for e in svd_err))
    print("  LAES error  " + " ".join(f"{e:6.3f}" for e in laes_err))

# %%
# Decoding images from the final memory state
# -------------------------------------------
# The final state of a digit read row by row is decoded backwards into 8 rows.
X = readings["8 steps x 8 pixels"]
decoded = {}
for p in (4, 16, 64):
    laes = LAESTransformer(n_components=p, center=True).fit(X)
    decoded[p] = laes.inverse_transform(laes.transform(X[:5]))

fig = plt.figure(figsize=(10, 6))
grid = fig.add_gridspec(2, 20, height_ratios=[4, 1])
ax = fig.add_subplot(grid[0, :])
for (name, (svd_err, laes_err)), color in zip(
    errors.items(), ("C0", "C1"), strict=True
):
    ax.plot(sizes, svd_err, "--", color=color, label=f"SVD, {name}")
    ax.plot(sizes, laes_err, "o-", color=color, label=f"LAES, {name}")
ax.set_xlabel("memory size (n_components)")
ax.set_ylabel("relative reconstruction error")
ax.set_title("LAES on digits (cf. Fig. 8a of Carta et al.)")
ax.legend()
for i in range(5):
    for j, (label, imgs) in enumerate(
        [("original", X[:5])] + [(f"p={p}", decoded[p]) for p in decoded]
    ):
        sub = fig.add_subplot(grid[1, 4 * i + j])
        sub.imshow(imgs[i], cmap="gray_r", vmin=0, vmax=1)
        sub.set_xticks([])
        sub.set_yticks([])
        if i == 0:
            sub.set_title(label, fontsize=7)
fig.tight_layout()

out_dir = os.environ.get("SKLMN_OUTPUT_DIR", ".")
path = os.path.join(out_dir, "laes_reconstruction.png")
fig.savefig(path, dpi=80)
print(f"saved {path}")
