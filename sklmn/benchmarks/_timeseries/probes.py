"""What the suite records inside a fit: the start's test score and the
memory map's radius per epoch (LMN-family models).

``StartProbe`` snapshots the network when training begins (after any
pretraining: the model before the first epoch) so that the runner can score
the start beside the final model. ``RadiusProbe`` logs, at the start and after
every epoch, the largest spectral radius over layers and directions of the
memory matrix ``W_mm`` and of the linearized memory map ``W_mm + W_hm D W_mh``
for ``D = I`` and for random diagonal ``D`` in ``[0, I]`` (the tanh
derivative), computed in float64 on the module's actual dense matrices.
"""

from __future__ import annotations

import copy
import time

import numpy as np
import torch
from skorch.callbacks import Callback

__all__ = ["RadiusProbe", "StartProbe", "memory_maps", "map_radii"]


def memory_maps(module) -> list[tuple]:
    """``(W_mm, W_hm, W_mh)`` of every LMN layer / direction and multi-scale
    network (all modules active) in ``module``, as detached float64 arrays.

    Examples
    --------
    >>> from sklmn.nn import LMN
    >>> [W.shape for W in memory_maps(LMN(2, 3, 4))[0]]
    [(4, 4), (4, 3), (3, 4)]
    """
    maps = []
    with torch.no_grad():
        for sub in module.modules():
            if not (hasattr(sub, "weight_hm") and hasattr(sub, "weight_mh")):
                continue
            if hasattr(sub, "masked_weight_mm"):
                W_mm = sub.masked_weight_mm()
            else:
                try:
                    W_mm = sub.weight_mm
                except AttributeError:
                    continue
            maps.append(
                tuple(
                    W.detach().double().cpu().numpy()
                    for W in (W_mm, sub.weight_hm, sub.weight_mh)
                )
            )
    return maps


def map_radii(module, n_random: int = 8, seed: int = 0) -> tuple | None:
    """Largest ``rho(W_mm)``, ``rho(W_mm + W_hm W_mh)`` and, over
    ``n_random`` random diagonal ``D`` in ``[0, I]``, ``rho(W_mm + W_hm D
    W_mh)``; None when ``module`` holds no LMN memory.

    Examples
    --------
    >>> import torch
    >>> from sklmn.nn import LMN
    >>> lmn = LMN(1, 2, 2)
    >>> with torch.no_grad():
    ...     _ = lmn.layers[0].weight_mm.copy_(0.5 * torch.eye(2))
    ...     _ = lmn.layers[0].weight_mh.zero_()
    >>> map_radii(lmn)
    (0.5, 0.5, 0.5)
    """
    maps = memory_maps(module)
    if not maps:
        return None
    rng = np.random.RandomState(seed)

    def rho(A):
        return float(np.abs(np.linalg.eigvals(A)).max())

    r_mm = r_id = r_rand = 0.0
    for W_mm, W_hm, W_mh in maps:
        r_mm = max(r_mm, rho(W_mm))
        r_id = max(r_id, rho(W_mm + W_hm @ W_mh))
        for _ in range(n_random):
            d = rng.uniform(size=W_mh.shape[0])
            r_rand = max(r_rand, rho(W_mm + (W_hm * d) @ W_mh))
    return round(r_mm, 6), round(r_id, 6), round(r_rand, 6)


class StartProbe(Callback):
    """Keep a copy of the network (``module_``) when training begins.

    The suite runs it before the model's own callbacks (the estimator's
    ``_leading_callbacks``), so that the copy is the pretrained start even
    where a callback changes the network when training begins (the
    projection fine-tuning's steps).

    The whole module is copied, not only its state: a network that grows
    during training (the multi-scale LMN's ``incremental`` schedule) ends
    with parameters of other shapes than its start.
    """

    def on_train_begin(self, net, **kwargs):
        t0 = time.perf_counter()
        self.module_ = copy.deepcopy(net.module_)
        #: wall seconds spent here (the runner leaves them out of the fit's)
        self.seconds_ = time.perf_counter() - t0


class RadiusProbe(Callback):
    """Log :func:`map_radii` at the start and after every epoch (``log_``)."""

    def __init__(self, n_random: int = 8):
        self.n_random = n_random

    def on_train_begin(self, net, **kwargs):
        t0 = time.perf_counter()
        self.log_ = [map_radii(net.module_, self.n_random)]
        #: wall seconds spent here (the runner leaves them out of the fit's)
        self.seconds_ = time.perf_counter() - t0

    def on_epoch_end(self, net, **kwargs):
        t0 = time.perf_counter()
        self.log_.append(map_radii(net.module_, self.n_random))
        self.seconds_ += time.perf_counter() - t0
