"""The registry of experiments, running one, and its outputs on disk.

``write_outputs`` writes ``NAME.csv`` (tidy: one row per experiment, panel, method, ε, β,
statistic), ``NAME.png`` and ``NAME.json`` (settings, notes, run time) in the output
folder; ``load_result`` reads the CSV and JSON back (to redraw without recomputing).
"""

from __future__ import annotations

import csv
import json
import math
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from rldp import __version__
from rldp.shared.errors import ValidationError, one_line

from . import field, funnel_plots, km19_plots, lift_plots, lzg21, lzg24, lzg24_truth, numeric, pilot_plots
from .config import COLUMNS, Config, Experiment, Result, UnknownExperiment

__all__ = ["DEFAULT_OUT", "EXPERIMENTS", "experiment", "run_experiment", "write_outputs", "load_result", "report"]

# Where ``rldp experiment`` writes by default: a folder of the caller's own, never the tracked
# docs/experiments/ (``--out docs/experiments`` refreshes those on purpose).
DEFAULT_OUT = Path("experiments-output")

EXPERIMENTS: dict[str, Experiment] = {
    e.name: e
    for e in (
        *lzg24.EXPERIMENTS,
        *lzg24_truth.EXPERIMENTS,
        *lzg21.EXPERIMENTS,
        *km19_plots.EXPERIMENTS,
        *funnel_plots.EXPERIMENTS,
        *lift_plots.EXPERIMENTS,
        *pilot_plots.EXPERIMENTS,
        *field.EXPERIMENTS,
        *numeric.EXPERIMENTS,
    )
}
# The integer columns of the tidy CSV (the other numeric ones are floats).
_INT_COLUMNS = ("n_sensitive", "n_released", "n", "draws")
_FLOAT_COLUMNS = ("beta", "epsilon", "value")


def experiment(name: str) -> Experiment:
    """The registered experiment ``name``; UnknownExperiment (a LookupError) lists the names."""
    if name not in EXPERIMENTS:
        raise UnknownExperiment(f"unknown experiment {name!r}; choose one of: {', '.join(EXPERIMENTS)}")
    return EXPERIMENTS[name]


def run_experiment(name: str, cfg: Config) -> Result:
    """Run experiment ``name`` (a key of :data:`EXPERIMENTS`) and return its result."""
    exp = experiment(name)
    cfg = replace(cfg, polyopt_solver=cfg.polyopt_solver or exp.solver)
    start = time.perf_counter()
    result = exp.run(cfg)
    result.seconds = time.perf_counter() - start
    result.settings.update(
        quick=cfg.quick, seed=cfg.seed, workers=cfg.workers, methods=result.methods, polyopt_solver=cfg.polyopt_solver
    )
    if cfg.polyopt_solver != "exact":
        result.settings["time_budget_seconds"] = cfg.time_budget
    return result


def _csv_value(v: Any) -> Any:
    if isinstance(v, float):
        return "inf" if math.isinf(v) else repr(v)
    return v


def _write_csv(path: Path, rows: list[dict[str, Any]], columns: tuple[str, ...] | list[str]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for r in rows:
            writer.writerow({k: _csv_value(r.get(k, "")) for k in columns})


def write_outputs(result: Result, out: Path, *, records: bool = False) -> list[Path]:
    """Write NAME.csv (tidy summary), NAME.png and NAME.json (settings, notes, run time);
    with ``records`` also NAME_draws.csv (one row per design and draw). Returns the paths."""
    exp = experiment(result.name)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    csv_path = out / f"{result.name}.csv"
    _write_csv(csv_path, result.rows, COLUMNS)
    paths = [csv_path]
    if records and result.records:
        rec_path = out / f"{result.name}_draws.csv"
        _write_csv(rec_path, result.records, list(dict.fromkeys(k for r in result.records for k in r)))
        paths.append(rec_path)
    paths.append(exp.plot(result, out))
    meta = {
        "experiment": result.name,
        "source": exp.source,
        "summary": exp.summary,
        "settings": result.settings,
        "notes": result.notes,
        "seconds": round(result.seconds, 1),
        "software": f"rldp {__version__}",
        "panels": {p: result.panel_titles[p] for p in result.panels},
    }
    json_path = out / f"{result.name}.json"
    json_path.write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    paths.append(json_path)
    return paths


def load_result(name: str, out: Path) -> Result:
    """Rebuild a :class:`Result` (without per-draw records) from the NAME.csv and NAME.json
    that :func:`write_outputs` wrote, e.g. to redraw the figure without recomputing."""
    experiment(name)
    out = Path(out)
    meta_path, csv_path = out / f"{name}.json", out / f"{name}.csv"
    for path in (meta_path, csv_path):
        if not path.is_file():
            raise FileNotFoundError(f"{path} not found; run 'rldp experiment {name} --out {out}' first")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        with open(csv_path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            if tuple(reader.fieldnames or ()) != COLUMNS:
                raise ValidationError(f"{csv_path}: expected the columns {', '.join(COLUMNS)}")
            rows = []
            for r in reader:
                for k in _INT_COLUMNS:
                    r[k] = int(r[k]) if r[k] != "" else ""
                for k in _FLOAT_COLUMNS:
                    r[k] = float(r[k]) if r[k] != "" else ""
                rows.append(r)
        panels = dict(meta["panels"])
        result = Result(
            name,
            rows,
            [],
            list(panels),
            panels,
            list(meta["settings"]["methods"]),
            dict(meta["settings"]),
            list(meta.get("notes", [])),
            float(meta.get("seconds", 0.0)),
        )
    except (KeyError, TypeError, json.JSONDecodeError) as exc:
        raise ValidationError(
            f"{meta_path}: not an experiment summary written by rldp ({type(exc).__name__}: {one_line(exc)})"
        ) from None
    return result


def report(result: Result) -> str:
    """The short text printed after a run: the table and the notes."""
    exp = experiment(result.name)
    quick = " [quick]" if result.settings.get("quick") else ""
    lines = [f"== {result.name}: {exp.summary} {exp.source}{quick}", "", exp.table(result)]
    if result.notes:
        lines += ["", "notes:"] + [f"  - {n}" for n in result.notes]
    return "\n".join(lines)
