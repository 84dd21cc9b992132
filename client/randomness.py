"""The OS CSPRNG, vectorised: where every sampler's randomness comes from.

A user's output is drawn from the column Q(·|x) of their record x. Privacy rests on that
draw being unpredictable, so the default source is the operating system's CSPRNG
(``os.urandom``), never numpy's (or Python's) seeded generators. For tests, any object with
a ``random(n) -> n floats in [0, 1)`` method can be injected (e.g.
``numpy.random.default_rng(seed)``); its numbers are used at 53-bit resolution.

Requests of 4 KiB or more are served, when the ``cryptography`` package is installed, by
AES-256 in counter mode keyed from ``os.urandom`` — the CTR_DRBG construction of NIST
SP 800-90A — because the kernel's generator costs ~3 ns per byte and AES-NI ~0.15. Every
MiB gets a fresh 256-bit key and 128-bit initial counter from ``os.urandom``: no state is
kept between calls, so forked worker processes and threads never share a stream, and the
keystream drawn under one key (2¹⁶ blocks) is far below the birthday bound of AES
(distinguishing advantage ≤ 2⁻⁹⁷ per key).
"""

from __future__ import annotations

import os
from typing import Any, Protocol

import numpy as np

try:  # optional: a fast CSPRNG for large requests (see the module docstring)
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    HAVE_AES = True
except ImportError:  # pragma: no cover - exercised only where cryptography is absent
    HAVE_AES = False

__all__ = [
    "RandomSource",
    "OSRandom",
    "random_array",
    "random_into",
    "random_bytes",
    "uniform_from_bytes",
    "u53_from",
]

_TWO_POW_M53 = 1.0 / (1 << 53)


class RandomSource(Protocol):
    """Anything that returns ``n`` independent uniform doubles in [0, 1)."""

    def random(self, n: int) -> Any: ...


def uniform_from_bytes(data: Any) -> np.ndarray:
    """Uniform doubles in [0, 1) from random bytes (any buffer): 8 bytes each, top 53 bits × 2⁻⁵³ (exact)."""
    words = np.frombuffer(data, dtype="<u8", count=len(data) // 8)
    return (words >> np.uint64(11)).astype(np.float64) * _TWO_POW_M53


_KEYSTREAM_MIN_BYTES = 1 << 12  # below this the syscall is cheaper than setting up AES (~10 µs)
_KEYSTREAM_BYTES_PER_KEY = 1 << 20
_ZEROS: bytes | None = None  # the cipher's input (1 MiB of zeros), allocated once


def random_array(n: int) -> np.ndarray:
    """``n`` bytes from the OS CSPRNG as a uint8 array, expanded by AES-256-CTR for large ``n``
    when the ``cryptography`` package is available (fresh key per MiB; see the module docstring).

    The keystream is written straight into a numpy array (``update_into``): numpy asks the OS
    for huge pages for large arrays, whereas a fresh multi-megabyte ``bytes`` object is
    mapped page by page — about 3 µs per 4 KiB page fault on a virtual machine, more than
    the AES work itself.
    """
    out = np.empty(n + 15, dtype=np.uint8)  # update_into wants room for one more block than it writes
    random_into(out, n)
    return out[:n]


def random_into(out: np.ndarray, n: int) -> None:
    """Fill ``out[:n]`` (a contiguous uint8 array with at least ``n`` + 15 bytes) from the OS
    CSPRNG as :func:`random_array` does: a caller that draws chunk after chunk reuses one
    buffer instead of mapping fresh pages for every chunk."""
    global _ZEROS
    if out.dtype != np.uint8 or out.ndim != 1 or not out.flags.c_contiguous or out.size < n + 15:
        raise ValueError(f"out must be a contiguous 1-D uint8 array of at least n + 15 = {n + 15} bytes")
    if n < _KEYSTREAM_MIN_BYTES or not HAVE_AES:
        out[:n] = np.frombuffer(os.urandom(n), dtype=np.uint8)
        return
    if _ZEROS is None:
        _ZEROS = bytes(_KEYSTREAM_BYTES_PER_KEY)
    zeros = memoryview(_ZEROS)
    for start in range(0, n, _KEYSTREAM_BYTES_PER_KEY):
        size = min(_KEYSTREAM_BYTES_PER_KEY, n - start)
        seed = os.urandom(48)
        stream = Cipher(algorithms.AES(seed[:32]), modes.CTR(seed[32:])).encryptor()
        stream.update_into(zeros[:size], out[start : start + size + 15].data)  # keystream = encryption of zeros


def random_bytes(n: int) -> bytes:
    """``n`` bytes from the OS CSPRNG (:func:`random_array`, as ``bytes``)."""
    return random_array(n).tobytes()


class OSRandom:
    """Uniform numbers from the operating system's CSPRNG (``os.urandom``), vectorised."""

    def random(self, n: int) -> np.ndarray:
        """``n`` independent uniform doubles on the grid k·2⁻⁵³, k = 0 … 2⁵³ − 1."""
        n = int(n)
        if n < 0:
            raise ValueError(f"n must be ≥ 0; got {n}")
        return uniform_from_bytes(random_array(8 * n))

    def bits(self, n: int, width: int) -> np.ndarray:
        """``n`` independent uniform integers of ``width`` bits (1..64): uint8 for 8, uint16
        for 16 (views of the random bytes), else uint64."""
        if not 1 <= width <= 64:
            raise ValueError(f"width must be 1..64 bits; got {width}")
        if width == 8:
            return random_array(n)
        if width == 16:
            return random_array(2 * n).view("<u2")
        words = random_array(8 * n).view("<u8")
        return words >> np.uint64(64 - width) if width < 64 else words

    def __repr__(self) -> str:
        return "OSRandom()"


def u53_from(rng: RandomSource, n: int) -> np.ndarray:
    """53-bit integers ⌊r·2⁵³⌋ from an injected source's doubles r (validated: n of them, in [0, 1))."""
    u = np.asarray(rng.random(n), dtype=np.float64).reshape(-1)
    if u.size != n:
        raise ValueError(f"the random source returned {u.size} numbers for {n} records")
    if n and not (u.min() >= 0.0 and u.max() < 1.0):  # also catches NaN
        raise ValueError("the random source must return numbers in [0, 1)")
    return np.floor(u * float(1 << 53)).astype(np.uint64)
