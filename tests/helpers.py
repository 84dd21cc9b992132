"""Constants and helpers shared by the tests: the papers' worked example, the Adult data."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
ADULT_COLUMNS = [
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
]

# [LZG24, Example 1]: P̂ from n = 100 public records, s major.
EXAMPLE_P_HAT = np.array([[0.07, 0.10], [0.26, 0.57]])
EXAMPLE_P_TRUE = np.array([[0.1, 0.1], [0.2, 0.6]])
EXAMPLE_N = 100
EXAMPLE_EPSILON = math.log(2)


def adult_path(name: str = "adult.data.gz") -> Path:
    """Path of an Adult file: the project's shipped copy if present, else ../shared/data."""
    for base in (ROOT / "demo" / "data", SHARED_DATA):
        if (base / name).exists():
            return base / name
    pytest.skip(f"Adult data file {name} not available")
