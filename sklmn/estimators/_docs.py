"""The docstring templates shared by the sequence estimators.

Every public estimator's docstring holds ``%(model_parameters)s``,
``%(training_parameters)s``, ``%(fitted_attributes)s`` (and, for the
classifiers, ``%(class_weight)s``; for the estimators with a pretrained start,
``%(start_attributes)s``) lines that :func:`fill_doc` replaces with the texts
below, so that a shared parameter is described once.
"""

from __future__ import annotations

from ._expansion import INPUT_EXPANSION_ATTRIBUTES_DOC, INPUT_EXPANSION_DOC

__all__ = [
    "CLASS_WEIGHT_DOC",
    "CTC_DECODING_DOC",
    "FITTED_ATTRIBUTES_DOC",
    "START_ATTRIBUTES_DOC",
    "TRAINING_PARAMETERS_DOC",
    "fill_doc",
]

TRAINING_PARAMETERS_DOC = """\
    target : {'sequence', 'timestep', 'ctc'}, default='sequence'
        ``'sequence'``: one target per sequence, ``y`` of shape ``(n,)`` or
        ``(n, k)``, predicted from the output at each sequence's last valid
        step. ``'timestep'``: one target per valid time step, ``y`` a padded
        array ``(n, T[, k])`` (entries at padded steps of ``X`` are ignored)
        or a list (or pandas Series) of ``(T_i[, k])`` arrays; predictions
        come back in the layout of ``X`` (a list for a list, else a padded
        array whose padded steps are NaN, or None for non-numeric labels).
        ``'ctc'`` (classifiers only): a label sequence per sequence, not
        aligned with the time steps (a transcription), ``y`` a list (or
        pandas Series) of strings or of lists of labels, trained with the
        connectionist temporal classification loss (Graves et al. 2006) and
        decoded by ``predict`` (see ``decoding``).
    standardize : bool, default=True
        Standardize every input feature by its mean and standard deviation
        over all valid time steps of the training sequences (padding
        ignored; constant features are only centered), and for regressors
        every target output too (predictions are transformed back). The
        statistics are fitted attributes (``input_mean_``, ``input_scale_``,
        ``target_mean_``, ``target_scale_``); ``loss_curve_`` is then in
        standardized units. The same transformation as
        :class:`sklmn.preprocessing.SequenceStandardScaler`. For sparse
        binary inputs (one-hot codes, piano rolls) prefer False: a rarely
        active feature becomes a very large input (measured on the Bach
        chorales, see ``docs/training.md``).
    max_iter : int, default=200
        Maximum number of epochs.
    batch_size : int or 'auto', default='auto'
        Sequences per minibatch; ``'auto'`` is ``min(200, n_samples)`` (the
        rule of scikit-learn's MLP) up to 1000 training sequences and 32
        above (measurements: ``docs/training.md``, "Large training sets: 32
        per minibatch"); an LMN or multi-scale LMN classifier trained
        without a start (``pretrainer=None``, Schur memory) uses 16 up to
        1000 sequences
        (``docs/memory.md``, "Training from scratch"). Each batch is trimmed
        to its longest sequence.
    bucket_by_length : bool, default=False
        Draw training minibatches of sequences of similar lengths (shuffle,
        sort pools of 50 batches by length, shuffle the batches): much less
        computation on padding when lengths vary widely, at the price of less
        random batch compositions.
    learning_rate_init : float or 'auto', default='auto'
        Learning rate of the optimizer. ``'auto'``: 0.001 up to 1000 training
        sequences and 0.003 above (``auto_learning_rate`` in
        ``sklmn.estimators._auto``; the rate used is ``net_.lr``; in
        ``partial_fit`` the sequences of each call count, as for
        ``batch_size``; measurements: ``docs/training.md``, "Large training
        sets: a higher learning rate"; the LMN estimators' ``'smooth'`` and
        ``'projection'`` fine-tuning of a start trains at 0.0003, see
        ``fine_tuning``). The papers' experiments pin their own rates.
    learning_rate : {'constant', 'adaptive'}, default='constant' or 'adaptive'
        ``'constant'`` for classifiers, ``'adaptive'`` for regressors.
        ``'adaptive'`` divides the learning rate by 5 each time
        ``ceil(n_iter_no_change / 2)`` consecutive epochs bring no
        improvement of the monitored loss (a reduce-on-plateau schedule;
        measurements: ``docs/training.md``, "Regression, learning-rate
        schedule").
    alpha : float, default=1e-4
        Strength of the L2 penalty on the weights, scaled as in
        scikit-learn's MLP (``0.5 * alpha * ||W||² / batch_size`` per
        minibatch): the optimizer's ``weight_decay`` is ``alpha /
        batch_size``, applied to weights but not to biases; not included in
        ``loss_curve_``.
    optimizer : {'adam', 'adamw', 'sgd', 'rmsprop'}, default='adam'
        torch optimizer (``'sgd'`` uses Nesterov momentum 0.9, like
        scikit-learn's MLP).
    gradient_clipping : float or None, default=1.0
        Maximum L2 norm of the loss's gradient with respect to all parameters
        (None: no clipping); the decay terms (``alpha``, and
        ``pretrained_alpha`` where there is one) are added after clipping.
    early_stopping : bool or 'auto', default='auto'
        Hold out ``validation_fraction`` of the sequences (stratified for
        single-label sequence classification, unless a class has a single
        sequence or there are more classes than held-out or training
        sequences) and monitor the validation
        loss (see ``validation_metric``) instead of the training loss.
        ``'auto'``: on for classifiers with more than 1000 training sequences,
        for regressors with at least 20, and whenever ``X_val`` is passed to
        ``fit`` (measured: small classification sets lose more by the
        held-out sequences than they gain, small regression sets overfit
        without them; see ``docs/training.md``). Whatever monitors it,
        ``fit`` ends with the weights of the best epoch. A pretrainer sees
        the training part only: the held-out sequences judge its start too.
        (The LMN estimators' ``fine_tuning='smooth'`` and ``'projection'``,
        the classifiers' default, with ``'auto'``
        instead holds out a quarter of the sequences to judge the
        fine-tuning of a start fitted on all of them; see
        ``fine_tuning``.)
        With ``sample_weight``, a split that leaves either part without
        weight is drawn among the sequences of non-zero weight (at least two
        are needed).
    validation_metric : {'loss', 'score'}, default='loss'
        What early stopping monitors: the validation loss (the training
        criterion), or the estimator's natural score (accuracy, frame-level
        accuracy, R², which needs at least two validation sequences or,
        per time step, two valid steps).
    validation_fraction : float, default=0.1
        Fraction of the sequences held out for early stopping.
    n_iter_no_change : int, default=10 (classifiers) or 20 (regressors)
        Patience: training stops (converged) when more than
        ``n_iter_no_change`` consecutive epochs bring no improvement of the
        monitored quantity larger than ``tol`` (the rule of scikit-learn's
        MLP: with 10, after the 11th such epoch). Regressors wait longer, as their
        training often sits on a plateau before it learns (measurements:
        ``docs/training.md``, "Regression, patience").
    tol : float, default=1e-4
        Minimum improvement of the monitored quantity.
    warm_start : bool, default=False
        Continue training the fitted module (same model parameters and
        classes required) instead of building a new one.
    verbose : int or bool, default=0
        Print one line per epoch and the stopping message, and, for the
        estimators with a ``pretrainer``, one line per start (its readout's
        choices and cross-validated score, its time) and the choices made
        between starts.
    random_state : int, RandomState instance or None, default=None
        Seeds the initialization, the shuffling of the minibatches, the
        validation split and dropout, and a pretrainer whose own
        ``random_state`` is None (``pretrainer_`` gets a seed derived from
        this one). With an int, two fits on the CPU give identical models;
        torch's global random state is left untouched.
    device : str, default='cpu'
        torch device to train on, e.g. ``'cuda'``. A model trained on a GPU
        unpickles and predicts on a CPU-only machine (skorch maps the tensors
        to the CPU).
    n_threads : int, 'auto' or None, default='auto'
        Number of threads torch uses for the work of ``fit``,
        ``partial_fit`` and the predictions (``torch.set_num_threads``, set
        for the call and restored afterwards). ``'auto'``: one thread for a
        small model (batch size times parameters below 2 000 000), else
        torch's setting (lowered in joblib workers and by ``threadpoolctl``)
        bounded by the cores other processes leave free. ``fit`` and
        ``partial_fit`` also limit the BLAS thread pools of numpy and scipy
        (the pretraining, the readout) to that count, never raising them.
        None: leave torch's and BLAS's settings. An int is bounded by the
        machine's cores. The setting is
        process-wide, so calls with an int run one at a time in a process
        (see docs/user_guide/fitting.md, threads).
    input_layout : {'batch_first', 'channels_first'} or None, default=None
        Layout of 3-D input sequences (``fit``, the predictions, ``X_val``).
        None: sklmn's ``(n_samples, n_timesteps, n_features)``, with a
        warning when the data look channels-first; ``'batch_first'``: the
        same without the check; ``'channels_first'``: ``(n_samples,
        n_channels, n_timepoints)`` as sktime, aeon and pyts store it (lists
        of ``(n_channels, T_i)`` arrays). See docs/user_guide/input.md.
    callbacks : list of skorch callbacks or (name, callback) tuples or None, \
            default=None
        Extra skorch callbacks (copied in ``fit``), run after the built-in
        ones (loss recording, validation score, gradient clipping) and before
        the progress printer and the stopping rule. A callback may stop
        training by raising ``KeyboardInterrupt`` (as skorch's do). Unless
        one of them is a :class:`~sklmn.callbacks.RestoreOnDivergence`,
        ``fit`` adds ``RestoreOnDivergence('best')``: a diverging training
        stops with the best weights measured so far (the starting weights
        included) and a :class:`~sklmn.callbacks.DivergenceWarning`; to make
        ``fit`` fail instead, turn that warning into an error
        (``warnings.simplefilter('error', DivergenceWarning)``). The names of
        the built-in callbacks are taken. The net a callback sees predicts
        the network's raw outputs (logits), so a scoring callback such as
        skorch's ``EpochScoring`` needs a callable scorer, not a scikit-learn
        scorer name such as ``'accuracy'``."""

