"""How a linear autoencoder for sequences becomes a recurrent module's weights.

The modules own this mapping: :meth:`LMN.init_from_laes_`,
:meth:`ElmanRNN.init_from_laes_`, :meth:`MultiScaleLMN.init_from_laes_` (and
``init_module_from_laes_``) and :meth:`LMN.init_from_unrolled_` call the
functions here; a pretrainer fits the LAES (``A``, ``B``, mean ``mu``) and
hands the matrices over, it never writes a recurrent weight itself. The
constructions are those of Carta, Sperduti & Bacciu (2020), "Autoencoder-based
initialization for recurrent neural networks with a linear memory", §3.2
(LMN), Pasa & Sperduti (2014), "Pre-training of recurrent neural networks via
linear autoencoders" (Elman RNN), and Carta, Sperduti & Bacciu (2021),
"Encoding-based memory modules for recurrent neural networks", Alg. 1-2
(unrolled transfer, multi-scale modules).

Everything is computed in float64 numpy and copied into the parameters (their
dtype and device); a parametrized weight (``memory_matrix='spectral'``) is
assigned, which stores the matrix through the parametrization's
``right_inverse`` (restarting the latch rule).
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import torch
from torch import Tensor, nn
from torch.nn.utils import parametrize

__all__: list[str] = []


def as_numpy(value: object, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """``value`` as a float64 array of ``shape`` (a ValueError naming it
    otherwise)."""
    if isinstance(value, Tensor):
        value = value.detach().to("cpu", torch.float64).numpy()
    array = np.asarray(value, dtype=np.float64)
    if array.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {array.shape}")
    return array


def numpy_weight(tensor: Tensor) -> np.ndarray:
    """A float64 numpy copy of a weight (the effective value of a
    parametrized one)."""
    return tensor.detach().to("cpu", torch.float64).numpy().copy()


@torch.no_grad()
def set_weight_(module: nn.Module, name: str, value: np.ndarray) -> None:
    """Set ``module.<name>`` (plain or parametrized) to ``value``."""
    like = getattr(module, name)
    tensor = torch.as_tensor(value, dtype=like.dtype, device=like.device)
    if name == "weight_mm" and getattr(module, "memory_matrix", None) == "schur":
        # the Schur memory turns the memory coordinates (set_memory_)
        module.set_memory_(torch.as_tensor(value, dtype=torch.float64))
    elif parametrize.is_parametrized(module, name):
        setattr(module, name, tensor)
    else:
        like.copy_(tensor)
        normalization = getattr(module, "memory_normalization", None)
        if name == "weight_mm" and normalization is not None:
            # the multi-scale LMN's 'spectral' memory: an assigned matrix
            # restarts the latch rule, as the LMN's parametrization does
            normalization.right_inverse(like)


def _set_weights_(module: nn.Module, W_xh, b_h, W_mh, W_hm, W_mm) -> None:
    """Set the five LMN weights of ``module`` (a layer or a multi-scale
    direction)."""
    for name, value in (
        ("weight_xh", W_xh),
        ("bias_h", b_h),
        ("weight_mh", W_mh),
        ("weight_hm", W_hm),
        ("weight_mm", W_mm),
    ):
        set_weight_(module, name, value)


def spectral_radius_np(M: np.ndarray) -> float:
    """Largest eigenvalue modulus of a square matrix (0 for an empty one)."""
    if M.size == 0:
        return 0.0
    return float(np.abs(np.linalg.eigvals(M)).max())


def check_scale(input_scale: object, name: str = "input_scale") -> float:
    """A finite ``input_scale > 0`` as a float (a ValueError naming it,
    as ``name``, otherwise)."""
    if (
        isinstance(input_scale, bool)
        or not isinstance(input_scale, numbers.Real)
        or not (0.0 < float(input_scale) < math.inf)
    ):
        raise ValueError(f"{name} must be a finite float > 0, got {input_scale!r}")
    return float(input_scale)


def resolve_layer(module: nn.Module, layer: object, direction: object) -> int:
    """The layer index of ``init_from_laes_`` (``layer=None``: the single
    unidirectional layer), ``layer`` and ``direction`` validated against the
    module's ``num_layers`` and ``num_directions``."""
    n_layers, n_dirs = module.num_layers, module.num_directions
    if layer is None:
        if n_layers != 1 or n_dirs != 1:
            raise ValueError(
                "init_from_laes_ needs a single unidirectional layer, got "
                f"num_layers={n_layers}, bidirectional={n_dirs == 2}; pass "
                "layer= (and direction=) for a specific layer"
            )
        layer = 0
    if (
        isinstance(layer, bool)
        or not isinstance(layer, int)
        or not 0 <= layer < n_layers
    ):
        raise ValueError(f"layer must be an int in 0..{n_layers - 1}, got {layer!r}")
    if isinstance(direction, bool) or direction not in range(n_dirs):
        raise ValueError(
            f"direction must be an int in 0..{n_dirs - 1}, got {direction!r}"
        )
    return layer


