"""``rldp design --task distribution|mean`` without ``--bins``: U's number of bins by the rule of
:mod:`rldp.aggregator.design.orchestration.bins` (the least predicted error at ``--planned-reports``)."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from rldp.shared.numeric import NumericSpec, parse_numbers
from rldp.shared.provenance import PublicCounts
from rldp.shared.records import Alphabet
from rldp.shared.tables import Table

from ..design import ValidatedRequest
from ..design.orchestration.bins import RULE_TASKS, BinChoice, choose_bins
from ..design.orchestration.request import bind_alphabet
from .public_table import check_alphabet

__all__ = ["rule_bins"]


def rule_bins(
    args: argparse.Namespace, table: Table, alphabet: Alphabet, public: PublicCounts, request: ValidatedRequest
) -> tuple[Alphabet, PublicCounts, ValidatedRequest, BinChoice | None]:
    """The alphabet, public counts and request with U's bins chosen by the rule, when it applies: a task
    on U, one released numeric column, no ``--bins`` and no ``--edges`` for it; else all unchanged. The
    choice is the request's ``extra["binning"]`` (so the document's ``binning`` field)."""
    if request.task not in RULE_TASKS or args.bins is not None or len(alphabet.released) != 1:
        return alphabet, public, request, None
    attr = alphabet.released[0]
    if attr.numeric is None or any(item.partition("=")[0] == attr.name for item in args.edges):
        return alphabet, public, request, None
    cells = table.column(attr.name)
    values, _ = parse_numbers(np.asarray(cells[cells != ""]), attr.name)
    numeric = {a.name: a.numeric for a in alphabet.joint_attributes if a.numeric is not None}

    def alphabet_for(spec: NumericSpec) -> Alphabet:
        return Alphabet.from_table(
            table, args.sensitive, args.released, latent=alphabet.latent, numeric={**numeric, attr.name: spec}
        )

    def public_for(spec: NumericSpec) -> tuple[np.ndarray, int, bool]:
        counts = PublicCounts.from_table(table, alphabet_for(spec), name=public.name)
        return counts.distribution, counts.n, alphabet.latent

    spec = attr.numeric
    choice = choose_bins(attr.name, values, request, public_for, lo=spec.lo, hi=spec.hi, closed=spec.closed)
    if choice is None:
        return alphabet, public, request, None
    alphabet = alphabet_for(choice.spec)
    check_alphabet(alphabet, args.public)
    public = PublicCounts.from_table(table, alphabet, name=public.name)
    extra: dict[str, Any] = {**(request.extra or {}), "binning": choice.record()}
    # the same validated request over the chosen bins (bind_alphabet re-checks what reads |U|)
    return alphabet, public, bind_alphabet(request.local(extra=extra), alphabet), choice