CLASS_WEIGHT_DOC = """\
    class_weight : dict, 'balanced' or None, default=None
        Weights of the classes in the loss, for multiclass targets (one
        label per sequence, or per time step with ``target='timestep'``):
        ``{label: weight}`` (missing classes weigh 1), ``'balanced'``
        (``n_entries / (n_classes * bincount(y))``, counted over sequences or
        valid time steps, as :func:`sklearn.utils.class_weight.\
compute_class_weight`), or None (all 1). They multiply ``sample_weight``,
        and weight the validation loss and score too. Multilabel targets
        raise ``ValueError`` (weight sequences with ``sample_weight``).
        ``'balanced'`` is not supported by ``partial_fit`` (compute the
        weights on the whole data and pass a dict)."""

CTC_DECODING_DOC = """\
    decoding : {'greedy', 'beam'}, default='greedy'
        With ``target='ctc'``: how ``predict`` turns the per-step
        posteriors into label sequences. ``'greedy'``: best-path decoding
        (the most probable output of every step, repeated labels merged,
        blanks dropped); ``'beam'``: prefix beam search keeping
        ``beam_width`` labelling prefixes (slower, finds more probable
        labellings). Ignored for other targets; not a model parameter (it
        may change between ``fit`` and ``predict``).
    beam_width : int, default=10
        Prefixes kept by ``decoding='beam'``."""

