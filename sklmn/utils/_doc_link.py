"""Links from the HTML representation of sklmn estimators to their API pages.

scikit-learn's HTML representation (shown by Jupyter) links an estimator's
name to its documentation through ``_doc_link_module`` and
``_doc_link_template`` (see :class:`sklearn.base.BaseEstimator`). For sklmn
the pages are those of the documentation site built by ``bash dev.sh docs``
(``api/generated/<module>.<Class>.html``); where they are is read at display
time:

* the environment variable ``SKLMN_DOCS_URL`` (the address the site is
  published at, or a ``file://`` URL of a build), else
* the local build ``docs/_build/html`` of a source checkout, when it exists;
* otherwise there is no link (an empty template: scikit-learn then shows
  none).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__: list[str] = []

_LOCAL_BUILD = Path(__file__).resolve().parents[2] / "docs" / "_build" / "html"
_PAGE = "api/generated/{estimator_module}.{estimator_name}.html"


def docs_base_url() -> str:
    """Base URL of the documentation site, or ``""`` when none is known.

    Examples
    --------
    >>> import os
    >>> from sklmn.utils._doc_link import docs_base_url
    >>> os.environ["SKLMN_DOCS_URL"] = "https://example.org/sklmn/"
    >>> docs_base_url()
    'https://example.org/sklmn'
    >>> del os.environ["SKLMN_DOCS_URL"]
    """
    url = os.environ.get("SKLMN_DOCS_URL", "").strip()
    if url:
        return url.rstrip("/")
    if (_LOCAL_BUILD / "index.html").is_file():
        return _LOCAL_BUILD.as_uri()
    return ""


def _template(self) -> str:
    explicit = getattr(self, "__doc_link_template", None)  # set per instance
    if explicit is not None:
        return explicit
    base = docs_base_url()
    return f"{base}/{_PAGE}" if base else ""


def _set_template(self, value) -> None:
    setattr(self, "__doc_link_template", value)


class _DocLinkMixin:
    """Mixin (left of ``BaseEstimator``) linking the HTML repr to sklmn's docs.

    The page of a class is named after its public module (the module path up
    to the first private part, e.g. ``sklmn.estimators`` for
    ``sklmn.estimators._lmn``) and its name, as the API reference does.

    Examples
    --------
    >>> import os
    >>> from sklmn.preprocessing import SequenceStandardScaler
    >>> os.environ["SKLMN_DOCS_URL"] = "https://example.org/sklmn"
    >>> link = SequenceStandardScaler()._get_doc_link()
    >>> link.removeprefix("https://example.org/sklmn/")
    'api/generated/sklmn.preprocessing.SequenceStandardScaler.html'
    >>> del os.environ["SKLMN_DOCS_URL"]
    """

    _doc_link_module = "sklmn"
    _doc_link_template = property(_template, _set_template)
