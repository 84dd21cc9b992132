"""Documents of an aggregator that misstates its public data, for the provenance tests.

Imported as ``provenance.attacks`` (tests/ is on sys.path) by tests/provenance and tests/aggregator/services.
Each is designed by PolyOpt on Adult S = sex, U = race at ε = 1 and is consistent with its own
claims (it passes the plain audit and its provenance agrees with its P̂ and n); only the public
data can tell it from the honest design.
"""

from __future__ import annotations

from typing import Any

from helpers import ADULT_COLUMNS, adult_path

from rldp.aggregator.design import design
from rldp.shared.document import from_json, to_json
from rldp.shared.provenance import PublicCounts
from rldp.shared.records import Alphabet
from rldp.shared.tables import Table, read_csv

EPSILON = 1.0
#: Records the shifting aggregator moves from (Female, Black) to (Female, White).
SHIFTED_RECORDS = 1000


def adult_table() -> Table:
    """adult.data (the public data of every design here)."""
    return read_csv(adult_path(), names=ADULT_COLUMNS)


def adult_counts(table: Table, name: str = "adult.csv") -> PublicCounts:
    """The honest counts of sex × race."""
    return PublicCounts.from_table(table, Alphabet.from_table(table, "sex", ["race"]), name=name)


def designed(counts: PublicCounts, **kwargs: Any) -> dict[str, Any]:
    """PolyOpt at ε = 1 for these counts, with their provenance, as a reader sees the document."""
    doc = design(
        "polyopt",
        alphabet=counts.alphabet,
        public_distribution=counts.distribution,
        n=counts.n,
        epsilon=EPSILON,
        provenance=counts.provenance(),
        **kwargs,
    )
    return from_json(to_json(doc))


def inflated(counts: PublicCounts) -> PublicCounts:
    """The same P̂ with n claimed ten times larger (a ~10x smaller confidence radius)."""
    return PublicCounts(counts.alphabet, counts.counts * 10, counts.name)


def shifted(counts: PublicCounts) -> PublicCounts:
    """P̂ with SHIFTED_RECORDS records moved from (Female, Black) to (Female, White); the same n."""
    race = counts.alphabet.released[0]
    cells = counts.counts.copy()
    cells[0, race.index("Black")] -= SHIFTED_RECORDS
    cells[0, race.index("White")] += SHIFTED_RECORDS
    return PublicCounts(counts.alphabet, cells, counts.name)
