"""The data shipped with rldp: the UCI Adult census extract (see ``data/README.md``).

Files are located through :mod:`importlib.resources`, i.e. next to the installed
``rldp.demo`` package, so they load the same way from a fresh clone (editable install)
and from a wheel. Attribution: Becker, B. & Kohavi, R. (1996). Adult. UCI Machine
Learning Repository. CC BY 4.0.
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import numpy as np

from rldp.shared.errors import ValidationError
from rldp.shared.records import Alphabet
from rldp.shared.tables import Table, read_csv

__all__ = ["ADULT_COLUMNS", "ADULT_FILES", "data_file", "load_adult", "adult_distribution"]

ADULT_COLUMNS: tuple[str, ...] = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "class",
)
# split -> (file name, has a header row)
ADULT_FILES: dict[str, tuple[str, bool]] = {
    "data": ("adult.data.gz", False),
    "test": ("adult.test.csv.gz", True),
}


@contextmanager
def data_file(name: str) -> Iterator[Path]:
    """A filesystem path of the shipped data file ``name`` (``with data_file(...) as path``).

    Raises FileNotFoundError naming the expected location if the file is missing (e.g. a
    wheel built without package data).
    """
    resource = importlib.resources.files("rldp.demo").joinpath("data", name)
    if not resource.is_file():
        raise FileNotFoundError(
            f"shipped data file {name!r} not found in the rldp.demo package "
            f"(expected at {resource}); reinstall rldp with its package data"
        )
    with importlib.resources.as_file(resource) as path:
        yield Path(path)


def load_adult(split: Literal["data", "test"] = "data") -> Table:
    """The Adult ``data`` (32,561 rows, the public side data) or ``test`` (16,281 rows) split.

    Values are stripped of the ", " separators' spaces; ``?`` (missing) stays a category.
    """
    if split not in ADULT_FILES:
        raise ValidationError(f"unknown Adult split {split!r}; expected one of: {', '.join(ADULT_FILES)}")
    name, has_header = ADULT_FILES[split]
    with data_file(name) as path:
        return read_csv(path, names=None if has_header else ADULT_COLUMNS)


def adult_distribution(
    sensitive: str, released: str | list[str], split: Literal["data", "test"] = "data"
) -> tuple[Alphabet, np.ndarray, int]:
    """(alphabet, empirical P̂ of shape (|S|, |U|), number of rows) for S = ``sensitive``
    and U = ``released`` on an Adult split; the alphabet lists every value in that split."""
    table = load_adult(split)
    released_list = [released] if isinstance(released, str) else list(released)
    alphabet = Alphabet.from_table(table, sensitive, released_list)
    return alphabet, alphabet.empirical_distribution(table), table.n_rows
