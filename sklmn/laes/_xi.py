"""The data matrix Ξ of the linear autoencoder for sequences and its products.

Notation (Carta, Sperduti & Bacciu, "Encoding-based memory modules", §2.3,
eq. 3). A batch of ``n`` sequences of ``a`` features, sequence ``q`` of length
``l_q``, is stored zero-padded as an array ``data`` of shape ``(n, T, a)``. Ξ
has one row per valid time step of every sequence, sequence-major (all steps of
sequence 0, then sequence 1, ...): the row of step ``t`` (0-based) is the
reversed prefix, newest first and zero-padded to ``L`` lag blocks of ``a`` columns::

    [x_t, x_{t-1}, ..., x_0, 0, ..., 0]        (block k = lag k)

so Ξ has ``sum_q l_q`` rows and ``L * a`` columns; column ``k * a + c`` holds
feature ``c`` at lag ``k``. ``L`` (``n_lags``) is at least the longest length.

Three ways to use Ξ without ever building it:

* :func:`xi_lag_moments` accumulates the Gram matrix ΞᵀΞ from lag products in
  ``O(n T L a^2)`` time and ``O((L a)^2)`` memory;
* :class:`XiOperator` is a :class:`scipy.sparse.linalg.LinearOperator` whose
  products ``Ξ V`` (a causal convolution over time of each sequence with the lag
  blocks of ``V``) and ``Ξᵀ U`` (a cross-correlation) are computed with real
  FFTs, batched over sequences of similar length; its memory is independent of
  ``(total steps) x L``;
* :func:`xi_frobenius_sq` gives ``||Ξ||_F^2`` in closed form.

:func:`build_xi` builds Ξ explicitly (reference, small data only).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import scipy.fft
from scipy.sparse.linalg import LinearOperator
from threadpoolctl import threadpool_limits

from ..utils.sequences import lengths_to_mask

__all__ = ["XiOperator", "build_xi", "xi_frobenius_sq", "xi_lag_moments"]


def _single_threaded_blas() -> threadpool_limits:
    """Context with one BLAS thread.

    The FFT products are thousands of small GEMMs (one per frequency); threaded
    BLAS spends its time synchronizing threads on them (measurement:
    ``docs/training.md``, "One BLAS thread for the LAES's frequency
    products"). Parallelism comes from the FFT ``workers`` instead.
    """
    return threadpool_limits(limits=1, user_api="blas")


def _check_lengths(data: np.ndarray, lengths) -> np.ndarray:
    """``lengths`` as int64, checked against the padded ``data``: one length
    per sequence, each between 1 and the number of time steps of ``data``."""
    shape = np.shape(data)
    if len(shape) != 3:
        raise ValueError(
            "data must be a 3-D array (n_samples, n_timesteps, n_features), "
            f"got shape {shape}."
        )
    n, T = shape[0], shape[1]
    raw = np.asarray(lengths)
    whole = raw.dtype.kind == "f" and np.isfinite(raw).all()
    integral = raw.dtype.kind in "iu" or bool(whole and (raw == np.floor(raw)).all())
    out = raw.astype(np.int64) if integral else None
    if raw.shape != (n,) or n == 0 or out is None or out.min() < 1 or out.max() > T:
        raise ValueError(
            f"lengths must hold one integer in [1, {T}] (the n_timesteps of "
            f"data) for each of the {n} sequences of data, got {raw!r:.200}."
        )
    return out


def xi_frobenius_sq(data: np.ndarray, lengths: np.ndarray) -> float:
    """Squared Frobenius norm of Ξ, in closed form.

    Step ``t`` (0-based) of a sequence of length ``l`` appears in the ``l - t``
    rows of steps ``t, ..., l - 1``, so ``||Ξ||_F^2 = sum_q sum_t (l_q - t)
    ||x_t||^2``.

    Parameters
    ----------
    data : ndarray of shape (n_samples, n_timesteps, n_features)
        Zero-padded sequences.
    lengths : ndarray of shape (n_samples,)
        Valid length of every sequence.

    Returns
    -------
    norm_sq : float

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.laes import build_xi, xi_frobenius_sq
    >>> data = np.arange(6.0).reshape(1, 3, 2)
    >>> lengths = np.array([3])
    >>> float(xi_frobenius_sq(data, lengths))
    70.0
    >>> float((build_xi(data, lengths) ** 2).sum())
    70.0
    """
    lengths = _check_lengths(data, lengths)
    T = data.shape[1]
    weights = np.clip(
        lengths[:, None] - np.arange(T)[None, :], 0, None
    ).astype(np.float64)
    step_sq = np.einsum("nta,nta->nt", data, data)
    return float((weights * step_sq).sum())


def build_xi(
    data: np.ndarray, lengths: np.ndarray, n_lags: int | None = None
) -> np.ndarray:
    """Build Ξ explicitly (reference implementation for small data).

    Parameters
    ----------
    data : ndarray of shape (n_samples, n_timesteps, n_features)
        Zero-padded sequences.
    lengths : ndarray of shape (n_samples,)
        Valid length of every sequence.
    n_lags : int, default=None
        Number of lag blocks ``L`` (at least the longest length); defaults to
        the longest length.

    Returns
    -------
    xi : ndarray of shape (sum(lengths), n_lags * n_features)

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.laes import build_xi
    >>> data = np.array([[[1.0], [2.0], [3.0]], [[4.0], [5.0], [0.0]]])
    >>> build_xi(data, np.array([3, 2]))
    array([[1., 0., 0.],
           [2., 1., 0.],
           [3., 2., 1.],
           [4., 0., 0.],
           [5., 4., 0.]])
    """
    lengths = _check_lengths(data, lengths)
    n, _, a = data.shape
    L = int(lengths.max()) if n_lags is None else int(n_lags)
    if L < int(lengths.max()):
        raise ValueError(
            f"n_lags={L} is smaller than the longest length {int(lengths.max())}."
        )
    seq_id = np.repeat(np.arange(n), lengths)
    offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    t = np.arange(int(lengths.sum())) - np.repeat(offsets, lengths)
    xi = np.zeros((t.size, L * a), dtype=np.float64)
    for k in range(min(L, int(lengths.max()))):
        sel = t >= k
        xi[sel, k * a : (k + 1) * a] = data[seq_id[sel], t[sel] - k]
    return xi


def _reverse_sequences(data: np.ndarray, lengths: np.ndarray):
    """Right-align: ``y[q, e] = x[q, l_q - 1 - e]`` (distance ``e`` from the end)."""
    n, T, _ = data.shape
    e = np.arange(T)
    src = lengths[:, None] - 1 - e[None, :]
    mask = src >= 0
    y = np.take_along_axis(data, np.clip(src, 0, None)[:, :, None], axis=1)
    y[~mask] = 0.0
    return y, mask


def xi_lag_moments(
    data: np.ndarray,
    lengths: np.ndarray,
    n_lags: int | None = None,
    *,
    with_sums: bool = False,
    weights: np.ndarray | None = None,
    progress: bool = False,
) -> dict[str, np.ndarray]:
    """Gram matrix ΞᵀΞ (and the sums needed to center it) from lag products.

    For lags ``i <= j`` (``d = j - i``) block ``(i, j)`` of ΞᵀΞ sums, over the
    rows whose step ``t`` has ``t >= j``, the products ``x_{t-i} x_{t-j}ᵀ``.
    Writing ``y_e = x_{l-1-e}`` (distance ``e`` from the end of the sequence),
    the rows with ``t >= j`` are ``e' = (l - 1 - t) + i >= i`` and::

        G[i, i + d] = sum_{e' >= i} H_d(e'),   H_d(e') = sum_q y_{e'} y_{e'+d}ᵀ

    i.e. suffix sums over ``e'`` of lag-``d`` products of the right-aligned
    sequences; block ``(j, i)`` is the transpose. This is the "prefix sums of
    lag products" form of the Gram matrix, in ``O(n T^2 a^2 / 2)`` operations.

    With ``with_sums=True`` it also returns, for every block ``(i, j)``, the sum
    ``s1[i, j]`` of the lag-``i`` vectors and the number ``count[i, j]`` of rows
    where both lags are valid, so that the Gram matrix of the data shifted by
    any vector ``mu`` is ``G - s1 muᵀ - mu s1[j, i]ᵀ + count mu muᵀ`` (used to
    center a Gram matrix accumulated over batches with a changing mean).

    Parameters
    ----------
    data : ndarray of shape (n_samples, n_timesteps, n_features)
        Zero-padded sequences.
    lengths : ndarray of shape (n_samples,)
        Valid length of every sequence.
    n_lags : int, default=None
        Number of lag blocks ``L`` (at least the longest length); lags beyond
        the longest length have zero blocks.
    with_sums : bool, default=False
        Also return ``s1`` of shape ``(L, L, a)`` and ``count`` of shape
        ``(L, L)``.
    weights : ndarray of shape (n_samples,), default=None
        Weight of every sequence: each row of Ξ counts with the weight of its
        sequence in ``gram`` (``Σ w ξ ξᵀ``), ``s1`` and ``count``; an integer
        weight ``k`` equals repeating the sequence ``k`` times.
    progress : bool, default=False
        Show a tqdm progress bar over lags.

    Returns
    -------
    moments : dict
        ``"gram"``: ndarray of shape ``(L, a, L, a)`` (reshape to
        ``(L a, L a)``), and ``"s1"``, ``"count"`` when ``with_sums``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.laes import build_xi, xi_lag_moments
    >>> rng = np.random.default_rng(0)
    >>> data = rng.normal(size=(3, 4, 2))
    >>> lengths = np.array([4, 2, 3])
    >>> data[1, 2:] = 0.0
    >>> data[2, 3:] = 0.0
    >>> gram = xi_lag_moments(data, lengths)["gram"].reshape(8, 8)
    >>> xi = build_xi(data, lengths)
    >>> bool(np.allclose(gram, xi.T @ xi))
    True
    """
    lengths = _check_lengths(data, lengths)
    n, T, a = data.shape
    T = min(T, int(lengths.max()))
    L = T if n_lags is None else int(n_lags)
    if L < T:
        raise ValueError(f"n_lags={L} is smaller than the longest length {T}.")
    y, mask = _reverse_sequences(data[:, :T], lengths)
    # (T, a, n) and (T, n, a) layouts so that every lag is one batched matmul
    y_an = np.ascontiguousarray(y.transpose(1, 2, 0))
    y_na = np.ascontiguousarray(y.transpose(1, 0, 2))
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64)
        # one factor of every product carries the weight; a new array: with
        # one sequence both layouts above are views of the same memory
        y_an = y_an * weights
    gram = np.zeros((L, a, L, a))
    if with_sums:
        s1 = np.zeros((L, L, a))
        count = np.zeros((L, L))
        mask_t = np.ascontiguousarray(mask.T, dtype=np.float64)  # (T, n)
        if weights is not None:
            mask_w = mask_t * weights  # weighted counts of rows
            y_sum = np.einsum("net,n->et", y, weights)  # (T, a)
        else:
            mask_w = mask_t
            y_sum = y.sum(axis=0)  # (T, a)
    lags = range(T)
    if progress:
        from tqdm.auto import tqdm

        lags = tqdm(lags, desc="LAES Gram (lags)")
    for d in lags:
        h = np.matmul(y_an[: T - d], y_na[d:])  # (T - d, a, a)
        suffix = np.cumsum(h[::-1], axis=0)[::-1]
        i = np.arange(T - d)
        gram[i, :, i + d, :] = suffix
        if d:
            gram[i + d, :, i, :] = suffix.transpose(0, 2, 1)
        if with_sums:
            # lag-i vectors of the rows where lag i + d is valid, and vice versa
            lo = np.matmul(y_an[: T - d], mask_t[d:, :, None])[:, :, 0]
            s1[i, i + d] = np.cumsum(lo[::-1], axis=0)[::-1]
            s1[i + d, i] = np.cumsum(y_sum[d:][::-1], axis=0)[::-1]
            c = np.cumsum(mask_w[d:].sum(axis=1)[::-1])[::-1]
            count[i, i + d] = c
            count[i + d, i] = c
    out = {"gram": gram}
    if with_sums:
        out["s1"] = s1
        out["count"] = count
    return out


@dataclass
class _Bucket:
    """Sequences of similar length sharing one FFT size."""

    data: np.ndarray  # (n_b, T_b, a), zero-padded
    mask: np.ndarray  # (n_b, T_b) valid steps
    rows: np.ndarray  # rows of Ξ of the valid steps, in mask order
    n_timesteps: int  # T_b
    n_fft: int  # >= 2 T_b - 1: circular = linear convolution on [0, T_b)


class XiOperator(LinearOperator):
    """Ξ as a :class:`~scipy.sparse.linalg.LinearOperator`, products by FFT.

    Row ``t`` of a sequence times ``v`` (``L`` lag blocks ``v_k``) is
    ``sum_k x_{t-k}ᵀ v_k``: a causal convolution over time of the sequence with
    the lag blocks of ``v``, summed over features. Column block ``k`` of ``Ξᵀ u``
    is ``sum_t u_t x_{t-k}``, a cross-correlation. Both are computed with real
    FFTs of size ``>= 2 T_b - 1`` (no circular aliasing on ``[0, T_b)``), on
    buckets of sequences whose lengths are within a factor ``bucket_ratio`` of
    the bucket's longest ``T_b`` (so padding wastes little), chunked over
    sequences and columns so that no temporary exceeds about
    ``max_chunk_bytes``. Memory: a padded copy of the data per bucket plus
    chunk-sized temporaries, never ``(total steps) x L``.

    Parameters
    ----------
    data : ndarray of shape (n_samples, n_timesteps, n_features)
        Zero-padded sequences (copied per bucket; the argument is not kept).
    lengths : ndarray of shape (n_samples,)
        Valid length of every sequence.
    n_lags : int, default=None
        Number of lag blocks ``L`` (at least the longest length).
    bucket_ratio : float, default=1.5
        Longest/shortest length ratio allowed within a bucket.
    max_chunk_bytes : int, default=2**26
        Approximate size cap of the complex temporaries of one chunk.
    workers : int, default=None
        Threads (None: 1): over groups of buckets when there are several
        buckets, else inside :mod:`scipy.fft`. The frequency-domain matrix
        products run on one BLAS thread each.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.laes import XiOperator, build_xi
    >>> rng = np.random.default_rng(0)
    >>> data = rng.normal(size=(3, 5, 2))
    >>> lengths = np.array([5, 2, 4])
    >>> data[1, 2:] = 0.0
    >>> data[2, 4:] = 0.0
    >>> op = XiOperator(data, lengths)
    >>> op.shape
    (11, 10)
    >>> xi = build_xi(data, lengths)
    >>> v = rng.normal(size=(10, 3))
    >>> u = rng.normal(size=(11, 3))
    >>> bool(np.allclose(op @ v, xi @ v)), bool(np.allclose(op.T @ u, xi.T @ u))
    (True, True)
    """

    def __init__(
        self,
        data: np.ndarray,
        lengths: np.ndarray,
        n_lags: int | None = None,
        *,
        bucket_ratio: float = 1.5,
        max_chunk_bytes: int = 2**26,
        workers: int | None = None,
    ) -> None:
        lengths = _check_lengths(data, lengths)
        n, _, a = data.shape
        T = int(lengths.max())
        L = T if n_lags is None else int(n_lags)
        if L < T:
            raise ValueError(f"n_lags={L} is smaller than the longest length {T}.")
        if not bucket_ratio >= 1.0:
            raise ValueError(f"bucket_ratio must be >= 1, got {bucket_ratio!r}.")
        self.n_lags = L
        self.n_features = a
        self.max_chunk_bytes = int(max_chunk_bytes)
        self.workers = workers
        offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        order = np.argsort(-lengths, kind="stable")
        neg_sorted = -lengths[order]
        self.buckets: list[_Bucket] = []
        start = 0
        while start < n:
            T_b = int(-neg_sorted[start])
            stop = int(np.searchsorted(neg_sorted, -T_b / bucket_ratio, side="right"))
            stop = max(stop, start + 1)
            idx = np.sort(order[start:stop])
            mask = lengths_to_mask(lengths[idx], T_b)
            rows = (offsets[idx, None] + np.arange(T_b)[None, :])[mask]
            self.buckets.append(
                _Bucket(
                    data=np.ascontiguousarray(data[idx, :T_b], dtype=np.float64),
                    mask=mask,
                    rows=rows,
                    n_timesteps=T_b,
                    n_fft=scipy.fft.next_fast_len(2 * T_b - 1, real=True),
                )
            )
            start = stop
        super().__init__(dtype=np.dtype(np.float64), shape=(int(lengths.sum()), L * a))
        self._bucket_groups = self._groups()
        # threads go to bucket groups when there are several, else to the FFTs
        self._fft_threads = 1 if len(self._bucket_groups) > 1 else workers

    def _rfft(self, x: np.ndarray, n: int, axis: int) -> np.ndarray:
        return scipy.fft.rfft(x, n=n, axis=axis, workers=self._fft_threads)

    def _irfft(self, x: np.ndarray, n: int, axis: int) -> np.ndarray:
        return scipy.fft.irfft(x, n=n, axis=axis, workers=self._fft_threads)

    # -- chunking -----------------------------------------------------------
    def _col_chunk(self, b: _Bucket, k: int) -> int:
        n_freq = b.n_fft // 2 + 1
        per_col = 16 * n_freq * self.n_features
        return int(max(1, min(k, self.max_chunk_bytes // per_col)))

    def _seq_chunks(self, b: _Bucket, kc: int) -> Iterator[tuple[int, int, int, int]]:
        """Yield ``(s0, s1, r0, r1)``: sequences and their row range in b.rows."""
        n_freq = b.n_fft // 2 + 1
        per_seq = 16 * n_freq * (self.n_features + kc) + 8 * b.n_timesteps * kc
        ns = int(max(1, self.max_chunk_bytes // per_seq))
        counts = b.mask.sum(axis=1)
        bounds = np.concatenate(([0], np.cumsum(counts)))
        for s0 in range(0, b.data.shape[0], ns):
            s1 = min(s0 + ns, b.data.shape[0])
            yield s0, s1, int(bounds[s0]), int(bounds[s1])

    # -- products -----------------------------------------------------------
    def _matmat(self, V: np.ndarray) -> np.ndarray:
        with _single_threaded_blas():
            return self._matmat_impl(V)

    def _rmatmat(self, U: np.ndarray) -> np.ndarray:
        with _single_threaded_blas():
            return self._rmatmat_impl(U)

    def _groups(self) -> list[list[_Bucket]]:
        """Buckets split into balanced groups, one per thread (deterministic).

        Longest-processing-time-first on a cost estimate (frequency-domain
        products plus FFTs of the right-hand side).
        """
        n_threads = int(self.workers or 1)
        if n_threads <= 1 or len(self.buckets) < 2:
            return [self.buckets]
        cost = [
            b.n_fft * (b.data.shape[0] + 5 * np.log2(b.n_fft)) for b in self.buckets
        ]
        groups: list[list[_Bucket]] = [[] for _ in range(n_threads)]
        load = np.zeros(n_threads)
        for i in np.argsort(cost, kind="stable")[::-1]:
            j = int(np.argmin(load))
            groups[j].append(self.buckets[i])
            load[j] += cost[i]
        return [g for g in groups if g]

    def _run(self, fn, groups, *args) -> None:
        if len(groups) == 1:
            fn(groups[0], *args[0] if args else ())
            return
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(len(groups)) as pool:
            futures = [
                pool.submit(fn, g, *a) for g, a in zip(groups, args, strict=True)
            ]
            for f in futures:
                f.result()

    def _matmat_impl(self, V: np.ndarray) -> np.ndarray:
        V = np.asarray(V, dtype=np.float64)
        k = V.shape[1]
        V3 = V.reshape(self.n_lags, self.n_features, k)
        out = np.zeros((self.shape[0], k))
        groups = self._bucket_groups
        # groups write disjoint rows of out
        self._run(self._matmat_group, groups, *[(V3, out)] * len(groups))
        return out

    def _matmat_group(self, buckets, V3: np.ndarray, out: np.ndarray) -> None:
        k = V3.shape[2]
        for b in buckets:
            T_b, N = b.n_timesteps, b.n_fft
            kc = self._col_chunk(b, k)
            chunks = list(self._seq_chunks(b, kc))
            cache = None
            if len(chunks) == 1:
                cache = self._rfft(b.data, n=N, axis=1).transpose(1, 0, 2)
                cache = np.ascontiguousarray(cache)
            for c0 in range(0, k, kc):
                c1 = min(c0 + kc, k)
                Vf = self._rfft(V3[:T_b, :, c0:c1], n=N, axis=0)  # (F, a, kc)
                for s0, s1, r0, r1 in chunks:
                    if cache is None:
                        Xf = self._rfft(b.data[s0:s1], n=N, axis=1)
                        Xf = np.ascontiguousarray(Xf.transpose(1, 0, 2))  # (F, ns, a)
                    else:
                        Xf = cache
                    # convolution theorem: sum over features of x_c * v_c
                    Yf = np.matmul(Xf, Vf)  # (F, ns, kc)
                    y = self._irfft(Yf, n=N, axis=0)[:T_b]  # (T_b, ns, kc)
                    y = y.transpose(1, 0, 2)[b.mask[s0:s1]]
                    out[b.rows[r0:r1], c0:c1] = y

    def _rmatmat_impl(self, U: np.ndarray) -> np.ndarray:
        U = np.asarray(U, dtype=np.float64)
        k = U.shape[1]
        groups = self._bucket_groups
        # one accumulator per group, summed in a fixed order (deterministic)
        outs = [np.zeros((self.n_lags, self.n_features, k)) for _ in groups]
        self._run(self._rmatmat_group, groups, *[(U, o) for o in outs])
        out = outs[0]
        for o in outs[1:]:
            out += o
        return out.reshape(self.n_lags * self.n_features, k)

    def _rmatmat_group(self, buckets, U: np.ndarray, out: np.ndarray) -> None:
        k = U.shape[1]
        for b in buckets:
            T_b, N = b.n_timesteps, b.n_fft
            kc = self._col_chunk(b, k)
            chunks = list(self._seq_chunks(b, kc))
            cache = None
            if len(chunks) == 1:
                cache = self._rfft(b.data, n=N, axis=1).conj().transpose(1, 2, 0)
            for c0 in range(0, k, kc):
                c1 = min(c0 + kc, k)
                acc = None
                for s0, s1, r0, r1 in chunks:
                    if cache is None:
                        Xf = self._rfft(b.data[s0:s1], n=N, axis=1)
                        Xf = Xf.conj().transpose(1, 2, 0)  # (F, a, ns)
                    else:
                        Xf = cache
                    u = np.zeros((s1 - s0, T_b, c1 - c0))
                    u[b.mask[s0:s1]] = U[b.rows[r0:r1], c0:c1]
                    Uf = self._rfft(u, n=N, axis=1).transpose(1, 0, 2)
                    # correlation theorem: sum_t u_t x_{t-k} <-> conj(X) U
                    prod = np.matmul(Xf, Uf)  # (F, a, kc)
                    acc = prod if acc is None else acc + prod
                w = self._irfft(acc, n=N, axis=0)[:T_b]  # (T_b, a, kc)
                out[:T_b, :, c0:c1] += w

    def _matvec(self, v: np.ndarray) -> np.ndarray:
        return self._matmat(np.reshape(v, (-1, 1)))[:, 0]

    def _rmatvec(self, u: np.ndarray) -> np.ndarray:
        return self._rmatmat(np.reshape(u, (-1, 1)))[:, 0]

    def _adjoint(self) -> LinearOperator:
        return LinearOperator(
            shape=(self.shape[1], self.shape[0]),
            matvec=self._rmatvec,
            rmatvec=self._matvec,
            matmat=self._rmatmat,
            rmatmat=self._matmat,
            dtype=self.dtype,
        )
