"""Imports every experiment module so that they register themselves."""

# isort: skip_file

from . import _exp_laes  # noqa: F401
from . import _exp_copy  # noqa: F401
from . import _exp_adding  # noqa: F401
from . import _exp_digits  # noqa: F401
from . import _exp_generation  # noqa: F401
from . import _exp_chorales  # noqa: F401
from . import _exp_words  # noqa: F401
from . import _exp_handwriting  # noqa: F401
