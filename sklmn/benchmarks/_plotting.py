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
