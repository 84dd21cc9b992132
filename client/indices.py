"""What every sampler checks at its boundary: the record indices x and the output dtype.

numpy only (this module ships with the client).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["check_indices", "output_dtype"]


def check_indices(x: Any, n_inputs: int) -> np.ndarray:
    """Record indices ``x`` as a 1-D int64 array, each checked to lie in [0, n_inputs)."""
    xs = np.asarray(x)
    if xs.ndim != 1:
        xs = xs.reshape(-1)
    if xs.size and xs.dtype.kind not in "iu":
        raise ValueError(f"record indices must be integers; got dtype {xs.dtype}")
    xs = xs.astype(np.int64, copy=False)
    # One pass: seen as unsigned, a negative index is huge, so max < |X| checks both ends.
    if xs.size and xs.view(np.uint64).max() >= n_inputs:
        raise ValueError(f"record indices must be in [0, {n_inputs}); got {int(xs.min())}..{int(xs.max())}")
    return xs


def output_dtype(n_outputs: int, dtype: Any = None) -> np.dtype:
    """The dtype of the outputs: int64 by default, or a compact integer type that holds
    every output 0 … n_outputs − 1 (``np.uint8`` for ≤ 256 outputs, ``np.uint16`` for ≤ 65,536)."""
    if dtype is None:
        return np.dtype(np.int64)
    try:
        dt: np.dtype = np.dtype(dtype)
    except TypeError:
        raise ValueError(f"dtype must be a numpy integer type such as uint8 or uint16; got {dtype!r}") from None
    if dt.kind not in "iu" or np.iinfo(dt).max < n_outputs - 1:
        fits = ", ".join(t for t in ("uint8", "uint16", "uint32", "int64") if np.iinfo(t).max >= n_outputs - 1)
        raise ValueError(
            f"dtype must be an integer type that holds outputs 0..{n_outputs - 1}: one of {fits}; got {dt}"
        )
    return dt