def check_components(p: int, limit: int, what: str) -> None:
    if not 1 <= p <= limit:
        raise ValueError(
            f"A must have between 1 and {what}={limit} rows (one per LAES "
            f"component), got {p}"
        )


def laes_input_units(hidden_size: int, p: int, n_features: int, output: str) -> int:
    """Hidden units ``r`` that carry the input of a ``p``-component LAES in an
    LMN layer: ``p`` when they fit (the paper's ``W_xh = s A``), otherwise
    ``min(p, n_features)`` (the factored input). With ``output='hidden'``
    another ``p`` hidden units expose the memory, so only ``hidden_size - p``
    units are available for the input.

    Examples
    --------
    >>> from sklmn.nn._laes_weights import laes_input_units
    >>> laes_input_units(10, 4, 2, "memory"), laes_input_units(10, 6, 2, "hidden")
    (4, 2)
    """
    available = hidden_size - (p if output == "hidden" else 0)
    return p if available >= p else min(p, n_features)


@torch.no_grad()
def lmn_layer_from_laes_(
    layer: nn.Module,
    A: np.ndarray,
    B: np.ndarray,
    mu: np.ndarray,
    s: float,
    memory_scale: float = 1.0,
) -> int:
    """LAES initialization of the first ``p`` memory units of one LMN layer.

    With enough hidden units (:func:`laes_input_units`): ``W_xh = s A``,
    ``b_h = -s A mu``, ``W_mh = 0``, ``W_hm = I / s``, ``W_mm = B`` on the
    first ``p`` hidden and memory units; otherwise ``A = U S Vᵀ`` (thin SVD,
    ``r = min(p, input_size)``) and the first ``r`` hidden units carry ``W_xh
    = s Vᵀ``, read through ``W_hm = U S / s``. With ``output='hidden'`` the
    hidden units ``r .. r + p - 1`` expose the LAES memory to the readout:
    ``W_mh = memory_scale I`` on the LAES memory, no input, no bias, so that
    they hold ``tanh(memory_scale m_{t-1})``. The other units keep their
    random weights, decoupled from the LAES units, their linearized memory
    map rescaled to spectral radius at most ``init_radius``. Returns ``r``,
    the hidden units carrying the input.
    """
    p = A.shape[0]
    M = layer.memory_size
    output = getattr(layer, "output", "memory")
    r = laes_input_units(layer.hidden_size, p, A.shape[1], output)
    if r == p:  # the paper's W_xh = s A, W_hm = I / s
        r, W_in, W_out = p, A, np.eye(p)
    else:  # A = U S Vᵀ: the hidden units carry the input directions
        U, S, Vt = np.linalg.svd(A, full_matrices=False)
        r, W_in, W_out = S.shape[0], Vt, U * S
    W_xh, b_h = numpy_weight(layer.weight_xh), numpy_weight(layer.bias_h)
    W_mh, W_hm = numpy_weight(layer.weight_mh), numpy_weight(layer.weight_hm)
    W_mm = numpy_weight(layer.weight_mm)
    W_xh[:r] = s * W_in
    b_h[:r] = -s * (W_in @ mu)
    W_mh[:r] = 0.0  # LAES hidden units read no memory
    W_mh[r:, :p] = 0.0  # the other hidden units do not read the LAES memory
    W_hm[:p] = 0.0
    W_hm[:p, :r] = W_out / s
    W_mm[:p, :] = 0.0
    W_mm[p:, :p] = 0.0
    W_mm[:p, :p] = B
    if output == "hidden":  # units r..r+p-1 expose the LAES memory
        W_xh[r : r + p] = 0.0
        b_h[r : r + p] = 0.0
        W_mh[r : r + p] = 0.0
        W_mh[r : r + p, :p] = memory_scale * np.eye(p)
    radius = getattr(layer, "init_radius", None)
    if radius is not None and p < M:
        # the map is block triangular: eig(B) and eig of the random block
        rho = spectral_radius_np(W_mm[p:, p:] + W_hm[p:, r:] @ W_mh[r:, p:])
        if rho > radius:
            W_mm[p:, p:] *= radius / rho
            W_mh[r:, p:] *= radius / rho
    if layer.bias_m is not None:
        # before the weights: a 'schur' memory turns the coordinates (b_m
        # too) when W_mm is set, after which units :p are no longer these
        layer.bias_m[:p] = 0.0
    _set_weights_(layer, W_xh, b_h, W_mh, W_hm, W_mm)
    return r


