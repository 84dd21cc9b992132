"""The client tests' GRR (tests/documents.py, built without the aggregator) is the designer's GRR."""

from __future__ import annotations

import numpy as np
import pytest
from documents import grr

from rldp.aggregator.design import grr_matrix


@pytest.mark.parametrize(("k", "epsilon"), [(2, 0.01), (6, 1.0), (70, 2.0), (300, 5.0), (4000, 1.0)])
def test_the_test_grr_is_the_designers_grr_bit_for_bit(k, epsilon):
    assert np.array_equal(grr(k, epsilon), grr_matrix(k, epsilon))
