"""Safe saving and loading of fitted sklmn estimators.

``pickle``/``joblib`` round trips of sklmn estimators work, but unpickling a
file executes whatever code the file names: never unpickle a model from an
untrusted source. :func:`save` and :func:`load` use a format that loads
without executing code from the file:

* a zip archive holding ``manifest.json`` (format version, sklmn version and
  one JSON node per estimator: fully qualified class name, ``get_params()``
  and fitted attributes), numpy arrays as ``.npy`` files (read with
  ``allow_pickle=False``) and the torch weights of each trained network as a
  ``state_dict`` (read with ``torch.load(weights_only=True,
  map_location='cpu')``);
* on load, every class named in the manifest must be in an allow-list: the
  public estimators of :mod:`sklmn` (:data:`SAFE_CLASSES`, registered by
  their packages in :mod:`sklmn.utils._registry` when imported; this module
  imports none of them) plus the fully qualified names passed explicitly in
  ``trusted=``. Any other name raises :class:`UntrustedTypeError` before
  anything is imported;
* a sequence estimator describes and rebuilds its network through one hook
  pair (``_sklmn_state_()`` / ``_sklmn_restore_(state)``, see
  ``sklmn/estimators/_persist.py``): the torch module is rebuilt from the
  saved parameters it was fitted with (validated like the others) and the
  saved weights are loaded into it, so no module code is read from the
  file;
* nothing is allocated before the sizes are checked: the manifest's size,
  and the nesting and number of its JSON values, before it is parsed; the
  uncompressed size of every member (``max_bytes`` of :func:`load` in all);
  every ``.npy`` header (dtype, itemsize, shape: the shape the model's
  integers fix, when they fix one) before the member is inflated; the sizes
  a network is rebuilt from against the saved weights. Only the fitted
  attributes a class lists (with their types) can be set, parameters and
  fitted values must be finite (scales positive) except the losses and
  scores that are NaN by design (tagged ``nonfinite`` by :func:`save`), and
  every failure raises :class:`ModelFileError`.

Only parameters and attributes made of JSON values (None, bool, int, float,
str), lists, tuples, dicts (keys: strings, numbers, bools or None, e.g.
``class_weight={0: 2.0}``), numpy arrays of numbers, bools
or strings, numpy scalars, :class:`torch.device` and nested scikit-learn
estimators can be saved; anything else (callables, skorch callbacks, open
files) raises a :class:`TypeError` that names it.
"""

from ._format import (
    FORMAT_VERSION,
    MAX_BYTES,
    SAFE_CLASSES,
    ModelFileError,
    UntrustedTypeError,
)
from ._read import load
from ._write import save

# the public names are documented, pickled and shown in tracebacks as
# sklmn.persistence.<name>, the module they were defined in before it was
# split into a package
for _obj in (ModelFileError, UntrustedTypeError, load, save):
    _obj.__module__ = __name__
del _obj

__all__ = [
    "FORMAT_VERSION",
    "MAX_BYTES",
    "SAFE_CLASSES",
    "ModelFileError",
    "UntrustedTypeError",
    "load",
    "save",
]
