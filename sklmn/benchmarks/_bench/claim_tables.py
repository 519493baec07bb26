r"""The recorded reports' claim-item tables rendered again from their raw JSON.

Every report of the papers' experiments ends with the table of all claim
items of the five papers (:func:`sklmn.benchmarks._claims.claim_items_table`):
the verdicts come from the report's runs, the set-up deviations and the
controlled runs from the claim registry as it was when the report was
written. When the registry changes (a controlled run gains seeds, a
deviation is corrected), this script renders that section again from the
report's raw records (the ``merged`` results of its JSON: ``results.json``
in the report's folder, or the JSON of the same name) with the registry of
today, and leaves the rest of the report as it is. No experiment runs.

Usage::

    .venv/bin/python -m sklmn.benchmarks bench claim-tables            # rewrite
    .venv/bin/python -m sklmn.benchmarks bench claim-tables --check    # exit 1 if stale

Without report paths, every report under ``benchmarks/`` with that section.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .._claims import claim_items_table
from .._experiments import FULL_ONLY
from .._results import Claim, ExperimentResult, Row

_HEADING = "## Claim items of the five papers"


def result_from_record(record: dict) -> ExperimentResult:
    """An :class:`ExperimentResult` from its JSON record (the runner's format).

    Parameters
    ----------
    record : dict
        One entry of the ``merged`` or ``runs`` lists of a ``results.json``
        that the runner wrote.

    Returns
    -------
    result : ExperimentResult

    Examples
    --------
    >>> record = {"name": "x", "rows": [{"task": "t", "model": "LMN",
    ...           "metric": "acc", "value": 0.5, "values": [0.4, 0.6]}],
    ...           "claims": [{"text": "c", "reproduced": None,
    ...                       "seeds_holding": [1, 2]}], "seeds": [0, 1]}
    >>> result = result_from_record(record)
    >>> result.rows[0].values, result.claims[0].seeds_holding
    ([0.4, 0.6], (1, 2))
    """
    record = dict(record)
    record["rows"] = [Row(**row) for row in record.get("rows", [])]
    claims = []
    for claim in record.get("claims", []):
        claim = dict(claim)
        if claim.get("seeds_holding") is not None:
            claim["seeds_holding"] = tuple(claim["seeds_holding"])
        claims.append(Claim(**claim))
    record["claims"] = claims
    record["plots"] = [Path(p) for p in record.get("plots", [])]
    return ExperimentResult(**record)


def _raw_records(report: Path) -> Path:
    """The raw JSON of a report: ``results.json`` next to a ``results.md``,
    else the JSON of the same name."""
    path = report.with_suffix(".json")
    if report.name == "results.md" or not path.exists():
        path = report.parent / "results.json"
    if not path.exists():
        raise SystemExit(f"{report}: no raw records ({path} is missing)")
    return path


def _render(report: Path) -> tuple[str, str]:
    """(current text, text with the claim-item section rendered again)."""
    text = report.read_text()
    payload = json.loads(_raw_records(report).read_text())
    results = [result_from_record(r) for r in payload["merged"]]
    lines = text.split("\n")
    start = lines.index(_HEADING)
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
        len(lines),
    )
    table = claim_items_table(results, full_only=FULL_ONLY, preset=payload["preset"])
    tail = [""] if end < len(lines) else []
    new = lines[:start] + table + tail + lines[end:]
    return text, "\n".join(new)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="*", type=Path,
                        help="reports (default: every one under "
                             "benchmarks/)")  # fmt: skip
    parser.add_argument("--root", type=Path, default=Path("benchmarks"),
                        help="where to look for reports without paths")  # fmt: skip
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when a table is stale")  # fmt: skip
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.reports if not p.is_file()]
    if missing:
        parser.error(f"no such report: {', '.join(missing)}")
    reports = args.reports or sorted(
        p for p in args.root.rglob("*.md") if _HEADING in p.read_text().split("\n")
    )
    stale = []
    for report in reports:
        old, new = _render(report)
        if old != new:
            stale.append(report)
            if not args.check:
                report.write_text(new)
        print(f"{report}: {'stale' if old != new else 'up to date'}", flush=True)
    if args.check and stale:
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
