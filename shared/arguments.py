"""Command-line argument types shared by every ``rldp`` subcommand (standard library only).

Each returns an ``argparse`` type function whose error names the option and its allowed
range, so that bad input gets one clear line (argparse prints it with exit status 2).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = ["positive_int", "nonnegative_int", "positive_float", "names"]


def _integer(name: str, text: str, lowest: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{name} must be an integer ≥ {lowest}; got {text!r}") from None
    if value < lowest:
        raise argparse.ArgumentTypeError(f"{name} must be an integer ≥ {lowest}; got {text!r}")
    return value


def positive_int(name: str) -> Callable[[str], int]:
    """An integer ≥ 1 (e.g. workers, batch size)."""
    return lambda text: _integer(name, text, 1)


def nonnegative_int(name: str) -> Callable[[str], int]:
    """An integer ≥ 0 (e.g. a seed)."""
    return lambda text: _integer(name, text, 0)


def positive_float(name: str) -> Callable[[str], float]:
    """A finite number > 0 (e.g. ε in nats, seconds)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a finite number > 0; got {text!r}") from None
        if not math.isfinite(value) or value <= 0:
            raise argparse.ArgumentTypeError(f"{name} must be a finite number > 0; got {text!r}")
        return value

    return parse


def names(text: str) -> list[str]:
    """Comma-separated column names (blank entries dropped; at least one)."""
    out = [t.strip() for t in text.split(",") if t.strip()]
    if not out:
        raise argparse.ArgumentTypeError("expected one or more comma-separated column names")
    return out
