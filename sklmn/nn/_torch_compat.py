"""The one place where :mod:`sklmn.nn` relies on private PyTorch API.

:func:`torch.nn.utils.parametrize.register_parametrization` swaps a module's
class for a generated subclass whose ``__getstate__`` refuses to pickle, and
puts one property per parametrized tensor on that subclass.
:class:`~sklmn.nn.parametrizations.PicklableParametrizationsMixin` pickles such
a module as its original class and, on load, re-creates the generated subclass
and its properties. torch offers no public API for either step, so both go
through the two functions below, which rely on

- the generated class having the original class as its first base
  (``type(module).__bases__[0]``), and
- ``parametrize._inject_new_class`` and ``parametrize._inject_property``, the
  private helpers that ``register_parametrization`` itself calls.

A torch release that changes them breaks the pickling of every parametrized
model (``LMN`` with ``memory_matrix='orthogonal'`` or ``'spectral'``,
``ENRNN``); the tests pickle such models, so the break shows there.
"""

from __future__ import annotations

from torch import nn
from torch.nn.utils import parametrize

__all__ = ["original_class", "restore_parametrized_class"]


def original_class(module: nn.Module) -> type:
    """The class of ``module`` before any parametrization was registered on it."""
    cls = type(module)
    if parametrize.is_parametrized(module):
        cls = cls.__bases__[0]  # the class before register_parametrization
    return cls


def restore_parametrized_class(module: nn.Module) -> None:
    """Re-create the generated class and properties of an unpickled module.

    ``module`` has its original class and its ``ParametrizationList``s
    (originals, buffers such as a latch) already in place, as
    ``register_parametrization`` left them; nothing is recomputed (no
    ``right_inverse`` is re-run).
    """
    parametrizations = module._modules.get("parametrizations")
    if parametrizations is not None:
        # one property per parametrized tensor, as register_parametrization does
        parametrize._inject_new_class(module)
        for name in parametrizations:
            parametrize._inject_property(module, name)
