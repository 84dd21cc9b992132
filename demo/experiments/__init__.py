"""The papers' experiments, reproduced: ``rldp experiment NAME``.

[LZG24, Sec 8] (:mod:`.lzg24`, :mod:`.lzg24_truth`): ``fig2`` (Adult pairs), ``fig3``
(synthetic data), ``table2`` (β sweep), ``fig4`` (realised ε*), ``fig5`` (I under P̂ vs P*).
[LZG21, Sec V] (:mod:`.lzg21`): ``isit-fig2``, ``isit-fig3``.
[KM19] (:mod:`.km19`, figures in :mod:`.km19_plots`): ``distp-example`` (Example 2 / Fig 2, δ vs ε),
``distp-adult`` (the coupling mechanism on Adult against GRR and optimal ε-LDP w.r.t. S at P̂).

Every experiment also draws the methods this project adds (``polyopt`` — Γ without the
s₁ = s₂ rows —, ``ir-calibrated``, ``cr``, ``cr-calibrated``, and whatever else
:data:`rldp.aggregator.design.METHODS` offers) as extra lines. Designs that are
infeasible (exact PolyOpt/NR above 12 symbols, as in the paper) or that fail numerically
are left out and listed in the run's notes; nothing is silently dropped.

Synthetic draws are seeded from (seed, |S|, |U|, n, draw index), so the results do not
depend on the number of worker processes, and the experiments on the same shape and n
share their draws (Table 2, Fig. 4 and Fig. 5 see the same P*).

Modules: :mod:`.config` (set-up, Config, Result), :mod:`.evaluation` (design and measure,
in the workers), :mod:`.tasks` (task lists, worker processes), :mod:`.stats` (summaries),
:mod:`.synthetic` (a synthetic-draws experiment from its stated set-up), :mod:`.tables`
(printed tables), :mod:`.figures` (a result's figure), :mod:`.runner` (registry, running,
files on disk).
"""

from __future__ import annotations

from .config import BETA, COLUMNS, N_ADULT, ORDER, POLYOPT_SOLVERS, Config, Experiment, Result, UnknownExperiment
from .evaluation import synthetic_draw
from .lzg24 import PAPER_TABLE2
from .runner import DEFAULT_OUT, EXPERIMENTS, experiment, load_result, report, run_experiment, write_outputs
from .tables import format_table
from .tasks import default_workers

__all__ = [
    "DEFAULT_OUT",
    "BETA",
    "COLUMNS",
    "N_ADULT",
    "ORDER",
    "POLYOPT_SOLVERS",
    "Config",
    "Result",
    "Experiment",
    "UnknownExperiment",
    "EXPERIMENTS",
    "PAPER_TABLE2",
    "synthetic_draw",
    "experiment",
    "run_experiment",
    "write_outputs",
    "load_result",
    "report",
    "format_table",
    "default_workers",
]