FITTED_ATTRIBUTES_DOC = """\
    n_features_in_ : int
        Number of features per time step.
    n_outputs_ : int
        Number of readout units.
    n_iter_ : int
        Number of epochs run (accumulated over warm starts).
    loss_curve_ : list of float
        Mean training loss (data loss + the module's penalty) of every epoch,
        averaged over the epoch's minibatches while the weights changed (a
        weighted mean with ``sample_weight`` or ``class_weight``: the
        minibatches count by their total weight).
    best_loss_ : float
        Monitored loss of the weights the estimator ends with, measured on
        those weights: the validation loss with early stopping, else the
        training loss recomputed after the epoch, on a fixed subsample above
        128 training sequences (see ``docs/training.md``), or the starting
        weights' loss when no epoch improved on it. With
        ``validation_metric='score'`` the validation loss of the kept epoch.
    best_epoch_ : int
        Epoch whose weights were kept (0: the weights before training, e.g.
        a pretrained model that fine-tuning did not improve; a warm start
        that improved on no epoch keeps the epoch the previous fit kept).
    validation_loss_curve_ : list of float or None
        Validation loss of every epoch when early stopping is on (weighted
        like the training loss).
    validation_scores_ : list of float or None
        Validation score of every epoch when early stopping is on.
    best_validation_score_ : float or None
        Validation score of the kept weights when early stopping is on;
        None also when the weights before this fit were kept
        (``best_epoch_=0``, or a warm start's starting weights) under
        ``validation_metric='loss'``: their score is not measured.
    diverged_ : bool
        Whether the last ``fit`` diverged and recovered: a
        :class:`sklmn.callbacks.RestoreOnDivergence` (the one ``fit`` adds
        by default, or one in ``callbacks``) stopped training and restored
        earlier weights (the callback object passed in is left untouched).
    net_ : skorch.NeuralNet
        The trained skorch net; ``net_.module_`` is the
        :class:`torch.nn.Module` (``.recurrent`` and ``.readout``) and
        ``net_.history`` the per-epoch history."""


