"""Codes of fixed-width numpy string columns ('U' and 'S' arrays) without comparing strings.

A fixed-width string array is a matrix of integers: n rows of ``itemsize`` bytes, each value
padded with zeros. An attribute has few values, so instead of a binary search among them
with a string comparison at every step (~35-75 ns per record), each row is

1. given a *candidate* value by one table lookup on a key read from the row: the code unit
   (UCS4 code point, or byte) at one position where the attribute's values all differ, or —
   when no single position separates them — a multiplicative hash of a few 8-byte words of
   the row whose top bits are distinct for every value (a perfect hash of the values); for
   hundreds of values with no perfect hash, a binary search among the values' 64-bit
   hashes (integers) instead;
2. *verified* exactly: the row's words are compared with the candidate's words, all of them.

A row that equals a value gets that value as its candidate (the values' keys are distinct),
so it is encoded correctly; a row equal to no value (unknown, or sharing a key or a hash
with a value) fails the comparison and is reported, never encoded. Everything is numpy
passes over cache-sized chunks: ~4× fewer ns per record than the binary search
(bench/bench_scale.py). ``S`` arrays hold UTF-8 bytes (a value matches its UTF-8 encoding).

Limits, where the caller falls back to the binary search among strings: a value ending in
NUL (numpy strips trailing NULs, so it cannot be told from the shorter value), rows shorter
than 8 bytes without a separating position, or no hash distinct for the values.

numpy and the standard library only (this module ships with the client).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["FixedWidthCodes"]

#: A single-position key is read through a lookup table of at most this many entries.
MAX_LUT = 1 << 12
#: Multipliers tried per table size for the hashed key, and the table sizes tried.
HASH_TRIES = 64
HASH_EXTRA_BITS = (1, 2, 4, 6)
#: Larger tables for hundreds to thousands of values (2²⁰ int64 entries: 8 MiB at most).
HASH_LARGE_BITS = (16, 18, 20)
_CHUNK_BYTES = 1 << 18  # rows per step: about this many bytes (the row, its copy, the comparison stay in L2)
_WORDS = {8: np.uint64, 4: np.uint32, 2: np.uint16, 1: np.uint8}


class FixedWidthCodes:
    """Encodes arrays of one fixed-width string dtype against an attribute's values.

    Build with :meth:`build` (None when this dtype cannot be handled); :meth:`encode` returns
    the codes and the position of the first row that matches no value (−1 when none).
    """

    def __init__(self, dtype: np.dtype, rows: np.ndarray, codes: np.ndarray | None, key: Any) -> None:
        self.dtype = dtype
        self._rows = rows  # (C, W) words of the values that fit in the dtype
        self._codes = codes  # their positions among the attribute's values (None: the identity)
        self._key = key

    @classmethod
    def build(cls, values: tuple[str, ...], dtype: np.dtype) -> FixedWidthCodes | None:
        """The encoder for arrays of ``dtype`` ('U' or 'S', itemsize ≥ 1), or None if unsupported."""
        size = dtype.itemsize
        if dtype.kind not in "US" or size == 0:
            return None
        unit = 4 if dtype.kind == "U" else 1
        if any(v.endswith("\0") for v in values):
            return None
        raw = [v if dtype.kind == "U" else _utf8(v) for v in values]
        keep = [i for i, v in enumerate(raw) if v is not None and len(v) * unit <= size]
        cats = np.array([raw[i] for i in keep], dtype=dtype).reshape(len(keep))
        word = next(w for w in (8, 4, 2, 1) if size % w == 0)
        as_bytes = np.ascontiguousarray(cats.view(np.uint8).reshape(len(keep), size))
        rows = as_bytes.view(_WORDS[word])
        codes = None if len(keep) == len(values) else np.array(keep, dtype=np.int64)
        if not keep:
            return cls(dtype, rows, codes, ("none",))
        key = _unit_key(as_bytes, unit) or _hash_key(as_bytes)
        if key is None:
            return None
        return cls(dtype, rows, codes, key)

    @property
    def searches(self) -> bool:
        """Whether a row's candidate comes from a binary search (thousands of values, no perfect
        hash) rather than one table lookup."""
        return bool(self._key[0] == "sorted")

    def encode(self, arr: np.ndarray) -> tuple[np.ndarray, int]:
        """(codes, first unknown row or −1) of a 1-D array of this encoder's dtype."""
        n = arr.size
        out = np.empty(n, dtype=np.int64)
        if n == 0:
            return out, -1
        if self._rows.shape[0] == 0:  # no value fits in this width: every row is unknown
            return out, 0
        arr = np.ascontiguousarray(arr)
        size = self.dtype.itemsize
        as_bytes = arr.view(np.uint8).reshape(n, size)
        words = as_bytes.view(self._rows.dtype)
        step = max(256, _CHUNK_BYTES // size)
        gathered = np.empty((min(step, n), self._rows.shape[1]), dtype=self._rows.dtype)
        differs = np.empty(gathered.shape, dtype=bool)
        scratch = np.empty(min(step, n), dtype=np.uint64)
        for start in range(0, n, step):
            stop = min(start + step, n)
            m = stop - start
            cand = out[start:stop]
            self._candidates(as_bytes[start:stop], cand, scratch[:m])
            # Exact check: every word of the row against the candidate's (indices in range: "clip").
            np.take(self._rows, cand, axis=0, out=gathered[:m], mode="clip")
            np.not_equal(words[start:stop], gathered[:m], out=differs[:m])
            if differs[:m].any():
                return out, start + int(np.argmax(differs[:m].any(axis=1)))
        if self._codes is not None:
            out[:] = self._codes.take(out)
        return out, -1

    def _candidates(self, rows: np.ndarray, out: np.ndarray, scratch: np.ndarray) -> None:
        kind, *spec = self._key
        if kind == "unit":
            position, unit, lut = spec
            col = rows[:, position * unit : (position + 1) * unit].view(_WORDS[unit])[:, 0]
            np.take(lut, col, out=out, mode="clip")  # keys beyond the table: any candidate (verified)
            return
        offsets, multipliers, *lookup = spec
        h = scratch
        for i, (off, mult) in enumerate(zip(offsets, multipliers, strict=True)):
            col = rows[:, off : off + 8].view(np.uint64)[:, 0]
            if i == 0:
                np.multiply(col, mult, out=h)
            else:
                h += col * mult
        if kind == "hash":
            shift, lut = lookup
            h >>= shift
            np.take(lut, h, out=out, mode="clip")
        else:  # "sorted": a hash no value has gets some candidate (position C clipped), then fails the check
            hashes, order = lookup
            np.take(order, np.searchsorted(hashes, h), out=out, mode="clip")


def _utf8(value: str) -> bytes | None:
    """A value's bytes in an 'S' array: UTF-8, undecodable bytes as Python's surrogateescape
    spells them (so both encoders agree); None for a value no bytes can spell."""
    try:
        return value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return None


def _unit_key(cats: np.ndarray, unit: int) -> tuple[Any, ...] | None:
    """A position where every value has a different code unit, all below MAX_LUT (the
    smallest table wins): ("unit", position, unit, table), or None."""
    n_cats, size = cats.shape
    units = cats.view(_WORDS[unit]).astype(np.int64)
    best = None
    for position in range(units.shape[1]):
        col = units[:, position]
        top = int(col.max())
        if top < MAX_LUT and np.unique(col).size == n_cats and (best is None or top < best[1]):
            best = (position, top)
    if best is None:
        return None
    position, top = best
    lut = np.zeros(top + 1, dtype=np.int64)
    lut[units[:, position]] = np.arange(n_cats)
    return ("unit", position, unit, lut)


def _hash_key(cats: np.ndarray) -> tuple[Any, ...] | None:
    """A perfect hash of the values: the top bits of Σ word·multiplier over a few 8-byte words
    (greedily the words that separate the most values), distinct for every value; or None."""
    n_cats, size = cats.shape
    if size < 8:
        return None  # short rows always have a separating unit position or none at all
    offsets = list(range(0, size - 7, 8)) + ([size - 8] if size % 8 else [])
    words = np.stack([cats[:, o : o + 8].copy().view(np.uint64)[:, 0] for o in offsets], axis=1)
    chosen: list[int] = []
    while len(chosen) < len(offsets):
        distinct = [
            (np.unique(words[:, [*chosen, j]], axis=0).shape[0], -j) if j not in chosen else (-1, 0)
            for j in range(len(offsets))
        ]
        best = max(range(len(offsets)), key=lambda j: distinct[j])
        chosen.append(best)
        if distinct[best][0] == n_cats:
            break
    if np.unique(words[:, chosen], axis=0).shape[0] != n_cats:
        return None  # pragma: no cover - distinct values differ in some word
    rng = np.random.default_rng(0x5EED)  # fixed: the same encoder for the same values, every run
    base = max(1, (n_cats - 1).bit_length())
    where = [offsets[j] for j in chosen]
    for bits in sorted({base + extra for extra in HASH_EXTRA_BITS} | {b for b in HASH_LARGE_BITS if b > base}):
        if n_cats * n_cats > 14 * (1 << bits):
            continue  # a random hash is perfect with probability ≈ exp(−C²/2·2ᵇ) < e⁻⁷: hopeless
        for _ in range(HASH_TRIES):
            mults = _multipliers(rng, len(chosen))
            h = (words[:, chosen] * mults).sum(axis=1, dtype=np.uint64) >> np.uint64(64 - bits)
            if np.unique(h).size == n_cats:
                lut = np.zeros(1 << bits, dtype=np.int64)
                lut[h.astype(np.int64)] = np.arange(n_cats)
                return ("hash", where, list(mults), np.uint64(64 - bits), lut)
    # Many values: the full 64-bit hash (distinct for the values) and a binary search among
    # the values' hashes (integers, not strings) for the candidate.
    for _ in range(HASH_TRIES):
        mults = _multipliers(rng, len(chosen))
        h = (words[:, chosen] * mults).sum(axis=1, dtype=np.uint64)
        if np.unique(h).size == n_cats:
            order = np.argsort(h)
            return ("sorted", where, list(mults), h[order], order.astype(np.int64))
    return None


def _multipliers(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` random odd 64-bit multipliers."""
    return rng.integers(1, 1 << 63, n, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
