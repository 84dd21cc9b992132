"""pandas in, pandas out: design from a DataFrame, estimates as DataFrames.

A data team holds its public side data as a DataFrame; :func:`design_from_frame` designs
from it as ``rldp design`` does from a CSV (same alphabet, counts, provenance and size
check), :meth:`rldp.client.Mechanism.privatize` takes a DataFrame of records, and
:meth:`rldp.aggregator.estimate.Estimate.to_frame` returns the estimate as one. pandas is
an optional extra (``pip install 'rldp[pandas]'``); nothing here imports it — a DataFrame
is read through its own methods — and the client never needs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rldp.shared.errors import ValidationError
from rldp.shared.provenance import PublicCounts
from rldp.shared.records import Alphabet
from rldp.shared.tables import Table, blank_counts

from .design import MAX_DESIGN_SYMBOLS, check_design_size, design

__all__ = ["MAX_DESIGN_SYMBOLS", "design_from_frame", "check_design_size"]


def design_from_frame(
    frame: Any,
    *,
    sensitive: str | Sequence[str],
    released: Sequence[str],
    method: str,
    epsilon: float,
    name: str = "dataframe",
    missing: str = "error",
    latent: bool = False,
    **options: Any,
) -> dict[str, Any]:
    """An audited mechanism document designed from the public rows of ``frame`` (a pandas DataFrame
    or a :class:`~rldp.shared.tables.Table`); ``options`` go to :func:`rldp.aggregator.design.design`
    (``beta``, ``radius``, ``order``, ``solver``, ``time_budget``, …). ``missing``: what to do with
    missing values in the chosen columns — "error" (default), "drop" their rows, or "keep" them as
    a category of their own (the empty string). ``name`` is the data's name in the provenance."""
    table = frame if isinstance(frame, Table) else Table.from_frame(frame)
    sens = [sensitive] if isinstance(sensitive, str) else list(sensitive)
    rel = [released] if isinstance(released, str) else list(released)
    if missing not in ("error", "drop", "keep"):
        raise ValidationError(f"missing must be 'error', 'drop' or 'keep'; got {missing!r}")
    for col in (*sens, *rel):
        if col not in table.columns:
            raise ValidationError(f"no column {col!r}; available: {', '.join(table.columns)}")
    blanks = blank_counts(table, [*sens, *rel])
    if blanks and missing == "error":
        where = ", ".join(f"{col} ({n:,})" for col, n in blanks.items())
        raise ValidationError(f"missing values in {where}; pass missing='drop' or missing='keep'")
    if blanks and missing == "drop":
        keep = sum(table.column(col) == "" for col in blanks) == 0
        table = Table(table.columns, tuple(col[keep] for col in table.data))
    if table.n_rows == 0:
        raise ValidationError("no public rows to design from")
    alphabet = Alphabet.from_table(table, sens, rel, latent=latent)
    check_design_size(alphabet, name)
    public = PublicCounts.from_table(table, alphabet, name=name)
    return design(
        method,
        alphabet=alphabet,
        public_distribution=public.distribution,
        epsilon=epsilon,
        n=public.n,
        provenance=public.provenance(),
        **options,
    )
