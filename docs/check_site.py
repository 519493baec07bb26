"""Check the built documentation site: internal links, rendering, doc links.

Run by ``bash dev.sh docs`` after the Sphinx build::

    python docs/check_site.py [docs/_build/html]

1. Every internal ``href``/``src`` of every page (links, images, scripts,
   stylesheets) must point at a file of the build, and every ``#fragment``
   at an element of the target page with that id.
2. The link of every estimator's HTML representation (``_get_doc_link``,
   with ``SKLMN_DOCS_URL`` pointing at the build) must name an existing page.
3. Headless Chromium opens the index, an API page and a gallery page, saves
   a screenshot of each under ``docs/_build/screenshots/`` and checks that the
   page rendered: its DOM after scripts ran holds the page's title, and the
   screenshot is not blank. Without a Chromium binary (``chromium``,
   ``chromium-browser``, ``google-chrome``, or ``$CHROMIUM``) this step is
   skipped with a message; ``--require-browser`` makes that an error.

Exits with status 1 listing every problem found.
"""

from __future__ import annotations

import argparse
import inspect
import os
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

DOCS = Path(__file__).resolve().parent

#: pages opened in the browser: (name, path in the build, text the DOM must hold)
BROWSER_PAGES = [
    ("index", "index.html", "Linear Memory Networks"),
    ("getting-started", "getting_started.html", "Installation"),
    ("api-index", "api/index.html", "API reference"),
    ("api", "api/generated/sklmn.estimators.LMNClassifier.html", "LMNClassifier"),
    ("gallery", "auto_examples/index.html", "Examples"),
]


class _PageParser(HTMLParser):
    """Collects the ids of a page and its link targets."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[tuple[str, str]] = []  # (attribute, value)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name") if tag == "a" else ("id",):
            if attrs.get(key):
                self.ids.add(attrs[key])
        for key in ("href", "src"):
            value = attrs.get(key)
            if value is not None and "preconnect" not in (attrs.get("rel") or ""):
                self.links.append((key, value))


def _is_internal(url: str) -> bool:
    parts = urlsplit(url)
    return not (parts.scheme or parts.netloc or url.startswith("//"))


def check_links(root: Path) -> tuple[int, int, list[str]]:
    # the theme's template fragments under _static are not pages
    pages = sorted(
        p for p in root.rglob("*.html") if "_static" not in p.relative_to(root).parts
    )
    parsed: dict[Path, _PageParser] = {}

    def parse(path: Path) -> _PageParser:
        if path not in parsed:
            parser = _PageParser()
            parser.feed(path.read_text(encoding="utf-8", errors="replace"))
            parsed[path] = parser
        return parsed[path]

    problems, n_links = [], 0
    for page in pages:
        for _, url in parse(page).links:
            if not url or not _is_internal(url):
                continue
            n_links += 1
            parts = urlsplit(url)
            target = page if not parts.path else (page.parent / unquote(parts.path))
            target = target.resolve()
            if target.is_dir():
                target = target / "index.html"
            where = page.relative_to(root)
            if not target.exists():
                problems.append(f"{where}: broken link {url!r}")
                continue
            if root.resolve() not in target.parents and target != root.resolve():
                problems.append(f"{where}: link {url!r} leaves the site")
                continue
            fragment = unquote(parts.fragment)
            html = target.suffix == ".html"
            if fragment and html and fragment not in parse(target).ids:
                problems.append(f"{where}: no element #{fragment} in {url!r}")
    return len(pages), n_links, problems


def check_doc_links(root: Path) -> tuple[int, list[str]]:
    """Every public estimator's HTML-repr link names a page of the build."""
    sys.path.insert(0, str(DOCS.parent))
    os.environ["SKLMN_DOCS_URL"] = root.resolve().as_uri()
    import importlib

    from sklearn.base import BaseEstimator

    classes = {}
    for modname in ("sklmn", "sklmn.preprocessing", "sklmn.pretraining", "sklmn.laes"):
        module = importlib.import_module(modname)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                classes[name] = obj
    problems = []
    for name, cls in sorted(classes.items()):
        link = cls()._get_doc_link()
        if not link:
            problems.append(f"{name}: no documentation link in its HTML repr")
            continue
        path = Path(unquote(urlsplit(link).path))
        if not path.exists():
            problems.append(f"{name}: its HTML repr links to {link}, not built")
    n = len(classes)
    return n, problems