#: Fitted attributes of the estimators with a pretrained start (the LMN and
#: multi-scale LMN estimators), ``%(start_attributes)s`` in their docstrings.
START_ATTRIBUTES_DOC = """\
    pretrainer_ : object or None
        The clone of the pretrainer that initialized the model (None without
        pretraining).
    pretrained_alpha_ : float
        The anchor of the last ``fit``'s fine-tuning (``pretrained_alpha``,
        resolved; 0 without a pretrained start).
    pooling_ : {'last', 'last+mean', 'last+mean+max'}
        What the readout of the last ``fit`` reads (``pooling``, resolved;
        ``'last'`` for per-step targets).
    memory_matrix_ : str
        The memory parametrization of the last ``fit`` (``memory_matrix``,
        resolved).
    memory_lr_scale_ : float
        The memory's learning-rate fraction of the last ``fit``
        (``memory_lr_scale``, resolved).
    fine_tuning_ : {'full', 'smooth', 'projection', 'residual'}
        The fine-tuning of the last ``fit`` (``fine_tuning``, resolved;
        ``'full'`` without a pretrained start).
    projection_steps_ : int or None
        The projection steps the last new model kept
        (``fine_tuning_='projection'``; 0: the start), None for the other
        fine-tunings.
    projection_splines_ : bool or None
        Whether the projection of the last new model gave the network a
        spline readout (``fine_tuning_='projection'``), None for the other
        fine-tunings.
    memory_ring_ : list of float or None
        The ring ``[r_min, r_max, max_angle]`` the last ``fit`` drew the
        Schur memory's start on (``memory_ring``, resolved); None for the
        model's own ring."""


def fill_doc(model_parameters_doc: str):
    """Class decorator substituting the shared docs into a class docstring.

    Replaces the lines ``%(model_parameters)s`` (indented by 4 spaces, like
    the docstring) with ``model_parameters_doc`` and ``%(training_parameters)s``
    / ``%(fitted_attributes)s`` / ``%(class_weight)s`` with the docs shared by
    every sequence estimator (classifier), ``%(start_attributes)s`` with
    those of the estimators with a pretrained start, and
    ``%(input_expansion)s`` / ``%(input_expansion_attributes)s`` with those
    of the LMN classifiers' ``input_expansion``.
    """

    def decorate(cls):
        cls.__doc__ = (
            cls.__doc__.replace("    %(model_parameters)s", model_parameters_doc)
            .replace("    %(training_parameters)s", TRAINING_PARAMETERS_DOC)
            .replace("    %(fitted_attributes)s", FITTED_ATTRIBUTES_DOC)
            .replace("    %(start_attributes)s", START_ATTRIBUTES_DOC)
            .replace("    %(class_weight)s", CLASS_WEIGHT_DOC + "\n" + CTC_DECODING_DOC)
            .replace("    %(input_expansion)s\n", INPUT_EXPANSION_DOC)
            .replace(
                "    %(input_expansion_attributes)s\n", INPUT_EXPANSION_ATTRIBUTES_DOC
            )
        )
        return cls

    return decorate
