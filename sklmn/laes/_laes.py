"""LAESTransformer: the linear autoencoder for sequences, a sklearn transformer."""

from __future__ import annotations

import dataclasses
from numbers import Integral

import numpy as np
from joblib import effective_n_jobs
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted

from ..utils._atomic import atomic_fit
from ..utils._compat import (
    Interval,
    StrOptions,
    _fit_context,
    _get_output_config,
)
from ..utils._doc_link import _DocLinkMixin
from ..utils._layout import _InputLayoutPicklesMixin, fill_input_layout_doc
from ..utils._tags import _SequenceInputTagsMixin
from ..utils.sequences import (
    INPUT_LAYOUTS,
    check_sequence_weights,
    format_like_input,
    restore_input_layout,
    validate_sequences,
)
from ._recursion import decode, encode, prefix_decoding_terms
from ._solvers import randomized_svd_operator, solve_dense, solve_gram
from ._statistics import (
    _check_magnitude,
    _rescaling,
    _subtract_mean,
    accumulate_gram,
    centered_gram,
)
from ._xi import XiOperator, xi_frobenius_sq

__all__ = ["LAESTransformer"]

#: solver='auto' uses the Gram solver while L * a is at most this.
GRAM_MAX_COLUMNS = 4096


@fill_input_layout_doc
class LAESTransformer(
    _InputLayoutPicklesMixin,
    _DocLinkMixin,
    _SequenceInputTagsMixin,
    TransformerMixin,
    BaseEstimator,
):
    """Linear autoencoder for sequences (LAES) with a closed-form solution.

    Encodes every sequence into a memory state with the linear recursion
    ``m_t = A x_t + B m_{t-1}``, ``m_0 = 0`` (Carta et al. 2021 §2.3, eq. 1), and
    decodes it backwards with ``x~_t = Aᵀ m_t``, ``m_{t-1} = Bᵀ m_t`` (eq. 2,
    decoder ``C = [Aᵀ; Bᵀ]``). ``A`` and ``B`` come from the top
    ``n_components`` right singular vectors ``U`` of the matrix Ξ that has one
    row per time step of every training sequence, the reversed prefix
    ``[x_t, x_{t-1}, ..., x_1, 0, ..., 0]`` zero-padded to ``L`` lags (eq. 3):
    ``A = UᵀP = U[:a]ᵀ`` and ``B = UᵀRU = U[a:]ᵀ U[:-a]``. With
    ``n_components >= rank(Ξ)`` decoding reproduces the sequences exactly.

    Parameters
    ----------
    n_components : int, default=None
        Memory size ``p``. None keeps ``min(n_steps_total, L * n_features)``
        components (exact round trip).
    solver : {'auto', 'dense', 'gram', 'matrix_free'}, default='auto'
        How ``U`` is computed:

        - ``'dense'``: builds Ξ and takes its thin SVD. Reference for small data
          only; refuses (ValueError) when Ξ would exceed 2 GiB.
        - ``'gram'``: accumulates ΞᵀΞ from lag products without building Ξ and
          takes its top eigenvectors. Memory ``O((L a)^2)``; good while ``L * a``
          is a few thousand; refuses (ValueError) above 16384. Supports
          :meth:`partial_fit`.
        - ``'matrix_free'``: randomized SVD with power iterations on a linear
          operator whose products with Ξ and Ξᵀ are FFT convolutions over time.
          Memory ``O(n_steps_total * (n_components + n_oversamples) +
          L * a * (n_components + n_oversamples))``, never ``n_steps_total * L``.
        - ``'auto'``: ``'gram'`` if ``L * n_features <= 4096``, else
          ``'matrix_free'``.
    center : bool, default=False
        Subtract the per-feature mean of the training steps (valid steps only)
        before encoding and add it back after decoding. Padding is never
        encoded as ``-mean``.
    return_sequences : bool, default=False
        If True, :meth:`transform` returns the memory state at every step,
        shaped like the input; otherwise the final state of every sequence.
    n_oversamples : int, default=10
        Extra random directions of the ``'matrix_free'`` solver.
    n_iter : int or 'auto', default='auto'
        Power iterations of the ``'matrix_free'`` solver; ``'auto'`` is 7 when
        ``n_components < 0.1 * min(Ξ.shape)`` and 4 otherwise (as
        :func:`sklearn.utils.extmath.randomized_svd`).
    random_state : int, RandomState instance or None, default=None
        Seeds the ``'matrix_free'`` solver; the other solvers are deterministic.
    verbose : int, default=0
        If positive, show tqdm progress bars during ``fit``.
    n_jobs : int, default=None
        Threads of the FFTs of the ``'matrix_free'`` solver (None means 1, -1
        all processors, as in joblib). Matrix products use the BLAS threads.
    %(input_layout)s, in which :meth:`inverse_transform` also returns sequences.
        See docs/user_guide/input.md.

    Attributes
    ----------
    A_ : ndarray of shape (n_components_, n_features_in_)
        Input-to-memory matrix ``A`` (the encoder reads ``A x_t``).
    B_ : ndarray of shape (n_components_, n_components_)
        Memory-to-memory matrix ``B``. The decoder is ``C = [A_ᵀ; B_ᵀ]``.
    components_ : ndarray of shape (n_components_, max_length_ * n_features_in_)
        ``Uᵀ``: the top right singular vectors of Ξ as rows (sklearn's
        convention, as in PCA); column ``k * a + c`` is feature ``c`` at lag
        ``k``. Signs fixed so that the largest-magnitude entry of every row is
        positive.
    singular_values_ : ndarray of shape (n_components_,)
        Top singular values of Ξ, descending.
    explained_variance_ratio_ : ndarray of shape (n_components_,)
        ``singular_values_ ** 2 / ||Ξ||_F^2``: the share of the energy of all
        training prefixes captured by every component.
    mean_ : ndarray of shape (n_features_in_,)
        Per-feature mean of the training steps; zeros when ``center=False``.
    n_components_ : int
        Memory size ``p``.
    max_length_ : int
        Longest training sequence ``L``; default length of
        :meth:`inverse_transform`.
    n_steps_total_ : int
        Total number of training time steps (rows of Ξ).
    n_features_in_ : int
        Number of features per time step.
    solver_ : str
        The solver used.

    See Also
    --------
    sklearn.decomposition.PCA : The same idea for fixed-size vectors.

    Notes
    -----
    :meth:`reconstruction_error` measures how well the autoencoder decodes
    every prefix of a set of sequences from its memory state.

    References
    ----------
    A. Sperduti, "Linear autoencoder networks for structured data", 2013;
    A. Carta, A. Sperduti, D. Bacciu, "Encoding-based memory modules for
    recurrent neural networks", §2.3.

    Examples
    --------
    >>> import numpy as np
    >>> from sklmn.laes import LAESTransformer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20, 6, 2))
    >>> laes = LAESTransformer(n_components=4).fit(X)
    >>> laes.transform(X).shape
    (20, 4)
    >>> laes.A_.shape, laes.B_.shape
    ((4, 2), (4, 4))
    >>> exact = LAESTransformer().fit(X)   # n_components = L * a = 12
    >>> X_back = exact.inverse_transform(exact.transform(X))
    >>> bool(np.allclose(X_back, X))
    True
    >>> round(exact.reconstruction_error(X), 8)
    0.0
    """

    #: Fitted attributes that :func:`sklmn.persistence.load` may set
    _fitted_attributes: dict = {
        "n_features_in_": "int",
        "feature_names_in_": "array",
        "_gram_state": "dict",
        "components_": "array",
        "singular_values_": "array",
        "explained_variance_ratio_": "array",
        "n_components_": "int",
        "mean_": "array",
        "max_length_": "int",
        "n_steps_total_": "int",
        "A_": "array",
        "B_": "array",
        "solver_": "str",
        "n_samples_seen_": "int",
    }

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "solver": [StrOptions({"auto", "dense", "gram", "matrix_free"})],
        "center": ["boolean"],
        "return_sequences": ["boolean"],
        "n_oversamples": [Interval(Integral, 0, None, closed="left")],
        "n_iter": [Interval(Integral, 0, None, closed="left"), StrOptions({"auto"})],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "n_jobs": [Integral, None],
        "input_layout": [None, StrOptions(set(INPUT_LAYOUTS))],
    }

    def __init__(
        self,
        n_components=None,
        *,
        solver="auto",
        center=False,
        return_sequences=False,
        n_oversamples=10,
        n_iter="auto",
        random_state=None,
        verbose=0,
        n_jobs=None,
        input_layout=None,
    ):
        self.n_components = n_components
        self.solver = solver
        self.center = center
        self.return_sequences = return_sequences
        self.n_oversamples = n_oversamples
        self.n_iter = n_iter
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.input_layout = input_layout

    # -- fitting ------------------------------------------------------------
    _check_weights = staticmethod(check_sequence_weights)

    @_fit_context(prefer_skip_nested_validation=True)
    @atomic_fit
    def fit(self, X, y=None, sample_weight=None):
        """Fit the autoencoder: closed-form ``A`` and ``B`` from the SVD of Ξ.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_timesteps[, n_features]) or list
            Training sequences (see :mod:`sklmn.utils.sequences`).
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of every sequence: each of its rows of Ξ
            counts with that weight in the LAES statistics (``Σ w ξ ξᵀ`` of the
            SVD, the ``center`` mean, ``explained_variance_ratio_``), so an
            integer weight ``k`` fits like ``k`` copies of the sequence and a
            zero weight like leaving it out (except that it still sets
            ``max_length_`` and counts in ``n_steps_total_``).

        Returns
        -------
        self : LAESTransformer

        Examples
        --------
        >>> import numpy as np
        >>> from sklmn.laes import LAESTransformer
        >>> X = np.random.default_rng(0).normal(size=(3, 5, 2))
        >>> weighted = LAESTransformer(n_components=3).fit(X, sample_weight=[2, 1, 1])
        >>> repeated = LAESTransformer(n_components=3).fit(X[[0, 0, 1, 2]])
        >>> bool(np.allclose(weighted.singular_values_, repeated.singular_values_))
        True
        """
        for attr in ("_gram_state", "n_samples_seen_"):
            if hasattr(self, attr):
                delattr(self, attr)
        seqs = validate_sequences(self, X, reset=True)
        weights = self._check_weights(sample_weight, seqs)
        # tiny or huge values: fitted on X / scale (exact), the singular
        # values and the mean scaled back
        scale = _rescaling(seqs.data)
        if scale != 1.0:
            np.divide(seqs.data, scale, out=seqs.data)  # a fresh copy
        _check_magnitude(seqs)
        L, a = seqs.n_timesteps, seqs.n_features
        solver = self.solver
        if solver == "auto":
            solver = "gram" if L * a <= GRAM_MAX_COLUMNS else "matrix_free"
        if solver == "gram":
            self._gram_state = self._accumulate_gram(seqs, weights, scale=scale)
            self._solve_from_gram()
            self.n_samples_seen_ = seqs.n_samples
            return self
        n_components = self._check_n_components(seqs.n_steps_total, L * a)
        state = None
        if L * a <= GRAM_MAX_COLUMNS:
            # the statistics partial_fit continues (a copy: the solvers below
            # modify the data in place)
            state = self._accumulate_gram(
                dataclasses.replace(seqs, data=seqs.data.copy()), weights, scale
            )
        data, lengths = seqs.data, seqs.lengths  # fresh copy: safe to modify
        mean = np.zeros(a)
        if self.center:
            step_weight = None if weights is None else np.repeat(weights, lengths)
            mean = np.average(data[seqs.mask], axis=0, weights=step_weight)
            _subtract_mean(data, lengths, mean)
        if weights is not None:
            # the rows of Ξ are linear in their sequence: scaling a sequence
            # by sqrt(w) weights its rows' contributions to ΞᵀΞ by w
            data *= np.sqrt(weights)[:, None, None]
        norm_sq = xi_frobenius_sq(data, lengths)
        if solver == "dense":
            s, comps = solve_dense(data, lengths, n_components, L)
        else:
            op = XiOperator(data, lengths, L, workers=effective_n_jobs(self.n_jobs))
            del seqs, data  # the operator keeps its own per-bucket copies
            n_iter = self.n_iter
            if n_iter == "auto":
                n_iter = 7 if n_components < 0.1 * min(op.shape) else 4
            s, comps = randomized_svd_operator(
                op,
                n_components,
                n_oversamples=self.n_oversamples,
                n_iter=n_iter,
                random_state=self.random_state,
                progress=bool(self.verbose),
            )
        self._set_solution(
            s, comps, mean, norm_sq, L, a, int(lengths.sum()), scale=scale
        )
        self.solver_ = solver
        self.n_samples_seen_ = len(lengths)
        if state is not None:
            self._gram_state = state
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None, sample_weight=None):
        """Update the fit with a batch of sequences (always the Gram solver).

        Only the Gram solver can accumulate, so ``partial_fit`` uses it whatever
        ``solver`` says (and refuses when ``L * n_features`` exceeds 16384).
        ΞᵀΞ is a sum over rows, so the Gram matrices of successive batches add
        up; when a batch is longer than every previous one, the accumulated
        matrix is padded with zero lag blocks (earlier sequences have no steps
        at those lags). With ``center=True`` the Gram matrix is re-centered on
        the mean of all steps seen so far, so ``partial_fit`` over batches
        equals ``fit`` on their union (up to rounding). ``center`` must stay
        what it was for the first batch (a ``ValueError`` otherwise).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_timesteps[, n_features]) or list
            A batch of sequences.
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of every sequence of the batch (see :meth:`fit`); the
            weighted statistics of the batches add up.

        Returns
        -------
        self : LAESTransformer
            The transformer, its components updated with the batch.

        Examples
        --------
        >>> import numpy as np
        >>> from sklmn.laes import LAESTransformer
        >>> X = np.random.default_rng(0).normal(size=(6, 5, 2))
        >>> laes = LAESTransformer(n_components=3)
        >>> laes = laes.partial_fit(X[:3]).partial_fit(X[3:], sample_weight=[1, 2, 0])
        >>> laes.n_samples_seen_
        6
        """
        return self._partial_fit(X, sample_weight)

    @atomic_fit
    def _partial_fit(self, X, sample_weight):
        # all or nothing: the new statistics are a new dict, swapped in by
        # _solve_from_gram's caller only once they are solved
        first = not hasattr(self, "_gram_state")
        if first and hasattr(self, "components_"):
            raise ValueError(
                f"partial_fit cannot continue this fit (solver="
                f"{getattr(self, 'solver_', self.solver)!r}, max_length_ * "
                f"n_features_in_ = {self.max_length_ * self.n_features_in_} > "
                f"{GRAM_MAX_COLUMNS}): it did not keep the Gram statistics that "
                "batches add to. Fit with solver='gram', or call fit on all "
                "the data."
            )
        if not first:
            # moments about the mean carry the sums that re-center them
            centered = self._gram_state["s1"] is not None
            if centered != bool(self.center):
                raise ValueError(
                    f"partial_fit continues statistics accumulated with "
                    f"center={centered}, but center={self.center!r} now; set "
                    f"center={centered} again, or call fit to start anew."
                )
        seqs = validate_sequences(self, X, reset=first)
        weights = self._check_weights(sample_weight, seqs)
        scale = _rescaling(seqs.data) if first else self._gram_state.get("scale", 1.0)
        if scale != 1.0:
            np.divide(seqs.data, scale, out=seqs.data)  # a fresh copy
        _check_magnitude(seqs)
        state = self._accumulate_gram(seqs, weights, scale=scale)
        self._solve_from_gram(state)
        self._gram_state = state
        seen = 0 if first else self.n_samples_seen_
        self.n_samples_seen_ = seen + seqs.n_samples
        return self

    def _check_n_components(self, n_steps: int, n_columns: int) -> int:
        bound = min(n_steps, n_columns)
        if self.n_components is None:
            return bound
        if self.n_components > bound:
            raise ValueError(
                f"n_components={self.n_components} must be at most "
                f"min(n_steps_total, max_length * n_features) = "
                f"min({n_steps}, {n_columns}) = {bound}."
            )
        return int(self.n_components)

    def _accumulate_gram(self, seqs, weights=None, scale=1.0) -> dict:
        """``self._gram_state`` (untouched) plus the (weighted) lag moments of
        a batch: a new dict.

        Moments are taken about a fixed ``origin`` (the first batch's mean when
        centering, for numerical accuracy); :meth:`_solve_from_gram` shifts them
        to the final mean. They are moments of ``X / scale`` (``"scale"``, a
        power of two; 1 unless the first batch is tiny or huge).
        """
        return accumulate_gram(
            getattr(self, "_gram_state", None),
            seqs,
            weights,
            scale,
            center=self.center,
            verbose=self.verbose,
        )

    def _solve_from_gram(self, state=None) -> None:
        state = self._gram_state if state is None else state
        L, a = state["n_lags"], state["origin"].shape[0]
        n_components = self._check_n_components(state["n_steps"], L * a)
        gram, mean = centered_gram(state, center=self.center)
        norm_sq = float(np.trace(gram))
        s, comps = solve_gram(gram, n_components)
        self._set_solution(
            s,
            comps,
            mean,
            norm_sq,
            L,
            a,
            state["n_steps"],
            scale=state.get("scale", 1.0),
        )
        self.solver_ = "gram"

    def _set_solution(self, s, comps, mean, norm_sq, L, a, n_steps, scale=1.0) -> None:
        """The fitted attributes from the SVD of ``Ξ / scale``."""
        with np.errstate(over="ignore"):
            finite = np.isfinite(s * scale).all() and np.isfinite(mean * scale).all()
        if not (finite and np.isfinite(s).all() and np.isfinite(comps).all()):
            raise FloatingPointError(
                "The SVD of the LAES statistics of X is not finite: the values of "
                "X are too large or too small. Rescale X (e.g. with "
                "SequenceStandardScaler)."
            )
        self.components_ = comps
        self.singular_values_ = s * scale
        self.explained_variance_ratio_ = s**2 / norm_sq if norm_sq > 0 else s * 0.0
        self.n_components_ = comps.shape[0]
        self.mean_ = mean * scale
        self.max_length_ = int(L)
        self.n_steps_total_ = int(n_steps)
        # A = UᵀP (lag-0 block), B = UᵀRU with R shifting lag blocks by one
        self.A_ = np.ascontiguousarray(comps[:, :a])
        self.B_ = comps[:, a:] @ comps[:, : comps.shape[1] - a].T

    # -- encoding / decoding -----------------------------------------------
    def _validated(self, X):
        seqs = validate_sequences(self, X, reset=False)
        if np.any(self.mean_):
            _subtract_mean(seqs.data, seqs.lengths, self.mean_)
        return seqs

    def transform(self, X):
        """Encode sequences into memory states.

        Vectorized over sequences: one loop over time, one matrix product per
        step for the sequences still running.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_timesteps[, n_features]) or list
            Sequences to encode.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components_), or the states at every
            step shaped like the input (ndarray ``(n_samples, n_timesteps,
            n_components_)`` with NaN at padded steps, or a list of
            ``(T_i, n_components_)`` arrays) when ``return_sequences=True``.
        """
        check_is_fitted(self)
        if self.return_sequences:
            container = _get_output_config("transform", self)["dense"]
            if container != "default":
                raise ValueError(
                    f"set_output(transform={container!r}) cannot hold the output "
                    "of return_sequences=True (one state per time step, a 3-D "
                    "array or a list of arrays); use return_sequences=False (the "
                    "final states, 2-D) or set_output(transform='default')."
                )
        seqs = self._validated(X)
        final, states = self._encode(seqs.data, seqs.lengths, self.return_sequences)
        bad = ~np.isfinite(final).all(axis=1)
        if self.return_sequences:
            bad |= (~np.isfinite(states) & seqs.mask[..., None]).any(axis=(1, 2))
        if bad.any():
            index = np.flatnonzero(bad)
            shown = ", ".join(str(int(i)) for i in index[:10])
            raise FloatingPointError(
                f"The encoded states are not finite for {len(index)} of "
                f"{len(bad)} sequences (indices {shown}"
                f"{', ...' if len(index) > 10 else ''}): the values of X are too "
                "large for the fitted encoder. Rescale X."
            )
        if self.return_sequences:
            return format_like_input(states, seqs)
        return final

    def _encode(self, data, lengths, return_sequences=False):
        return encode(data, lengths, self.A_, self.B_, return_sequences)

    def inverse_transform(self, Z, lengths=None):
        """Decode memory states back into sequences.

        The state ``m_l`` of a sequence of length ``l`` decodes its steps
        backwards, ``x~_t = Aᵀ m_t`` and ``m_{t-1} = Bᵀ m_t`` for
        ``t = l, ..., 1`` (Carta et al. 2021 eq. 2), plus ``mean_``.

        Parameters
        ----------
        Z : array-like of shape (n_samples, n_components_)
            Memory states (the output of :meth:`transform`).
        lengths : int or array-like of shape (n_samples,), default=None
            Length of every decoded sequence; defaults to ``max_length_``.

        Returns
        -------
        X : ndarray of shape (n_samples, length, n_features_in_) when all
            lengths are equal, else a list of ``(length_i, n_features_in_)``
            arrays.
        """
        check_is_fitted(self)
        if (
            any(np.ndim(z) == 2 for z in Z)
            if isinstance(Z, list | tuple)
            else np.ndim(Z) == 3
        ):
            # the per-step states of return_sequences=True (a 3-D array or a
            # list of (T_i, n_components_) arrays): numpy's and
            # check_array's errors would not say what to pass
            raise ValueError(
                "inverse_transform decodes one state per sequence, Z of shape "
                f"(n_samples, {self.n_components_}), but Z holds a state per "
                "time step (the output of transform with return_sequences=True); "
                "pass each sequence's last state, e.g. [z[-1] for z in Z], with "
                "lengths=[len(z) for z in Z]."
            )
        Z = check_array(Z, dtype=np.float64, input_name="Z")
        if Z.shape[1] != self.n_components_:
            raise ValueError(
                f"Z must have shape (n_samples, {self.n_components_}), got {Z.shape}."
            )
        n = Z.shape[0]
        if lengths is None:
            lengths = self.max_length_
        lengths = np.asarray(lengths)
        if lengths.ndim == 0 and np.issubdtype(lengths.dtype, np.integer):
            lengths = np.full(n, int(lengths))
        if (
            lengths.shape != (n,)
            or not np.issubdtype(lengths.dtype, np.integer)
            or (lengths < 1).any()
        ):
            raise ValueError(
                f"lengths must be a positive int or {n} positive ints, got {lengths!r}."
            )
        lengths = lengths.astype(np.int64)
        T = int(lengths.max())
        out = decode(Z, lengths, self.A_, self.B_)
        with np.errstate(over="ignore", invalid="ignore"):
            out += self.mean_
        if not np.isfinite(out).all():
            raise FloatingPointError(
                "inverse_transform of Z gives non-finite values: the codes of Z "
                f"(max |Z| = {float(np.max(np.abs(Z))):.4g}) are too large to "
                "decode in float64."
            )
        if (lengths == T).all():
            return restore_input_layout(self, out)
        return restore_input_layout(self, [out[i, : lengths[i]] for i in range(n)])

    def reconstruction_error(self, X) -> float:
        """Relative error of decoding every prefix of ``X`` from its state.

        For every step ``t`` of every sequence, the state ``m_t`` (encoded by
        the recursion) is decoded backwards into ``t`` steps, which are
        compared with the prefix ``x_t, ..., x_1``::

            sum_prefixes ||prefix - decoded||^2 / sum_prefixes ||prefix||^2

        (on mean-centered data when ``center=True``). The denominator is
        ``||Ξ||_F^2`` and the error equals encode-then-decode on every prefix,
        but it is computed in ``O(n_steps p^2)`` without decoding: with the
        decoder blocks ``Ω_k = Aᵀ(Bᵀ)^k`` and ``m_t = sum_k Ω_kᵀ x_{t-k}``,
        the error of a prefix is ``||ξ_t||^2 - 2 ||m_t||^2 + m_tᵀ S_t m_t``,
        ``S_t = sum_{k<t} Ω_kᵀ Ω_k``. With ``n_components >= rank(Ξ)`` it is 0.
        It only scores the ``t`` decoded steps of every prefix, not what the
        decoder produces before the first step, so with truncation it can be
        below the error of the rank-``p`` projection of the zero-padded Ξ,
        ``1 - sum(explained_variance_ratio_)`` on the training data (the SVD
        error of Carta et al. 2021 Fig. 8a).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_timesteps[, n_features]) or list

        Returns
        -------
        error : float
            In ``[0, inf)``; 0 for a perfect reconstruction.
        """
        check_is_fitted(self)
        seqs = self._validated(X)
        data, lengths = seqs.data, seqs.lengths
        # the error is a ratio of squares: computed on X / scale (exact) when
        # the squares of X would underflow or overflow
        scale = _rescaling(data)
        if scale != 1.0:
            data /= scale
        norm_sq = xi_frobenius_sq(data, lengths)
        if not np.isfinite(norm_sq):
            raise FloatingPointError(
                "The reconstruction error of X is not finite: the values of X are "
                "too large for float64. Rescale X."
            )
        cross, quad = prefix_decoding_terms(data, lengths, self.A_, self.B_)
        if norm_sq == 0:
            return 0.0
        error = max(norm_sq - 2 * cross + quad, 0.0) / norm_sq
        if not np.isfinite(error):
            raise FloatingPointError(
                "The reconstruction error of X is not finite: its encoded states "
                "overflow float64. Rescale X."
            )
        return error

    def score(self, X, y=None) -> float:
        """Fraction of the prefix energy reconstructed: ``1 - reconstruction_error``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_timesteps[, n_features]) or list
        y : None
            Ignored.

        Returns
        -------
        score : float
            At most 1; 1 for a perfect reconstruction.
        """
        return 1.0 - self.reconstruction_error(X)

    def get_feature_names_out(self, input_features=None):
        """Names of the memory units: ``laes0``, ..., ``laes{p-1}``.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Only checked: the column names seen in ``fit``
            (``feature_names_in_``, e.g. the time-step columns of a 2-D
            DataFrame, as :class:`~sklearn.compose.ColumnTransformer` passes
            them), or any ``n_features_in_`` names (one per feature of a
            time step).

        Returns
        -------
        feature_names_out : ndarray of str objects

        Examples
        --------
        >>> import numpy as np
        >>> from sklmn.laes import LAESTransformer
        >>> laes = LAESTransformer(n_components=2).fit(np.eye(4))
        >>> laes.get_feature_names_out()
        array(['laes0', 'laes1'], dtype=object)
        """
        check_is_fitted(self)
        if input_features is not None:
            names = np.asarray(input_features, dtype=object)
            seen = getattr(self, "feature_names_in_", None)
            if seen is not None and len(names) == len(seen):
                if not np.array_equal(names, seen):
                    raise ValueError(
                        "input_features is not equal to feature_names_in_ (the "
                        "column names seen in fit)."
                    )
            elif len(names) != self.n_features_in_:
                expected = f"{self.n_features_in_} (n_features_in_)"
                if seen is not None:
                    expected += f" or the {len(seen)} column names seen in fit"
                raise ValueError(
                    f"input_features should have length {expected}, got {len(names)}."
                )
        return np.asarray([f"laes{i}" for i in range(self.n_components_)], dtype=object)