def find_browser() -> str | None:
    names = ["chromium", "chromium-browser", "google-chrome"]
    for name in [os.environ.get("CHROMIUM"), *names]:
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def _browser(binary: str, profile: str, *args: str) -> subprocess.CompletedProcess:
    cmd = [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--disable-extensions",
        "--allow-file-access-from-files",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=5000",
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def _blank_fraction(png: Path) -> tuple[float, int]:
    """(fraction of near-white pixels, number of distinct grey levels)."""
    import matplotlib.image as mpimg
    import numpy as np

    img = mpimg.imread(png)[..., :3]
    grey = img.mean(axis=2)
    return float((grey > 0.97).mean()), int(np.unique((grey * 255).astype(int)).size)


def check_browser(root: Path, shots: Path) -> tuple[list[str], list[str]]:
    binary = find_browser()
    if binary is None:
        return [], []
    shots.mkdir(parents=True, exist_ok=True)
    problems, written = [], []
    with tempfile.TemporaryDirectory() as profile:
        for name, rel, text in BROWSER_PAGES:
            page = root / rel
            if not page.exists():
                problems.append(f"{rel}: page not built")
                continue
            url = page.resolve().as_uri()
            dom = _browser(binary, profile, "--dump-dom", url)
            if dom.returncode != 0 or text not in dom.stdout:
                problems.append(
                    f"{rel}: the rendered DOM lacks {text!r} (exit {dom.returncode}: "
                    f"{dom.stderr.strip()[-300:]})"
                )
            png = shots / f"{name}.png"
            png.unlink(missing_ok=True)
            shot = _browser(
                binary, profile, "--window-size=1280,1000", f"--screenshot={png}", url
            )
            if shot.returncode != 0 or not png.exists():
                problems.append(f"{rel}: no screenshot ({shot.stderr.strip()[-300:]})")
                continue
            white, levels = _blank_fraction(png)
            if white > 0.995 or levels < 8:
                problems.append(f"{rel}: the screenshot looks blank ({png})")
            written.append(str(png))
    return written, problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", nargs="?", default=str(DOCS / "_build" / "html"))
    parser.add_argument("--screenshots", default=str(DOCS / "_build" / "screenshots"))
    parser.add_argument("--require-browser", action="store_true")
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args(argv)
    root = Path(args.root)
    if not (root / "index.html").exists():
        print(f"[docs] {root} holds no built site (index.html missing)")
        return 1

    n_pages, n_links, problems = check_links(root)
    print(f"[docs] {n_pages} pages, {n_links} internal links checked")
    n_est, link_problems = check_doc_links(root)
    print(f"[docs] HTML-repr documentation links of {n_est} estimators checked")
    problems += link_problems

    if args.no_browser:
        print("[docs] the rendering check in Chromium is SKIPPED (--no-browser)")
    elif find_browser() is None:
        message = (
            "[docs] no Chromium found (chromium, chromium-browser, google-chrome "
            "or $CHROMIUM): the rendering check and screenshots are SKIPPED"
        )
        if args.require_browser:
            problems.append(message)
        else:
            print(message)
    else:
        written, browser_problems = check_browser(root, Path(args.screenshots))
        problems += browser_problems
        for path in written:
            print(f"[docs] screenshot {path}")
    for problem in problems:
        print(f"[docs] PROBLEM {problem}")
    print(f"[docs] site check: {'FAILED' if problems else 'passed'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
