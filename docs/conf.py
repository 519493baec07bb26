"""Sphinx configuration of the sklmn documentation site.

Build it with ``bash dev.sh docs`` (offline, warnings as errors); the HTML
lands in ``docs/_build/html``. The API reference (``api/index.rst`` and one
page per group of modules, ``API_GROUPS``) is generated here from the
``__all__`` of every public module, so that a new
public name is documented without editing this file; the gallery runs the
scripts of ``examples/`` in their quick mode.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import sys
import warnings
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
BUILD = DOCS / "_build"
sys.path.insert(0, str(ROOT))

# -- the examples run in their quick mode, writing their PNGs under _build ----
os.environ["SKLMN_EXAMPLE_QUICK"] = "1"
os.environ.setdefault("SKLMN_OUTPUT_DIR", str(BUILD / "example_output"))
Path(os.environ["SKLMN_OUTPUT_DIR"]).mkdir(parents=True, exist_ok=True)
os.environ.setdefault("MPLBACKEND", "Agg")
# short trainings in the examples stop at max_iter on purpose
warnings.filterwarnings("ignore", category=UserWarning, module="matplotlib")

import sklmn  # noqa: E402

project = "sklmn"
author = "sklmn developers"
copyright = "sklmn developers"
release = sklmn.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "**.ipynb_checkpoints", "auto_examples/*.md5"]
# Offline: no intersphinx (references to scikit-learn, numpy and torch
# objects render as plain code)
nitpicky = False

# -- autodoc / autosummary / numpydoc ---------------------------------------
autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": True}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
# parameter types are parsed (so that ``n_features_in_`` in a shape is text,
# not a reference); no word of them is linked
numpydoc_xref_param_type = True
numpydoc_xref_ignore = "all"
# numpydoc's default aliases link a few words (array-like, bool, ...) to the
# glossaries of Python and NumPy, which are not here offline: plain text
from numpydoc.xref import DEFAULT_LINKS  # noqa: E402

numpydoc_xref_aliases = {k: k for k, v in DEFAULT_LINKS.items() if v.startswith(":")}

# -- MyST (the Markdown pages: user guide, design notes, changelog) ------------
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

# -- sphinx-gallery -----------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "doc_module": ("sklmn",),
    "backreferences_dir": "api/generated/backreferences",
    "reference_url": {"sklmn": None},
    "remove_config_comments": True,
    "download_all_examples": False,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "abort_on_example_error": True,
    "min_reported_time": 1,
    "show_memory": False,
    "plot_gallery": "True",
}

# -- HTML ---------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"sklmn {release}"
html_static_path: list[str] = []
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {
    "changelog": [],
    "references": [],
    "getting_started": [],
    "results": [],
}
html_show_sourcelink = False
html_copy_source = False

# -- the API reference, generated from __all__ --------------------------------
#: (page, title, summary, [(module, title), ...]) in the order of the API
#: index: one page per group, one section per module, so that the sidebar
#: shows the groups and, under each, the module's classes and functions
API_GROUPS = [
    ("estimators", "Estimators",
     "The scikit-learn estimators: classifiers and regressors over "
     "sequences, the language model over one stream, and the rows a fitted "
     "network's readout reads, as a transformer.",
     [("sklmn.estimators", "Estimators")]),
    ("transformers", "Transformers",
     "The linear autoencoder for sequences, standardization and the flat "
     "layout for 2-D-only tools.",
     [("sklmn.laes", "Linear autoencoder for sequences (LAES)"),
      ("sklmn.preprocessing", "Preprocessing and the flat layout")]),
    ("pretraining", "Pretraining",
     "The papers' memory training as objects passed to the estimators, the "
     "callbacks of a training run and the plug-in protocol.",
     [("sklmn.pretraining", "Pretraining and incremental training"),
      ("sklmn.callbacks", "Training callbacks"),
      ("sklmn.training", "The plug-in protocol")]),
    ("nn", "PyTorch modules",
     "The recurrent networks behind the estimators, usable on their own.",
     [("sklmn.nn", "PyTorch modules"),
      ("sklmn.nn.parametrizations", "Weight parametrizations")]),
    ("datasets", "Datasets",
     "Offline loaders and generators of sequence data.",
     [("sklmn.datasets", "Datasets")]),
    ("metrics", "Metrics",
     "The papers' metrics and scorers for per-step and transcription targets.",
     [("sklmn.metrics", "Metrics and scorers")]),
    ("persistence", "Persistence",
     "Saving and loading fitted models without pickle.",
     [("sklmn.persistence", "Saving and loading")]),
    ("utils", "Utilities",
     "The sequence input contract and the estimator checks.",
     [("sklmn.utils.sequences", "The sequence input contract"),
      ("sklmn.utils.estimator_checks", "Estimator checks")]),
    ("benchmarks", "Experiments",
     "The runner of the papers' experiments and of the time-series suite.",
     [("sklmn.benchmarks", "Experiments")]),
]
#: every documented module, in the order of the API pages
API_MODULES = [mod for *_, modules in API_GROUPS for mod in modules]


def _documentable(module, name):
    """Classes and functions of ``__all__`` (module constants are skipped)."""
    obj = getattr(module, name)
    return inspect.isclass(obj) or inspect.isfunction(obj) or callable(obj)


def _write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:  # keep mtime: no rebuild
        path.write_text(text)


def _module_section(modname: str, title: str) -> list[str]:
    """The reST of one module: its docstring and its names, by kind."""
    try:
        module = importlib.import_module(modname)
    except ImportError:  # an optional module that is not there
        return []
    names = [n for n in getattr(module, "__all__", []) if _documentable(module, n)]
    if not names:
        return []
    classes = [n for n in names if inspect.isclass(getattr(module, n))]
    functions = [n for n in names if n not in classes]
    heading = f"``{modname}``: {title}"
    lines = [
        f".. _api-{modname}:",
        "",
        heading,
        "-" * len(heading),
        "",
        f".. automodule:: {modname}",
        "   :no-members:",
        "   :no-inherited-members:",
        "",
    ]
    for kind, group, template in (
        ("Classes", classes, "class"),
        ("Functions", functions, "function"),
    ):
        if not group:
            continue
        lines += [
            f".. rubric:: {kind}",
            "",
            f".. currentmodule:: {modname}",
            "",
            ".. autosummary::",
            "   :toctree: generated/",
            f"   :template: {template}",
            "   :nosignatures:",
            "",
            *[f"   {name}" for name in sorted(group)],
            "",
        ]
    return lines


def write_api_index() -> None:
    api = DOCS / "api"
    api.mkdir(exist_ok=True)
    index = [
        ".. This file is generated by docs/conf.py from API_GROUPS.",
        "",
        ".. _api:",
        "",
        "=============",
        "API reference",
        "=============",
        "",
        "Every public class and function, grouped by what it is for and, within",
        "a group, by module. The estimators, ``LAESTransformer``, the",
        "pretrainers and ``SequenceStandardScaler`` are also importable from",
        "the top-level ``sklmn`` package.",
        "",
        ".. list-table::",
        "   :widths: 25 75",
        "",
    ]
    pages = []
    for page, title, summary, modules in API_GROUPS:
        body = []
        for modname, modtitle in modules:
            body += _module_section(modname, modtitle)
        if not body:
            continue
        pages.append(page)
        index += [f"   * - :doc:`{title} <{page}>`", f"     - {summary}"]
        _write_if_changed(
            api / f"{page}.rst",
            "\n".join(
                [
                    ".. This file is generated by docs/conf.py from API_GROUPS.",
                    "",
                    "=" * len(title),
                    title,
                    "=" * len(title),
                    "",
                    summary,
                    "",
                    *body,
                ]
            ),
        )
    index += ["", ".. toctree::", "   :hidden:", "   :maxdepth: 2", ""]
    index += [f"   {page}" for page in pages] + [""]
    _write_if_changed(api / "index.rst", "\n".join(index))


write_api_index()


# -- the design notes: every note of docs/ that is not a page of its own -------
#: notes shown first, in this order; any other top-level Markdown file of
#: docs/ follows alphabetically
NOTES_FIRST = ["design", "training", "architecture"]
NOT_NOTES = {
    "index",
    "changelog",
    "references",
    "design_notes",
    "getting_started",
    "results",
}


def write_design_notes() -> None:
    found = sorted(p.stem for p in DOCS.glob("*.md") if p.stem not in NOT_NOTES)
    notes = [n for n in NOTES_FIRST if n in found]
    notes += [n for n in found if n not in notes]
    text = "\n".join(
        [
            ".. This file is generated by docs/conf.py from the notes in docs/.",
            "",
            "============",
            "Design notes",
            "============",
            "",
            "How sklmn is built and why: the conventions the papers leave open,",
            "the training machinery and its measured defaults, and the layout",
            "of the code. These notes live in the repository's ``docs/``",
            "folder and are read on GitHub as well.",
            "",
            ".. toctree::",
            "   :maxdepth: 2",
            "",
            *[f"   {n}" for n in notes],
            "",
        ]
    )
    path = DOCS / "design_notes.rst"
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


write_design_notes()


# -- members documented: those sklmn defines ----------------------------------
def _defined_in_sklmn(obj) -> bool:
    for candidate in (obj, getattr(obj, "fget", None), getattr(obj, "__func__", None)):
        module = getattr(candidate, "__module__", None) or ""
        if module.split(".")[0] == "sklmn":
            return True
    return False


def skip_foreign_members(app, what, name, obj, skip, options):
    """Document the members a class inherits only from sklmn classes.

    Members inherited from scikit-learn (``get_params``, ``set_output``,
    ``set_fit_request``, ...) and PyTorch (``nn.Module``'s API) are left to
    those projects' documentation: their docstrings refer to labels of those
    sites, which this offline build does not have.
    """
    if skip or what != "class":
        return skip
    return None if _defined_in_sklmn(obj) else True


# -- fitted-attribute names in docstrings --------------------------------------
# In reStructuredText a word ending with "_" (``n_features_in_`` written
# without backquotes) is a link to a target of that name. Docstrings name
# fitted attributes that way, e.g. "ndarray of shape (n_components_,)": such
# words are escaped before numpydoc and docutils read them, outside inline
# literals and doctests, and never in the name part of a "name : type" line.
_LITERAL = re.compile(r"(``.*?``|`[^`]*`)")
_TRAILING_UNDERSCORE = re.compile(
    r"(?<![\w`\\])([A-Za-z](?:\w*[A-Za-z0-9])?)_(?![\w`])"
)
_NAME_TYPE = re.compile(r"^(\s*\**[\w, ]+ : )(.*)$")


def _escape_words(text: str) -> str:
    parts = _LITERAL.split(text)
    parts[::2] = [_TRAILING_UNDERSCORE.sub(r"\1\\_", p) for p in parts[::2]]
    return "".join(parts)


def escape_attribute_names(app, what, name, obj, options, lines):
    in_doctest = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(">>>"):
            in_doctest = True
        elif not stripped:
            in_doctest = False
        if in_doctest:
            continue
        match = _NAME_TYPE.match(line)
        if match:
            lines[i] = match.group(1) + _escape_words(match.group(2))
        else:
            lines[i] = _escape_words(line)


def setup(app):
    app.connect("autodoc-skip-member", skip_foreign_members)
    # before numpydoc (priority 500) turns the sections into reST
    app.connect("autodoc-process-docstring", escape_attribute_names, priority=100)
