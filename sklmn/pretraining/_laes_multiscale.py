"""LAES initialization of the multi-scale LMN: one autoencoder per memory module.

The part of :class:`~sklmn.pretraining.LAESInitializer` for networks with a
clock per memory module (``periods``): Carta, Sperduti & Bacciu (2021),
"Encoding-based memory modules for recurrent neural networks" (the
incremental construction, applied to every module at once), with the
``modules='residual'`` refinement. The network maps each module's LAES to its
weights (:meth:`sklmn.nn.MultiScaleLMN.init_from_laes_`).
"""

from __future__ import annotations

import numpy as np
from scipy.sparse.linalg import LinearOperator
from sklearn.utils import check_random_state
from threadpoolctl import threadpool_limits

from ..laes import XiOperator, randomized_svd_operator, xi_frobenius_sq
from ._common import (
    MATRIX_FREE_N_ITER,
    data_limit,
    fit_laes,
    make_laes,
    network_states,
    padded_sequences,
    readout_rows,
    reduce_components,
    reverse_valid,
    set_linear_,
    subsample_clock,
    valid_mask,
)

__all__ = ["initialize_multiscale"]


def initialize_multiscale(
    self, module, seqs, y_encoded, problem, per_step, weight=None
):
    """LAES initialization of a multi-scale LMN (one LAES per module), for
    the :class:`~sklmn.pretraining.LAESInitializer` ``self``.

    Module ``k`` (period ``2**k``) is set from a LAES of the centered
    inputs subsampled at its clock, ``z_t = W_in (x_t - mu)`` at ``t = 0,
    2**k, 2 * 2**k, ...``, with ``W_in`` the identity (``r = d``
    features) or, when ``hidden_size < d``, the top ``hidden_size``
    principal directions of the inputs. Module ``k`` keeps ``p_k =
    min(N_k, what its subsampled data support)`` components (``N_k`` its
    memory units); its
    diagonal block of ``W_mm`` is ``B_k`` and its off-diagonal blocks are
    zero (the construction of the incremental training of Carta, Sperduti
    & Bacciu, applied to all modules at once); its other units start at
    zero. The hidden units carry the input in one of two ways:

    - ``hidden_size >= p_0 + ... + p_{K-1}`` (the default sizes): module
      ``k`` reads its own ``p_k`` hidden units ``tanh(s A_k z_t)``
      through ``I / s``, the LMN's construction (see
      :class:`~sklmn.pretraining.LAESInitializer`) block by block, so
      that a one-module network starts as the LMN does;
    - otherwise the first ``r`` hidden units carry ``tanh(s z_t)`` for
      every module, read through ``A_k / s``.

    Both are the LAES encoding in the limit ``s -> 0``; at ``s = 1`` the
    first gives each module ``p_k`` nonlinear features of the input
    instead of ``r``. Measured on the tuning data (``docs/training.md``):
    the same mean accuracy of the start, the first better on two of the
    three sets. The readout is fitted (``readout``) on the memory states
    of the initialized network (tanh included).

    A bidirectional network gets the same construction in both
    directions (the same ``mu`` and ``W_in``), the reverse direction's
    modules from LAES of the sequences read backwards (each valid part
    reversed, then subsampled at the reverse clock). ``laes_layers_[j]``
    holds the modules' autoencoders of direction ``j`` (0: forward, 1:
    reverse) and ``n_components_`` counts the forward direction's
    components (the reverse one uses as many).
    """
    recurrent = module.recurrent
    lengths = np.asarray(seqs.lengths)
    data = np.asarray(seqs.data, dtype=np.float64)
    mask = valid_mask(lengths, data.shape[1])
    steps = data[mask]
    mu = steps.mean(axis=0) if self.center else np.zeros(data.shape[2])
    d, H = data.shape[2], recurrent.hidden_size
    s = float(self.input_scale)
    rng = check_random_state(self.random_state)
    notes: list[str] = []
    if H >= d:
        W_in = np.eye(d)
    else:
        _, _, Vt = np.linalg.svd(steps - mu, full_matrices=False)
        W_in = Vt[:H]
        notes.append(
            f"hidden_size={H} < {d} input features: the modules encode the "
            f"top {H} principal directions of the inputs"
        )
    r = W_in.shape[0]
    z = np.where(mask[..., None], (data - mu) @ W_in.T, 0.0)
    directions = [recurrent]
    if recurrent.reverse is not None:
        directions.append(recurrent.reverse)
    laes_dirs = []
    for j, net in enumerate(directions):
        # the reverse direction reads every valid sequence backwards
        z_j = z if j == 0 else reverse_valid(z, lengths)
        laes_modules = []
        # modules='residual': the linear LAES states of the fitted
        # modules, encoded once, (n, ticks, components) each
        module_states: list[np.ndarray] = []
        for k in range(net.n_modules):
            sub, sub_lengths = subsample_clock(z_j, lengths, net.periods[k])
            # reversal keeps the lengths: the reverse direction has the
            # same reductions, noted once
            N = net.memory_sizes[k]
            p = reduce_components(
                self.n_components,
                N,
                [(N, f"the module has memory_size={N}"), data_limit(sub_lengths, r)],
                notes if j == 0 else [],
                f"module {k}: ",
            )
            laes = make_laes(
                p,
                self.solver,
                sub_lengths,
                r,
                center=False,
                random_state=int(rng.randint(np.iinfo(np.int32).max)),
            )
            fit_laes(laes, padded_sequences(sub, sub_lengths))
            residual = self.modules == "residual"
            if residual and module_states:
                _fit_residual_module_(
                    laes,
                    sub,
                    sub_lengths,
                    net.periods[: k + 1],
                    module_states,
                    rng,
                    notes if j == 0 else [],
                    f"module {k}: ",
                )
            if residual and k < net.n_modules - 1:
                sub_c = np.ascontiguousarray(sub)
                module_states.append(laes._encode(sub_c, sub_lengths, True)[1])
            laes_modules.append(laes)
        # the module maps the LAES to its weights (MultiScaleLMN.init_from_laes_)
        recurrent.init_from_laes_(
            [laes.A_ for laes in laes_modules],
            [laes.B_ for laes in laes_modules],
            mu,
            input_projection=W_in,
            input_scale=s,
            direction=j,
        )
        laes_dirs.append(laes_modules)
    states = network_states(recurrent, seqs)
    features = readout_rows(module, states, lengths, per_step)
    W, b = self._fit_readout(
        module, features, y_encoded, lengths, problem, per_step, weight
    )
    set_linear_(module.readout, W, b)
    self.laes_layers_ = laes_dirs
    self.laes_ = laes_dirs[0][0]
    self.n_components_ = int(sum(laes.A_.shape[0] for laes in laes_dirs[0]))
    self.notes_ = notes
    return self