@torch.no_grad()
def elman_layer_from_laes_(
    rnn: nn.RNN, i: int, j: int, A: np.ndarray, B: np.ndarray, mu, s: float
) -> None:
    """LAES initialization of the first ``p`` units of one ``torch.nn.RNN``
    layer ``i`` and direction ``j`` (Pasa & Sperduti 2014): ``W_ih = s A``,
    ``W_hh = B``, ``b_ih = -s A mu``, ``b_hh = 0`` on those units, which read
    no other unit; the other units keep their random rows."""
    p = A.shape[0]
    sfx = f"_l{i}" + ("_reverse" if j == 1 else "")
    w_ih, w_hh = getattr(rnn, "weight_ih" + sfx), getattr(rnn, "weight_hh" + sfx)

    def as_like(value):
        return torch.as_tensor(value, dtype=w_ih.dtype, device=w_ih.device)

    w_ih[:p] = as_like(s * A)
    w_hh[:p] = 0.0
    w_hh[:p, :p] = as_like(B)
    if rnn.bias:
        getattr(rnn, "bias_ih" + sfx)[:p] = as_like(-s * (A @ mu))
        getattr(rnn, "bias_hh" + sfx)[:p] = 0.0


@torch.no_grad()
def multiscale_from_laes_(
    net: nn.Module,
    A: list[np.ndarray],
    B: list[np.ndarray],
    W_in: np.ndarray,
    mu: np.ndarray,
    s: float,
) -> None:
    """LAES initialization of one direction of a multi-scale LMN.

    ``A[k]`` (``p_k x r``) and ``B[k]`` are the LAES of module ``k`` on the
    projected inputs ``W_in (x - mu)`` subsampled at its clock. When
    ``hidden_size >= p_0 + ... + p_{K-1}`` module ``k`` reads its own ``p_k``
    hidden units ``tanh(s A_k W_in (x - mu))`` through ``I / s`` (the LMN's
    construction, one block per module); otherwise the first ``r`` hidden
    units carry ``tanh(s W_in (x - mu))`` for every module, read through
    ``A_k / s``. ``W_mm`` is block diagonal with the ``B_k``; every other
    memory weight is zero.
    """
    own_units = net.hidden_size >= sum(a.shape[0] for a in A)
    W_xh, b_h = numpy_weight(net.weight_xh), numpy_weight(net.bias_h)
    W_mh = numpy_weight(net.weight_mh)
    W_hm = np.zeros_like(numpy_weight(net.weight_hm))
    W_mm = np.zeros_like(numpy_weight(net.weight_mm))
    r = W_in.shape[0]
    if not own_units:
        W_xh[:r] = s * W_in
        b_h[:r] = -s * (W_in @ mu)
        W_mh[:r] = 0.0
    unit = 0
    for k, (A_k, B_k) in enumerate(zip(A, B, strict=True)):
        p = A_k.shape[0]
        start = net.module_slice(k).start
        rows_k = slice(start, start + p)
        if own_units:
            A_in = A_k @ W_in
            W_xh[unit : unit + p] = s * A_in
            b_h[unit : unit + p] = -s * (A_in @ mu)
            W_mh[unit : unit + p] = 0.0
            W_hm[rows_k, unit : unit + p] = np.eye(p) / s
            unit += p
        else:
            W_hm[rows_k, :r] = A_k / s
        W_mm[rows_k, rows_k] = B_k
    _set_weights_(net, W_xh, b_h, W_mh, W_hm, W_mm)


@torch.no_grad()
def restore_free_memory_(
    layer: nn.Module, p: int, W_hm0: np.ndarray, W_mm0: np.ndarray
) -> None:
    """Give memory units ``p:`` of an LMN layer back their random ``W_hm``
    rows and ``W_mm`` block after the unrolled transfer (which left them
    zero), the block rescaled to the layer's ``init_radius``. Their ``W_mh``
    columns are zero, so the block is their whole linearized memory map.

    Works in the layer's memory coordinates: a ``'schur'`` layer, whose
    coordinates the transfer turns, gets its other units in the transfer's
    coordinates instead (``LMN.init_from_unrolled_``)."""
    if getattr(layer, "memory_matrix", None) == "schur":
        raise ValueError(
            "restore_free_memory_ works in the layer's memory coordinates, which "
            "a memory_matrix='schur' layer turns; use LMN.init_from_unrolled_"
        )
    W_hm = numpy_weight(layer.weight_hm)
    W_mm = numpy_weight(layer.weight_mm)
    W_hm[p:] = W_hm0[p:]
    W_mm[p:, p:] = W_mm0[p:, p:]
    radius = getattr(layer, "init_radius", None)
    rho = spectral_radius_np(W_mm[p:, p:])
    if radius is not None and rho > radius:
        W_mm[p:, p:] *= radius / rho
    set_weight_(layer, "weight_hm", W_hm)
    set_weight_(layer, "weight_mm", W_mm)
