"""matplotlib access for the experiment runner (optional dependency)."""

from __future__ import annotations


def pyplot():
    """Return ``matplotlib.pyplot`` with the Agg backend, or None if missing.

    Returns
    -------
    plt : module or None

    Examples
    --------
    >>> from sklmn.benchmarks._plotting import pyplot
    >>> plt = pyplot()
    >>> plt is None or hasattr(plt, "subplots")
    True
    """
    try:
        import matplotlib
    except ImportError:  # plots are optional: the tables are still written
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_curves(
    path,
    curves: dict,
    *,
    xlabel: str = "epoch",
    ylabel: str,
    title: str,
    x=None,
    hline: tuple[float, str] | None = None,
    style: str = "-",
):
    """Plot one curve per model into a PNG; the experiments' common figure.

    Parameters
    ----------
    path : str or Path
        Where the PNG goes.
    curves : dict of str to sequence of float
        Label -> values; plotted against ``x`` (``1..len(values)`` when None).
    xlabel, ylabel, title : str
        Axis labels and title.
    x : sequence of float, default=None
        Shared x values of all curves.
    hline : (float, str), default=None
        A horizontal reference line and its label (e.g. a baseline).
    style : str, default='-'
        matplotlib format string of the curves.

    Returns
    -------
    path : Path or None
        ``path`` when the figure was written, None without matplotlib.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from sklmn.benchmarks._plotting import plot_curves
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = plot_curves(pathlib.Path(d) / "c.png", {"a": [3, 2, 1]},
    ...                       ylabel="loss", title="demo")
    ...     out is None or out.exists()
    True
    """
    from pathlib import Path

    plt = pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    for label, curve in curves.items():
        xs = range(1, len(curve) + 1) if x is None else x
        ax.plot(xs, curve, style, ms=3, label=label)
    if hline is not None:
        ax.axhline(hline[0], color="0.5", ls="--", label=hline[1])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
