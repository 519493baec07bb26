"""Character-level language modelling over one long stream (the stream mode).

:class:`StreamLanguageModel` predicts the next token of a single long
sequence (a text, or an integer-coded stream such as
:func:`sklmn.datasets.load_ptb_characters` returns) with truncated
backpropagation through time (TBPTT), the set-up of character-level Penn
Treebank in Helfrich & Ye 2020 §5.4:

* the stream is cut into ``batch_size`` parallel contiguous tracks (track
  ``b`` holds the ``b``-th ``1/batch_size`` of the stream);
* each epoch walks the tracks in windows of ``bptt`` steps, in order; the
  recurrent state at the end of a window is the initial state of the next
  one (detached: the gradient stops at the window's start), and the state
  is reset to zero at the start of every epoch;
* evaluation (:meth:`StreamLanguageModel.bits_per_character`,
  :meth:`~StreamLanguageModel.predict_proba`) reads the whole stream as
  one track, carrying the state from its first token to its last.

Why a dedicated loop rather than the skorch net of the sequence
estimators: their training draws shuffled (optionally length-bucketed)
minibatches of independent sequences, each starting from a zero state.
Carrying a state from one minibatch to the next needs the opposite: a fixed
order of the windows, a fixed assignment of tracks to batch rows, and a
state that outlives the batch. The loop below is those few lines, with the
library's recurrent modules, optimizers, seeding and thread policy.
"""

from __future__ import annotations

import copy
import math
import warnings
from numbers import Integral, Real

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted
from torch import nn

from .._training._chain import OPTIMIZERS
from ..callbacks import DivergenceWarning
from ..nn import ENRNN, GRU, LMN, LSTM, ElmanRNN, LinearRNN
from ..utils._atomic import atomic_fit as _atomic_fit
from ..utils._compat import Interval, StrOptions, _fit_context
from ..utils._doc_link import _DocLinkMixin
from ._checks import resolve_device
from ._persist import MAX_THREADS
from ._threads import _resolved_threads, _seeded_torch, _torch_threads

__all__ = ["StreamLanguageModel"]

#: the ``cell`` choices -> (module class, the size parameters it reads)
_CELLS = {
    "lstm": (LSTM, ()),
    "gru": (GRU, ()),
    "elman": (ElmanRNN, ()),
    "linear": (LinearRNN, ()),
    "enrnn": (ENRNN, ("short_size",)),
    "lmn": (LMN, ("memory_size",)),
}

#: keyword arguments of the modules that ``cell_params`` may not set: the
#: estimator sets them from its own parameters (or, for ``bidirectional``, a
#: language model reads the stream forwards only)
_RESERVED = frozenset(
    {"input_size", "hidden_size", "short_size", "memory_size", "num_layers"}
)

#: evaluation reads the stream in chunks of this many steps (the state is
#: carried across them: the result does not depend on it, only the memory)
_EVAL_CHUNK = 2048

_LN2 = math.log(2.0)


class _StreamNet(nn.Module):
    """Embedding -> recurrent module -> linear readout to next-token logits."""

    def __init__(self, n_tokens: int, embedding_dim: int, recurrent: nn.Module):
        super().__init__()
        self.embedding = nn.Embedding(n_tokens, embedding_dim)
        self.recurrent = recurrent
        self.readout = nn.Linear(recurrent.output_size, n_tokens)

    def forward(self, tokens: torch.Tensor, state=None):
        """Logits ``(N, T, n_tokens)``, the final state and the penalty."""
        out, state, penalty = self.recurrent(
            self.embedding(tokens), state=state, return_penalty=True
        )
        return self.readout(out), state, penalty


def _detached(state):
    """``state`` (a tensor, a tuple of tensors or None) cut from the graph."""
    if state is None:
        return None
    if isinstance(state, torch.Tensor):
        return state.detach()
    return type(state)(_detached(s) for s in state)


def _is_text(X) -> bool:
    return isinstance(X, str) or (
        isinstance(X, list | tuple) and len(X) > 0 and isinstance(X[0], str)
    )


