"""The papers' experiments, listed in the order they run and are reported."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ._exp_adding import adding_problem
from ._exp_char_ptb import char_ptb
from ._exp_chorales import chorales
from ._exp_copy import copy_task
from ._exp_digits import permuted_digits, sequential_digits
from ._exp_enrnn import enrnn_adding, enrnn_copy, enrnn_split
from ._exp_generation import generation_sweep, sequence_generation
from ._exp_handwriting import handwriting
from ._exp_laes import laes_reconstruction
from ._exp_linear_rnn import (
    laes_init_quality,
    linear_rnn,
    lmn_parameters,
    rnn_laes_digits,
)
from ._exp_music_claims import (
    laes_memory_size,
    laes_unrolled,
    music_lmn_hidden,
    music_pret_rnn,
    music_sets,
)
from ._exp_spectra import timit_spectra
from ._exp_timit_framewise import timit_framewise
from ._exp_words import common_suffix_words
from ._runner import ExperimentFn, ExperimentResult, run_experiments

__all__ = [
    "COSTS",
    "DEFAULT_SEEDS",
    "EXPERIMENTS",
    "FULL_ONLY",
    "SEEDS_PER_EXPERIMENT",
    "default_seeds",
    "run_benchmarks",
]

#: Seeds the command line runs per preset: the quick preset shows one result
#: per claim, the full preset the mean and spread over three seeds (five for
#: the experiments of :data:`SEEDS_PER_EXPERIMENT`).
DEFAULT_SEEDS = {"quick": 1, "full": 3}

#: preset -> name -> number of seeds of the experiments that run more than
#: :data:`DEFAULT_SEEDS` of their preset: in the full preset, five for every
#: experiment whose run of one seed takes under a minute of CPU in the
#: recorded runs (the reports' "Time per experiment"), three for the others.
SEEDS_PER_EXPERIMENT: dict[str, dict[str, int]] = {
    "quick": {},
    "full": {
        "laes-reconstruction": 5,
        "sequential-digits": 5,
        "music-lmn-hidden": 5,
        "music-pret-rnn": 5,
        "laes-unrolled": 5,
        "permuted-digits": 5,
        "char-ptb": 5,
        "rnn-laes-digits": 5,
        "laes-init-quality": 5,
        "lmn-parameters": 5,
    },
}


#: name (``--only NAME``) -> (function, one-line description shown by
#: ``--list``), in the order ``run_benchmarks`` runs them.
EXPERIMENTS: dict[str, tuple[ExperimentFn, str]] = {
    "laes-reconstruction": (
        laes_reconstruction,
        "LAES on digits read as sequences: SVD vs autoencoder error per memory "
        "size (Carta et al. 2021 Fig. 8a)",
    ),
    "copy-task": (
        copy_task,
        "copy S=10 symbols after T blanks: LMN vs LSTM vs tanh RNN "
        "(Carta et al. 2020b Table 1)",
    ),
    "adding-problem": (
        adding_problem,
        "adding problem: ENRNN and LSTM test MSE vs the 0.167 baseline "
        "(Helfrich & Ye 2020 §5.1)",
    ),
    "sequential-digits": (
        sequential_digits,
        "digits read one pixel per step: LAES-initialized LMN vs orthogonally "
        "initialized LMN vs Elman RNN (Carta et al. 2020b Table 2)",
    ),
    "sequence-generation": (
        sequence_generation,
        "generate a 300-sample recording from zero input: MS-LMN vs Clockwork "
        "RNN vs LSTM vs LMN vs RNN (Carta et al. 2021 Table 4)",
    ),
    "generation-sweep": (
        generation_sweep,
        "sequence generation at the sizes of Table 5 (100 .. 1000 parameters) "
        "for every model, reduced epochs (Carta et al. 2021 Tables 4-5)",
    ),
    "chorales": (
        chorales,
        "Bach chorales piano-roll next-step prediction: pretrained LMN vs LMN "
        "vs LSTM vs RNN (Carta et al. 2021 Table 3)",
    ),
    "common-suffix-words": (
        common_suffix_words,
        "spoken words sharing suffixes: incremental MS-LMN vs MS-LMN vs "
        "Clockwork RNN vs LMN (Carta et al. 2021 Table 6)",
    ),
    "enrnn-adding": (
        enrnn_adding,
        "adding problem T = 750: ENRNN with the coupling converges before the "
        "LSTM; gradient maps and eigenvalues (Helfrich & Ye 2020 Figs. 1, 4-5)",
    ),
    "enrnn-copy": (
        enrnn_copy,
        "copy task T = 2000: ENRNN with the coupling vs LSTM against the "
        "baseline (Helfrich & Ye 2020 Fig. 2)",
    ),
    "enrnn-split": (
        enrnn_split,
        "adding problem with n = 160 units split between the ENRNN's long- "
        "and short-term states, T = 200 (Helfrich & Ye 2020 Fig. 6)",
    ),
    "timit-spectra": (
        timit_spectra,
        "TIMIT log-magnitude spectra, next frame: ENRNN vs LSTM, MSE and "
        "SegSNR; needs --data-dir with timit/ (Helfrich & Ye 2020 Table 1)",
    ),
    "handwriting": (
        handwriting,
        "online handwriting transcribed with CTC: bidirectional LSTM vs "
        "Clockwork RNN vs MS-LMN vs incremental MS-LMN (Carta et al. 2020a "
        "Table 4)",
    ),
    "music-lmn-hidden": (
        music_lmn_hidden,
        "chorales: LMN with hidden output (LMN-h, random and pretrained) vs "
        "LMN-m; RNN-RBM reference row (Carta et al. 2021 Table 3)",
    ),
    "music-pret-rnn": (
        music_pret_rnn,
        "chorales: LAES-pretrained Elman RNN (pret-RNN) vs the unrolled-"
        "pretrained LMN, gains over their random starts (Carta et al. 2021 "
        "Table 3)",
    ),
    "music-sets": (
        music_sets,
        "MuseData, Nottingham, Piano-midi.de with the Table 3 models (needs "
        "the real data: --data-dir DIR/music/) (Carta et al. 2021 Table 3)",
    ),
    "laes-memory-size": (
        laes_memory_size,
        "chorales: validation accuracy against the number of units, LMN vs "
        "pretrained LMN vs LSTM vs RNN (Bacciu et al. 2019 Fig. 3)",
    ),
    "laes-unrolled": (
        laes_unrolled,
        "LAES reconstruction error through time of an unrolled RNN's hidden "
        "states, by memory size (Carta et al. 2021 Fig. 8c)",
    ),
    "permuted-digits": (
        permuted_digits,
        "digits read one pixel per step in a fixed random order: LAES LMN vs "
        "orthogonal LMN vs Elman RNN (Carta et al. 2020b Table 2, permuted)",
    ),
    "timit-framewise": (
        timit_framewise,
        "TIMIT framewise phones: orthogonal LMN vs LAES LMN (needs the real "
        "data: --data-dir DIR/timit/) (Carta et al. 2020b Table 3)",
    ),
    "char-ptb": (
        char_ptb,
        "character-level language modelling, truncated BPTT with the state "
        "carried: ENRNN vs an LSTM of about equal parameters, on PTB with "
        "--data-dir DIR/ptb/, else an English stand-in (Helfrich & Ye 2020 "
        "Table 2)",
    ),
    "linear-rnn": (
        linear_rnn,
        "copy task T = 100, 500: the linear orthogonal RNN (Carta et al. "
        "2020b Table 1)",
    ),
    "rnn-laes-digits": (
        rnn_laes_digits,
        "sequential and permuted digits: LAES-initialized vs orthogonally "
        "initialized Elman RNN, and the linear RNN (Carta et al. 2020b Table 2)",
    ),
    "laes-init-quality": (
        laes_init_quality,
        "digits: accuracy right after the LAES initialization of the linear "
        "RNN, the Elman RNN and the LMN (Carta et al. 2020b Table 4)",
    ),
    "lmn-parameters": (
        lmn_parameters,
        "parameter counts of the LMN (m = f = h/2), LSTM and GRU estimators "
        "(Bacciu et al. 2019 §4.2; no training)",
    ),
}

#: Experiments of the full preset only: the quick preset leaves them out
#: (naming one with ``--only`` under the quick preset is an error).
FULL_ONLY = frozenset(
    {
        "enrnn-adding",
        "enrnn-copy",
        "enrnn-split",
        "generation-sweep",
        "timit-spectra",
        "music-lmn-hidden",
        "music-pret-rnn",
        "music-sets",
        "laes-memory-size",
        "laes-unrolled",
        "permuted-digits",
        "timit-framewise",
        "char-ptb",
        "linear-rnn",
        "rnn-laes-digits",
        "laes-init-quality",
    }
)


#: preset -> name -> (fits, CPU seconds) of one seed of each experiment: the
#: fits it makes and the CPU time of a recorded run (the report's "Time per
#: experiment" table; the full preset's are rough). They only weigh the
#: progress bars and their remaining-time estimate: a wrong figure makes the
#: estimate wrong, nothing else.
COSTS: dict[str, dict[str, tuple[int, float]]] = {
    "quick": {
        "laes-reconstruction": (0, 1.0),
        "copy-task": (3, 22.0),
        "adding-problem": (2, 15.0),
        "sequential-digits": (3, 8.0),
        "sequence-generation": (5, 55.0),
        "chorales": (4, 40.0),
        "common-suffix-words": (5, 26.0),
        "handwriting": (4, 9.0),
        "lmn-parameters": (12, 2.0),
    },
    "full": {
        "laes-reconstruction": (0, 10.0),
        "copy-task": (6, 1500.0),
        "adding-problem": (2, 150.0),
        "sequential-digits": (3, 60.0),
        "sequence-generation": (10, 1500.0),
        "chorales": (7, 250.0),
        "common-suffix-words": (5, 200.0),
        "handwriting": (4, 600.0),
        "enrnn-adding": (3, 360.0),
        "enrnn-copy": (2, 480.0),
        "enrnn-split": (7, 300.0),
        "generation-sweep": (20, 600.0),
        "timit-spectra": (2, 1800.0),
        "music-lmn-hidden": (3, 300.0),
        "music-pret-rnn": (4, 350.0),
        "music-sets": (0, 1.0),
        "laes-memory-size": (12, 500.0),
        "laes-unrolled": (1, 120.0),
        "permuted-digits": (3, 120.0),
        "timit-framewise": (0, 1.0),
        "char-ptb": (2, 35.0),
        "linear-rnn": (2, 150.0),
        "rnn-laes-digits": (6, 120.0),
        "laes-init-quality": (12, 15.0),
        "lmn-parameters": (12, 2.0),
    },
}


def default_seeds(preset: str) -> dict[str, list[int]]:
    """The seeds each experiment runs by default in a preset.

    Parameters
    ----------
    preset : {'quick', 'full'}

    Returns
    -------
    seeds : dict
        name -> seeds ``0 .. n-1``, ``n`` from :data:`SEEDS_PER_EXPERIMENT`
        or else :data:`DEFAULT_SEEDS` (what ``python -m sklmn.benchmarks``
        runs without ``--seeds`` or ``--seed-list``).

    Examples
    --------
    >>> from sklmn.benchmarks._experiments import default_seeds
    >>> seeds = default_seeds("full")
    >>> seeds["copy-task"], seeds["sequential-digits"]
    ([0, 1, 2], [0, 1, 2, 3, 4])
    >>> default_seeds("quick")["copy-task"]
    [0]
    >>> default_seeds("slow")
    Traceback (most recent call last):
    ...
    ValueError: preset must be one of ['full', 'quick'], got 'slow'.
    """
    if preset not in DEFAULT_SEEDS:
        raise ValueError(
            f"preset must be one of {sorted(DEFAULT_SEEDS)}, got {preset!r}."
        )
    counts = SEEDS_PER_EXPERIMENT.get(preset, {})
    return {
        name: list(range(counts.get(name, DEFAULT_SEEDS[preset])))
        for name in EXPERIMENTS
    }


def run_benchmarks(
    preset: str = "quick",
    *,
    only: list[str] | None = None,
    output_dir: str | Path = "benchmark_results",
    log: Callable[[str], None] = print,
    seeds=None,
    n_jobs: int = 1,
    progress: bool = False,
    data_dir: str | Path | None = None,
) -> list[ExperimentResult]:
    """Run the experiments of :data:`EXPERIMENTS` and write ``results.md`` and plots.

    Parameters
    ----------
    preset : {'quick', 'full'}, default='quick'
        Problem sizes and training budgets: ``quick`` runs in a few minutes
        on two CPU cores and keeps one result per claim (no controlled
        runs), ``full`` reproduces the recorded results.
    only : list of str, default=None
        Names of the experiments to run (all when None).
    output_dir : str or Path, default='benchmark_results'
        Folder for ``results.md`` and the PNG plots.
    log : callable, default=print
        Progress sink.
    seeds : sequence of int, mapping or None, default=None
        Every experiment runs once per seed (the models' initialization and
        batch order); rows report the mean ± the spread, claims hold when
        they hold on every seed (see
        :func:`sklmn.benchmarks._runner.merge_seeds`). A sequence gives
        every experiment the same seeds, a mapping name -> seeds each its
        own; None: the preset's seeds of each experiment
        (:func:`default_seeds`).
    n_jobs : int, default=1
        Runs in parallel worker processes (``python -m sklmn.benchmarks``
        uses 2).
    progress : bool, default=False
        Progress bars on stderr: overall, with the estimated remaining time
        (weighted by :data:`COSTS`), and one per running experiment
        (``python -m sklmn.benchmarks`` shows them).
    data_dir : str, Path or None, default=None
        Folder holding the papers' own data sets (``DIR/music/JSB
        Chorales.pickle``, ``DIR/mnist/``, ``DIR/timit/``,
        ``DIR/iam-ondb/``; see :mod:`sklmn.benchmarks._real_data`): the
        experiments use the data found there and their stand-ins otherwise,
        and the report says which, per experiment.

    Returns
    -------
    results : list of ExperimentResult
        One per experiment, merged over the seeds.

    Examples
    --------
    >>> from sklmn.benchmarks import run_benchmarks
    >>> run_benchmarks("quick", only=["nope"])
    Traceback (most recent call last):
    ...
    ValueError: unknown experiment(s) ['nope']; known: ...
    >>> run_benchmarks("quick", only=["enrnn-copy"])
    Traceback (most recent call last):
    ...
    ValueError: experiment(s) ['enrnn-copy'] run in the full preset only ...
    """
    experiments = EXPERIMENTS
    if preset != "full":
        full_only = sorted(set(only or ()) & FULL_ONLY)
        if full_only:
            raise ValueError(
                f"experiment(s) {full_only} run in the full preset only "
                "(--preset full)."
            )
        experiments = {k: v for k, v in EXPERIMENTS.items() if k not in FULL_ONLY}
    if seeds is None:
        seeds = default_seeds(preset)
    return run_experiments(
        experiments,
        preset,
        only=only,
        output_dir=output_dir,
        log=log,
        seeds=seeds,
        n_jobs=n_jobs,
        progress=progress,
        costs=COSTS.get(preset),
        data_dir=data_dir,
        full_only=FULL_ONLY,
    )
