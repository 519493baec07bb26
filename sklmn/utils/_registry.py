"""Registry of the classes :func:`sklmn.persistence.load` accepts by name.

Each package of sklmn registers its public estimator classes here when it is
imported (``register_safe_classes(__name__, globals(), __all__)`` at the end
of its ``__init__``), so that :mod:`sklmn.persistence` sits below the
packages whose classes it loads and never imports them itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

_SAFE_CLASSES: dict[str, type] = {}


def register_safe_class(name: str, cls: type) -> None:
    """Accept ``cls`` under the public dotted ``name`` in model files.

    Parameters
    ----------
    name : str
        Fully qualified public name (``'sklmn.laes.LAESTransformer'``).
    cls : type
        The class: a scikit-learn estimator whose constructor and
        ``set_params`` are safe to call with values read from a file.

    Examples
    --------
    >>> from sklmn.laes import LAESTransformer
    >>> from sklmn.utils._registry import registered_safe_classes
    >>> registered_safe_classes()["sklmn.laes.LAESTransformer"] is LAESTransformer
    True
    """
    if not isinstance(name, str) or not isinstance(cls, type):
        raise TypeError(
            f"register_safe_class expects a name and a class, got {name!r} and "
            f"{cls!r}"
        )
    known = _SAFE_CLASSES.get(name)
    if known is not None and known is not cls:
        raise ValueError(f"{name!r} is already registered as {known!r}")
    _SAFE_CLASSES[name] = cls


def register_safe_classes(
    module_name: str, namespace: Mapping, names: Iterable[str]
) -> None:
    """Register the estimator classes among ``names`` of a package.

    Parameters
    ----------
    module_name : str
        The package's public name (``__name__``).
    namespace : mapping
        Its namespace (``globals()``).
    names : iterable of str
        Its public names (``__all__``); those that are not scikit-learn
        estimator classes are skipped.

    Examples
    --------
    >>> from sklmn.utils._registry import registered_safe_classes
    >>> "sklmn.estimators.LMNClassifier" in registered_safe_classes()
    True
    """
    for name in names:
        obj = namespace.get(name)
        # scikit-learn estimators: classes with get_params and set_params
        if isinstance(obj, type) and callable(getattr(obj, "_get_param_names", None)):
            register_safe_class(f"{module_name}.{name}", obj)


def registered_safe_classes() -> dict[str, type]:
    """Copy of the registry: public name -> class.

    Examples
    --------
    >>> from sklmn.utils._registry import registered_safe_classes
    >>> "sklmn.preprocessing.SequenceStandardScaler" in registered_safe_classes()
    True
    """
    return dict(_SAFE_CLASSES)
