"""The bins rule (:mod:`.bins`) over a public table: the one step ``rldp design`` and a service design job
(in its own process: the rule takes seconds) both run when a task on U leaves U's number of bins to it.

The caller decides whether the bins were given (``--bins``/``--edges``, or ``bins``/``edges`` in the
request's ``numeric``): given bins are never replaced. :func:`rule_applies` says, cheaply, whether the
rest of the rule's conditions hold; :func:`bins_by_rule` chooses k, rebuilds the alphabet and the public
counts over the chosen bins and records the choice as the request's ``extra["binning"]`` (the document's
``binning`` field, covered by its id)."""

from __future__ import annotations

from typing import Any

import numpy as np

from rldp.shared.numeric import NumericSpec, parse_numbers
from rldp.shared.provenance import PublicCounts
from rldp.shared.records import Alphabet
from rldp.shared.tables import Table

from ..primitives.options import DesignRequest, ValidatedRequest
from .bins import RULE_TASKS, BinChoice, choose_bins, predicting_method
from .request import bind_alphabet, check_design_size

__all__ = ["bins_by_rule", "rule_applies"]


def rule_applies(request: DesignRequest, alphabet: Alphabet) -> bool:
    """Whether the rule chooses U's bins (its bins not given): a task on U (``distribution`` or ``mean``),
    one released attribute, numeric, and a design to predict the error with (:func:`.bins.predicting_method`)."""
    return (
        request.task in RULE_TASKS
        and len(alphabet.released) == 1
        and alphabet.released[0].numeric is not None
        and predicting_method(request) is not None
    )


def bins_by_rule(
    table: Table, alphabet: Alphabet, public: PublicCounts, request: ValidatedRequest, where: str
) -> tuple[Alphabet, PublicCounts, ValidatedRequest, BinChoice | None]:
    """The alphabet, public counts (named as ``public``) and request with U's bins chosen by the rule when
    :func:`rule_applies`; else all unchanged (and the choice None). ``table``: the public data the alphabet
    was read from (its rows without a number in a numeric column already dropped); ``where`` names it in
    :func:`.request.check_design_size`'s refusal (DesignParameterError)."""
    if not rule_applies(request, alphabet):
        return alphabet, public, request, None
    attr = alphabet.released[0]
    spec = attr.numeric
    assert spec is not None  # rule_applies
    cells = table.column(attr.name)
    values, _ = parse_numbers(np.asarray(cells[cells != ""]), attr.name)
    numeric = {a.name: a.numeric for a in alphabet.joint_attributes if a.numeric is not None}
    sensitive = [a.name for a in alphabet.sensitive_attributes]

    def alphabet_for(chosen: NumericSpec) -> Alphabet:
        return Alphabet.from_table(
            table, sensitive, [attr.name], latent=alphabet.latent, numeric={**numeric, attr.name: chosen}
        )

    def public_for(chosen: NumericSpec) -> tuple[np.ndarray, int, bool]:
        counts = PublicCounts.from_table(table, alphabet_for(chosen), name=public.name)
        return counts.distribution, counts.n, alphabet.latent

    choice = choose_bins(attr.name, values, request, public_for, lo=spec.lo, hi=spec.hi, closed=spec.closed)
    if choice is None:
        return alphabet, public, request, None
    alphabet = alphabet_for(choice.spec)
    check_design_size(alphabet, where)
    public = PublicCounts.from_table(table, alphabet, name=public.name)
    extra: dict[str, Any] = {**(request.extra or {}), "binning": choice.record()}
    # the same validated request over the chosen bins (bind_alphabet re-checks what reads |U|)
    return alphabet, public, bind_alphabet(request.local(extra=extra), alphabet), choice
