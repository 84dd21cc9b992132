"""``rldp design --task distribution|mean`` without ``--bins``: U's number of bins by the rule of
:mod:`rldp.aggregator.design.orchestration.bins` (the least predicted error at ``--planned-reports``), run by
:func:`~rldp.aggregator.design.orchestration.table_bins.bins_by_rule` as a service design job runs it."""

from __future__ import annotations

import argparse

from rldp.shared.provenance import PublicCounts
from rldp.shared.records import Alphabet
from rldp.shared.tables import Table

from ..design import DesignParameterError, ValidatedRequest
from ..design.orchestration.bins import BinChoice
from ..design.orchestration.table_bins import bins_by_rule
from .common import CommandError

__all__ = ["rule_bins"]


def rule_bins(
    args: argparse.Namespace, table: Table, alphabet: Alphabet, public: PublicCounts, request: ValidatedRequest
) -> tuple[Alphabet, PublicCounts, ValidatedRequest, BinChoice | None]:
    """The alphabet, public counts and request with U's bins chosen by the rule, when it applies: a task
    on U, one released numeric column, no ``--bins`` and no ``--edges`` for it; else all unchanged. The
    choice is the request's ``extra["binning"]`` (so the document's ``binning`` field)."""
    if args.bins is not None or any(
        item.partition("=")[0] == attr.name for attr in alphabet.released for item in args.edges
    ):
        return alphabet, public, request, None
    try:
        return bins_by_rule(table, alphabet, public, request, args.public)
    except DesignParameterError as exc:  # the chosen bins make the alphabet too large to design for
        raise CommandError(str(exc)) from None