class StreamLanguageModel(_DocLinkMixin, BaseEstimator):
    """Next-token language model over one long stream, trained by truncated BPTT.

    The stream mode of sklmn for character-level language modelling
    (Helfrich & Ye 2020 §5.4): an embedding of the tokens feeds a recurrent
    module of :mod:`sklmn.nn` chosen by ``cell``, and a linear readout
    gives the logits of the next token. ``fit`` cuts the stream into
    ``batch_size`` parallel contiguous tracks and trains on windows of
    ``bptt`` steps with the recurrent state carried (detached) from one
    window to the next, reset to zero at every epoch start. The score is in
    bits per character, the cross-entropy in base 2, with the state carried
    over the whole evaluated stream. See ``docs/user_guide/baselines.md``,
    "Character streams".

    Parameters
    ----------
    cell : {'lstm', 'gru', 'elman', 'linear', 'enrnn', 'lmn'}, default='lstm'
        Recurrent module: :class:`~sklmn.nn.LSTM`, :class:`~sklmn.nn.GRU`,
        :class:`~sklmn.nn.ElmanRNN`, :class:`~sklmn.nn.LinearRNN`,
        :class:`~sklmn.nn.ENRNN` (Helfrich & Ye 2020) or
        :class:`~sklmn.nn.LMN` (Carta et al. 2021).
    hidden_size : int, default=128
        Hidden units (for ``'enrnn'`` the long-term state, for ``'lmn'``
        the functional units).
    short_size : int, default=64
        Short-term state of ``cell='enrnn'``; ignored by the other cells.
    memory_size : int, default=64
        Memory units of ``cell='lmn'``; ignored by the other cells.
    num_layers : int, default=1
        Stacked recurrent layers.
    embedding_dim : int, default=32
        Size of the learned embedding of the tokens (the recurrent module's
        input size).
    cell_params : dict or None, default=None
        Further keyword arguments of the recurrent module (e.g.
        ``{'coupling': True, 'activation': 'relu'}`` for ``'enrnn'``,
        ``{'forget_bias': 0.0}`` for ``'lstm'``), checked by the module;
        the sizes above and ``bidirectional=True`` are refused (a language
        model reads the stream forwards only).
    bptt : int, default=50
        Steps of a training window: the gradient flows back at most this
        far; the state flows on.
    batch_size : int, default=32
        Parallel contiguous tracks the training stream is cut into (the
        rows of every minibatch).
    max_iter : int, default=20
        Epochs (passes over the training stream).
    learning_rate_init : float, default=1e-3
        Learning rate of the optimizer.
    optimizer : {'adam', 'adamw', 'sgd', 'rmsprop'}, default='adam'
        Optimizer (``'sgd'`` with Nesterov momentum 0.9).
    alpha : float, default=0.0
        L2 penalty: the optimizer's weight decay (the gradient of
        ``0.5 * alpha * ||w||²`` added to each window's mean loss).
    gradient_clipping : float or None, default=1.0
        Largest norm of the gradient of a window (None: no clipping).
    n_iter_no_change : int or None, default=None
        Stop when the monitored loss (validation bits per character with
        ``X_val``, else the training loss) has not improved by ``tol`` for
        this many epochs; None trains all ``max_iter`` epochs.
    tol : float, default=1e-4
        Improvement that counts for ``n_iter_no_change``.
    verbose : int, default=0
        Print one line per epoch when positive.
    random_state : int, RandomState instance or None, default=None
        Seeds the initialization of the network (and its dropout); the
        order of the windows is fixed by the stream.
    device : str or torch.device, default='cpu'
        Device of the network.
    n_threads : int, 'auto' or None, default='auto'
        Torch threads of ``fit`` and of the evaluation (None: as set in the
        process; ``'auto'``: as for the sequence estimators, see
        ``docs/training.md``).

    Attributes
    ----------
    vocabulary_ : ndarray of shape (n_tokens,)
        The tokens: the sorted characters of the training text, or
        ``arange(max(X) + 1)`` for an integer stream.
    n_tokens_ : int
        Number of tokens (the size of the embedding and of the readout).
    module_ : torch.nn.Module
        The trained network (embedding, recurrent module, readout), with the
        weights of the kept epoch.
    loss_curve_ : list of float
        Mean training cross-entropy (natural log) per token of every epoch,
        averaged over the epoch's windows while the weights changed.
    validation_bpc_ : list of float or None
        Bits per character on ``X_val`` after every epoch (None without
        ``X_val``).
    best_epoch_ : int
        The epoch whose weights were kept (1-based): lowest validation bits
        per character with ``X_val``, else lowest training loss.
    n_iter_ : int
        Epochs run (completed).
    diverged_ : bool
        Whether training stopped at a non-finite loss (the weights of the
        kept epoch were restored, with a
        :class:`~sklmn.callbacks.DivergenceWarning`).

    See Also
    --------
    sklmn.datasets.load_ptb_characters : The Penn Treebank as character
        streams.
    RNNClassifier : The baselines on independent sequences.

    Notes
    -----
    A fitted model is saved with :mod:`pickle` or :mod:`joblib`;
    :func:`sklmn.persistence.save` stores the parameters of an unfitted one
    only (it refuses the trained network of this estimator).

    The training loss of an epoch counts every token of the first
    ``batch_size * floor((len(X) - 1) / batch_size)`` predictions (the
    remainder of the stream is not trained on); evaluation counts all
    ``len(X) - 1`` predictions.

    Examples
    --------
    >>> from sklmn.estimators import StreamLanguageModel
    >>> text = "the cat sat on the mat. " * 40
    >>> lm = StreamLanguageModel(hidden_size=16, embedding_dim=8, bptt=10,
    ...                          batch_size=4, max_iter=3, random_state=0)
    >>> lm = lm.fit(text)
    >>> "".join(lm.vocabulary_)
    ' .acehmnost'
    >>> lm.predict_proba("the c").shape
    (5, 11)
    >>> bool(lm.bits_per_character(text) < 3.5)
    True
    """

    #: :func:`sklmn.persistence.load` sets no fitted attribute of this class:
    #: its files hold the parameters only (a fitted model is pickled)
    _fitted_attributes: dict = {}

    _parameter_constraints: dict = {
        "cell": [StrOptions(set(_CELLS))],
        "hidden_size": [Interval(Integral, 1, None, closed="left")],
        "short_size": [Interval(Integral, 1, None, closed="left")],
        "memory_size": [Interval(Integral, 1, None, closed="left")],
        "num_layers": [Interval(Integral, 1, None, closed="left")],
        "embedding_dim": [Interval(Integral, 1, None, closed="left")],
        "cell_params": [None, dict],
        "bptt": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "learning_rate_init": [Interval(Real, 0, None, closed="neither")],
        "optimizer": [StrOptions(set(OPTIMIZERS))],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "gradient_clipping": [None, Interval(Real, 0, None, closed="neither")],
        "n_iter_no_change": [None, Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
        "device": [str, torch.device],
        "n_threads": [
            Interval(Integral, 1, MAX_THREADS, closed="both"),
            StrOptions({"auto"}),
            None,
        ],
    }

    #: carry the state from one training window to the next (switched off
    #: only by the tests, to show what the carried state brings)
    _carry_state = True

    def __sklearn_tags__(self):
        # one stream: a text or a 1-D array of integer codes (a 2-D array,
        # the tag BaseEstimator declares, is refused)
        tags = super().__sklearn_tags__()
        tags.input_tags.one_d_array = True
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        return tags

    def __init__(
        self,
        cell="lstm",
        *,
        hidden_size=128,
        short_size=64,
        memory_size=64,
        num_layers=1,
        embedding_dim=32,
        cell_params=None,
        bptt=50,
        batch_size=32,
        max_iter=20,
        learning_rate_init=1e-3,
        optimizer="adam",
        alpha=0.0,
        gradient_clipping=1.0,
        n_iter_no_change=None,
        tol=1e-4,
        verbose=0,
        random_state=None,
        device="cpu",
        n_threads="auto",
    ):
        self.cell = cell
        self.hidden_size = hidden_size
        self.short_size = short_size
        self.memory_size = memory_size
        self.num_layers = num_layers
        self.embedding_dim = embedding_dim
        self.cell_params = cell_params
        self.bptt = bptt
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.learning_rate_init = learning_rate_init
        self.optimizer = optimizer
        self.alpha = alpha
        self.gradient_clipping = gradient_clipping
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state
        self.device = device
        self.n_threads = n_threads

    # ------------------------------------------------------------ the data
    def _learn_vocabulary(self, X) -> np.ndarray:
        """Set ``vocabulary_`` and ``n_tokens_`` from the training stream and
        return it coded."""
        if _is_text(X):
            text = self._text(X, "X")
            vocabulary = np.array(sorted(set(text)))
            self._text_mode = True
        else:
            codes = self._integers(X, "X")
            # an empty stream: no vocabulary, refused by fit as too short
            vocabulary = np.arange(int(codes.max()) + 1 if codes.size else 0)
            self._text_mode = False
        self.vocabulary_ = vocabulary
        self.n_tokens_ = len(vocabulary)
        return self._encode(X, "X")

    @staticmethod
    def _text(X, name: str) -> str:
        if isinstance(X, str):
            return X
        bad = [i for i, part in enumerate(X) if not isinstance(part, str)]
        if bad:
            raise ValueError(
                f"{name} mixes text and other values: element {bad[0]} is "
                f"{type(X[bad[0]]).__name__}; pass one str, a list of str (joined "
                "in order) or a 1-D array of integer codes."
            )
        return "".join(X)

    @staticmethod
    def _integers(X, name: str) -> np.ndarray:
        try:
            arr = np.asarray(X)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{name} must be a str, a list of str or a 1-D array of "
                f"non-negative integer codes ({exc})."
            ) from None
        if arr.ndim != 1:
            raise ValueError(
                f"{name} must be one stream: a str, a list of str or a 1-D array "
                f"of integer codes, got an array of shape {arr.shape}."
            )
        if arr.size == 0:  # an empty list is an array of floats
            return np.zeros(0, dtype=np.int64)
        if arr.dtype.kind not in "iu":
            raise ValueError(
                f"{name} must hold integer codes (or be text), got dtype "
                f"{arr.dtype}."
            )
        if int(arr.min()) < 0:
            raise ValueError(
                f"{name} must hold non-negative codes, got {int(arr.min())} at "
                f"position {int(np.argmin(arr))}."
            )
        if int(arr.max()) > np.iinfo(np.int64).max:  # uint64 beyond int64
            raise ValueError(
                f"{name} holds the code {int(arr.max())} at position "
                f"{int(np.argmax(arr))}, too large for an int64 token index."
            )
        return arr.astype(np.int64)

    def _encode(self, X, name: str) -> np.ndarray:
        """``X`` coded as indices into ``vocabulary_`` (int64 array)."""
        if self._text_mode:
            if not _is_text(X):
                raise ValueError(
                    f"{name} must be text: the model was fitted on text "
                    f"(vocabulary of {self.n_tokens_} characters), got "
                    f"{type(X).__name__}."
                )
            text = self._text(X, name)
            index = {c: i for i, c in enumerate(self.vocabulary_.tolist())}
            unknown = sorted(set(text) - set(index))
            if unknown:
                shown = ", ".join(repr(c) for c in unknown[:10])
                raise ValueError(
                    f"{name} holds {len(unknown)} character(s) outside the "
                    f"training vocabulary: {shown}."
                )
            return np.fromiter((index[c] for c in text), np.int64, len(text))
        if _is_text(X):
            raise ValueError(
                f"{name} must be integer codes: the model was fitted on an "
                "integer stream, got text."
            )
        codes = self._integers(X, name)
        if codes.size and int(codes.max()) >= self.n_tokens_:
            raise ValueError(
                f"{name} holds the code {int(codes.max())} at position "
                f"{int(np.argmax(codes))}, outside the training vocabulary "
                f"0..{self.n_tokens_ - 1}."
            )
        return codes

    # ------------------------------------------------------------- the net
    def _build_recurrent(self) -> nn.Module:
        module_class, sizes = _CELLS[self.cell]
        extra = dict(self.cell_params or {})
        reserved = sorted(set(extra) & _RESERVED)
        if reserved:
            raise ValueError(
                f"cell_params may not set {reserved}: they are parameters of "
                f"{type(self).__name__} (hidden_size, short_size, memory_size, "
                "num_layers, embedding_dim)."
            )
        if extra.get("bidirectional", False):
            raise ValueError(
                "cell_params={'bidirectional': True} is refused: a language "
                "model predicts the next token from the past only."
            )
        kwargs = {name: getattr(self, name) for name in sizes}
        try:
            return module_class(
                self.embedding_dim,
                self.hidden_size,
                *kwargs.values(),
                num_layers=self.num_layers,
                **extra,
            )
        except TypeError as exc:
            raise ValueError(
                f"cell_params={self.cell_params!r} does not fit cell={self.cell!r} "
                f"({module_class.__name__}): {exc}"
            ) from None

    def _build_net(self) -> _StreamNet:
        return _StreamNet(self.n_tokens_, self.embedding_dim, self._build_recurrent())

    def _threads(self, module, tracks: int):
        """The torch threads of a pass over ``tracks`` parallel tracks."""
        return _resolved_threads(self.n_threads, module, tracks)

    # --------------------------------------------------------------- fit
    @_fit_context(prefer_skip_nested_validation=True)
    @_atomic_fit
    def fit(self, X, y=None, *, X_val=None):
        """Train on the stream ``X`` by truncated backpropagation through time.

        ``fit`` is all or nothing: if it raises, the estimator keeps every
        attribute it had before the call.

        Parameters
        ----------
        X : str, list of str or array-like of int of shape (n_steps,)
            The training stream: a text (a list of str is joined in order),
            whose characters become the vocabulary, or integer codes
            ``0..n_tokens - 1``.
        y : None
            Ignored: the targets are the stream shifted by one step.
        X_val : same kind as X, default=None
            Validation stream, scored in bits per character after every
            epoch (state carried over all of it); the weights of the epoch
            of lowest validation bits per character are kept. Without it,
            those of the lowest training loss.

        Returns
        -------
        self : StreamLanguageModel
            The fitted estimator.

        Raises
        ------
        ValueError
            If the stream is too short for ``batch_size`` tracks, or
            ``X_val`` holds tokens outside the training vocabulary.
        FloatingPointError
            If the training loss of the first epoch, or the parameters at
            its end, are not finite (later: the weights of the best finite
            epoch are kept and training stops).
        """
        device = resolve_device(self.device)
        tokens = self._learn_vocabulary(X)
        n_steps = (len(tokens) - 1) // self.batch_size
        if n_steps < 1:
            raise ValueError(
                f"X holds {len(tokens)} tokens, too few for batch_size="
                f"{self.batch_size} tracks: each track needs at least one input "
                f"and its next token (at least {self.batch_size + 1} tokens)."
            )
        val = None
        if X_val is not None:
            val = self._encode(X_val, "X_val")
            if len(val) < 2:
                raise ValueError(
                    f"X_val holds {len(val)} token(s): at least 2 are needed "
                    "(an input and its next token)."
                )
        rng = check_random_state(self.random_state)
        seed = int(rng.randint(np.iinfo(np.int32).max))
        with _seeded_torch(seed):
            module = self._build_net().to(device)
            with _torch_threads(
                self._threads(module, self.batch_size),
                wait=not isinstance(self.n_threads, str),
                blas=True,
            ):
                self._train(module, tokens, n_steps, val, device)
        return self

    def _train(self, module, tokens, n_steps, val, device) -> None:
        b = self.batch_size
        used = tokens[: b * n_steps + 1]
        inputs = torch.from_numpy(used[:-1].reshape(b, n_steps)).to(device)
        targets = torch.from_numpy(used[1:].reshape(b, n_steps)).to(device)
        optimizer_class, settings = OPTIMIZERS[self.optimizer]
        optimizer = optimizer_class(
            module.parameters(),
            lr=float(self.learning_rate_init),
            weight_decay=float(self.alpha),
            **settings,
        )
        losses, val_bpc = [], [] if val is not None else None
        best, best_epoch, best_state, stall = math.inf, 0, None, 0
        self.diverged_ = False
        for epoch in range(1, self.max_iter + 1):
            module.train()
            state, total = None, 0.0  # the state is reset at every epoch start
            for start in range(0, n_steps, self.bptt):
                x = inputs[:, start : start + self.bptt]
                y = targets[:, start : start + self.bptt]
                logits, state, penalty = module(x, state)
                loss = F.cross_entropy(
                    logits.reshape(-1, self.n_tokens_), y.reshape(-1)
                )
                value = loss.item()  # one read of the loss per window
                if not math.isfinite(value):
                    total = math.nan
                    break
                optimizer.zero_grad()
                (loss + penalty).backward()
                if self.gradient_clipping is not None:
                    nn.utils.clip_grad_norm_(
                        module.parameters(), float(self.gradient_clipping)
                    )
                optimizer.step()
                state = _detached(state) if self._carry_state else None
                total += value * y.numel()
            message = None
            if not math.isfinite(total):
                message = (
                    f"Training diverged: the loss of epoch {epoch} is not finite."
                )
            elif not all(bool(torch.isfinite(p).all()) for p in module.parameters()):
                # the epoch's last update (after its last loss was read)
                message = (
                    f"Training diverged: the parameters after epoch {epoch} are "
                    "not finite."
                )
            if message is not None:
                if best_state is None:
                    raise FloatingPointError(
                        f"{message} Try a smaller learning_rate_init or "
                        "gradient_clipping."
                    )
                warnings.warn(
                    f"{message} The weights of epoch {best_epoch} are kept.",
                    DivergenceWarning,
                    stacklevel=3,
                )
                self.diverged_ = True
                break
            losses.append(total / (b * n_steps))
            monitored = losses[-1]
            if val is not None:
                # an overflowing state scores as infinitely bad, not an error
                monitored = self._bits(module, val, device, check=False)
                val_bpc.append(monitored)
            if self.verbose:
                line = f"epoch {epoch}: training loss {losses[-1]:.4f}"
                if val is not None:
                    line += f", validation bpc {monitored:.4f}"
                print(line)
            stall = 0 if monitored < best - self.tol else stall + 1
            if monitored < best or best_state is None:
                best, best_epoch = monitored, epoch
                best_state = copy.deepcopy(module.state_dict())
            if self.n_iter_no_change is not None and stall >= self.n_iter_no_change:
                break
        module.load_state_dict(best_state)
        module.eval()
        self.module_ = module
        self.loss_curve_ = losses
        self.validation_bpc_ = val_bpc
        self.best_epoch_ = best_epoch
        self.n_iter_ = len(losses)

    # -------------------------------------------------------- evaluation
    def _log_probs(
        self, module, codes: np.ndarray, device, *, keep: bool, check: bool = True
    ):
        """Run the stream through ``module`` as one track, carrying the state.

        Returns the summed negative log-likelihood (nats) of ``codes[1:]``
        (infinite when not finite and ``check`` is False; an error with
        ``check``) and, with ``keep``, the log-probabilities of the next
        token after every position, shape ``(len(codes), n_tokens)``, all
        finite (the last position's too, which the likelihood does not read).
        """
        module.eval()
        tokens = torch.from_numpy(codes).to(device).unsqueeze(0)
        state, nll, kept = None, 0.0, []
        with torch.no_grad():
            for start in range(0, tokens.shape[1], _EVAL_CHUNK):
                x = tokens[:, start : start + _EVAL_CHUNK]
                logits, state, _ = module(x, state)
                logp = torch.log_softmax(logits[0].double(), dim=-1)
                nxt = tokens[0, start + 1 : start + 1 + x.shape[1]]
                nll -= float(logp[: len(nxt)].gather(1, nxt[:, None]).sum())
                if keep:
                    kept.append(logp.cpu().numpy())
        logp = np.concatenate(kept) if keep else None
        if not math.isfinite(nll) or (keep and not np.isfinite(logp).all()):
            if not check:
                return math.inf, None
            what = (
                "log-likelihood of the stream is"
                if not math.isfinite(nll)
                else "next-token distributions on the stream are"
            )
            raise FloatingPointError(
                f"The model's {what} not finite: the recurrence overflowed."
            )
        return nll, logp

    def _bits(self, module, codes, device, *, check: bool = True) -> float:
        nll, _ = self._log_probs(module, codes, device, keep=False, check=check)
        return nll / (len(codes) - 1) / _LN2

    def _checked_codes(self, X, minimum: int) -> np.ndarray:
        check_is_fitted(self)
        codes = self._encode(X, "X")
        if len(codes) < minimum:
            raise ValueError(
                f"X holds {len(codes)} token(s): at least {minimum} are needed."
            )
        return codes

    def _run(self, fn):
        with _torch_threads(
            # the evaluation carries the state over one track
            self._threads(self.module_, 1),
            wait=not isinstance(self.n_threads, str),
        ):
            return fn()

    def bits_per_character(self, X) -> float:
        """Bits per character of the stream ``X``, the state carried over all of it.

        The mean over the ``len(X) - 1`` predictions of ``-log2 p(x[t+1] |
        x[0..t])``, the first token read from the zero state (the measure of
        Helfrich & Ye 2020 §5.4: the cross-entropy in base 2).

        Parameters
        ----------
        X : str, list of str or array-like of int of shape (n_steps,)
            A stream of the kind the model was fitted on, at least 2 tokens.

        Returns
        -------
        bpc : float

        Examples
        --------
        >>> import numpy as np
        >>> from sklmn.estimators import StreamLanguageModel
        >>> stream = np.tile([0, 1, 2, 3], 100)
        >>> lm = StreamLanguageModel(cell="gru", hidden_size=8, embedding_dim=4,
        ...                          bptt=8, batch_size=4, max_iter=20,
        ...                          learning_rate_init=0.05, random_state=0)
        >>> bool(lm.fit(stream).bits_per_character(stream) < 0.5)
        True
        """
        codes = self._checked_codes(X, 2)
        device = next(self.module_.parameters()).device
        return self._run(lambda: self._bits(self.module_, codes, device))

    def score(self, X, y=None) -> float:
        """Minus the bits per character of ``X`` (higher is better).

        scikit-learn's convention for model selection
        (:func:`~sklearn.model_selection.cross_val_score` and the searches
        maximize the score); see :meth:`bits_per_character`.

        Parameters
        ----------
        X : str, list of str or array-like of int of shape (n_steps,)
            A stream of the kind the model was fitted on, at least 2 tokens.
        y : None
            Ignored.

        Returns
        -------
        score : float
            ``-bits_per_character(X)``.

        Examples
        --------
        >>> from sklmn.estimators import StreamLanguageModel
        >>> lm = StreamLanguageModel(hidden_size=8, embedding_dim=4, bptt=5,
        ...                          batch_size=2, max_iter=1, random_state=0)
        >>> lm.fit("abcabcabcabc").score("abcabc") < 0
        True
        """
        return -self.bits_per_character(X)

    def predict_proba(self, X) -> np.ndarray:
        """Probabilities of the next token after every position of ``X``.

        Parameters
        ----------
        X : str, list of str or array-like of int of shape (n_steps,)
            A stream of the kind the model was fitted on (the prompt), read
            with the state carried from its first token.

        Returns
        -------
        proba : ndarray of shape (n_steps, n_tokens)
            Row ``t``: the distribution of the token after ``X[t]``, columns
            in the order of ``vocabulary_``.

        Examples
        --------
        >>> from sklmn.estimators import StreamLanguageModel
        >>> lm = StreamLanguageModel(hidden_size=8, embedding_dim=4, bptt=5,
        ...                          batch_size=2, max_iter=1, random_state=0)
        >>> proba = lm.fit("abcabcabcabc").predict_proba("ab")
        >>> proba.shape, bool(abs(proba.sum(axis=1) - 1).max() < 1e-9)
        ((2, 3), True)
        """
        codes = self._checked_codes(X, 1)
        device = next(self.module_.parameters()).device
        _, logp = self._run(
            lambda: self._log_probs(self.module_, codes, device, keep=True)
        )
        return np.exp(logp)

    def predict(self, X) -> np.ndarray:
        """The most probable next token after every position of ``X``.

        Parameters
        ----------
        X : str, list of str or array-like of int of shape (n_steps,)
            A stream of the kind the model was fitted on.

        Returns
        -------
        tokens : ndarray of shape (n_steps,)
            Entries of ``vocabulary_`` (characters for a text model).

        Examples
        --------
        >>> import numpy as np
        >>> from sklmn.estimators import StreamLanguageModel
        >>> stream = np.tile([0, 1, 2], 100)
        >>> lm = StreamLanguageModel(cell="elman", hidden_size=8, embedding_dim=4,
        ...                          bptt=6, batch_size=4, max_iter=20,
        ...                          learning_rate_init=0.05, random_state=0)
        >>> lm.fit(stream).predict([0, 1, 2, 0])
        array([1, 2, 0, 1])
        """
        check_is_fitted(self)
        return self.vocabulary_[np.argmax(self.predict_proba(X), axis=1)]

    def sample(self, n_tokens, *, prompt=None, temperature=1.0, random_state=None):
        """Generate ``n_tokens`` tokens, each drawn from the predicted distribution.

        Parameters
        ----------
        n_tokens : int
            Number of tokens to generate.
        prompt : str or array-like of int, default=None
            Stream read first (its state starts the generation); None: the
            first token is drawn from the uniform distribution.
        temperature : float, default=1.0
            The logits are divided by it (below 1: more probable tokens
            favoured).
        random_state : int, RandomState instance or None, default=None
            Seeds the draws.

        Returns
        -------
        generated : str or ndarray of shape (n_tokens,)
            A str for a text model, integer codes otherwise (without the
            prompt).

        Examples
        --------
        >>> from sklmn.estimators import StreamLanguageModel
        >>> lm = StreamLanguageModel(hidden_size=8, embedding_dim=4, bptt=5,
        ...                          batch_size=2, max_iter=1, random_state=0)
        >>> len(lm.fit("abcabcabcabc").sample(7, prompt="ab", random_state=0))
        7
        """
        check_is_fitted(self)
        if (
            isinstance(n_tokens, bool)
            or not isinstance(n_tokens, Integral)
            or n_tokens < 1
        ):
            raise ValueError(f"n_tokens must be a positive int, got {n_tokens!r}.")
        if isinstance(temperature, bool) or not isinstance(temperature, Real) or not (
            0 < temperature < math.inf
        ):
            raise ValueError(
                f"temperature must be a positive finite float, got {temperature!r}."
            )
        rng = check_random_state(random_state)
        module = self.module_
        device = next(module.parameters()).device
        module.eval()
        out, state = [], None
        with torch.no_grad():
            if prompt is None:
                token = int(rng.randint(self.n_tokens_))
                out.append(token)
            else:
                codes = self._checked_codes(prompt, 1)
                logits, state, _ = module(
                    torch.from_numpy(codes).to(device).unsqueeze(0), state
                )
                last = logits[0, -1]
            while len(out) < n_tokens:
                if out:
                    x = torch.tensor([[out[-1]]], device=device)
                    logits, state, _ = module(x, state)
                    last = logits[0, -1]
                p = torch.softmax(last.double() / float(temperature), dim=-1)
                p = p.cpu().numpy()
                if not np.isfinite(p).all():
                    raise FloatingPointError(
                        f"The model's next-token distribution is not finite "
                        f"after {len(out)} generated token(s): the recurrence "
                        "overflowed."
                    )
                out.append(int(rng.choice(self.n_tokens_, p=p / p.sum())))
        tokens = self.vocabulary_[np.asarray(out, dtype=np.int64)]
        return "".join(tokens.tolist()) if self._text_mode else tokens