def _module_tick_states(module_states, periods, sub_lengths) -> np.ndarray:
    """The faster modules' states (``module_states[i]``: all ticks of module
    ``i``, period ``periods[i]``) at every tick of a slower module (period
    ``periods[-1]``, valid ticks ``sub_lengths``): rows ``(valid tick,
    sequence-major)``, columns the modules' components side by side.

    A module of period ``P_i`` holds at time ``t`` the state of its last
    update, tick ``t // P_i`` of its subsampled sequence.
    """
    P_k = periods[-1]
    n_ticks = int(np.max(sub_lengths))
    mask_k = valid_mask(sub_lengths, n_ticks)
    times = np.arange(n_ticks) * P_k
    blocks = [
        states[:, times // P_i][mask_k]
        for P_i, states in zip(periods[:-1], module_states, strict=True)
    ]
    return np.concatenate(blocks, axis=1)


def _fit_residual_module_(
    laes, sub, sub_lengths, periods, module_states, rng, notes, prefix
) -> None:
    """Refit a module's LAES on what the faster modules do not encode.

    ``laes`` is the module's fitted LAES (period ``periods[-1]``) of its
    subsampled inputs ``sub`` (valid ticks ``sub_lengths``);
    ``module_states`` the linear LAES states of the faster modules (periods
    ``periods[:-1]``), every tick. The module's data matrix Ξ_k (its
    subsampled, reversed histories) loses its least-squares fit on the
    faster modules' (linear) states at the same steps, ``Ξ_k' = (I - Q Qᵀ)
    Ξ_k`` with ``Q`` an orthonormal basis of those states, and the leading
    right singular vectors of ``Ξ_k'`` replace the module's components (so
    ``A_k`` and ``B_k``, formed from them as for any LAES). ``Ξ_k'`` is only
    ever used through products (the matrix-free operator of Ξ_k), so the
    cost is that of the matrix-free solver. One BLAS thread, as
    :func:`fit_laes`. Directions the faster modules already encode entirely
    (singular values of ``Ξ_k'`` below ``1e-9`` times the norm of Ξ_k) are
    dropped, with a note, keeping at least one component.
    """
    with threadpool_limits(limits=1, user_api="blas"):
        _fit_residual(
            laes, sub, sub_lengths, periods, module_states, rng, notes, prefix
        )


def _fit_residual(
    laes, sub, sub_lengths, periods, module_states, rng, notes, prefix
) -> None:
    sub = np.ascontiguousarray(sub)
    M = _module_tick_states(module_states, periods, sub_lengths)
    U, sv, _ = np.linalg.svd(M, full_matrices=False)
    rank = int(np.sum(sv > sv[:1].max(initial=0.0) * max(M.shape) * 1e-12))
    Q = U[:, :rank]
    xi = XiOperator(sub, sub_lengths, n_lags=laes.max_length_, workers=1)

    def matmat(V):
        Y = xi.matmat(V)
        return Y - Q @ (Q.T @ Y)

    def rmatmat(Y):
        return xi.rmatmat(Y - Q @ (Q.T @ Y))

    residual = LinearOperator(
        xi.shape,
        matvec=lambda v: matmat(v.reshape(-1, 1)).ravel(),
        rmatvec=lambda y: rmatmat(y.reshape(-1, 1)).ravel(),
        matmat=matmat,
        rmatmat=rmatmat,
        dtype=np.float64,
    )
    s, comps = randomized_svd_operator(
        residual,
        laes.n_components_,
        n_iter=2 * MATRIX_FREE_N_ITER + 3,
        random_state=int(rng.randint(np.iinfo(np.int32).max)),
    )
    norm_sq = xi_frobenius_sq(sub, sub_lengths)
    rank = max(1, int(np.sum(s > 1e-9 * np.sqrt(norm_sq))))
    reason = "the faster modules already encode the rest of its history"
    rank = reduce_components(None, s.size, [(rank, reason)], notes, prefix)
    laes._set_solution(
        s[:rank],
        comps[:rank],
        laes.mean_,
        norm_sq,
        laes.max_length_,
        sub.shape[2],
        laes.n_steps_total_,
    )
