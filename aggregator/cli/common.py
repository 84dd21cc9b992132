"""What the ``rldp`` subcommands of the aggregator share: their error, exit status and output."""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from rldp.shared.arguments import checked
from rldp.shared.errors import ValidationError

__all__ = [
    "CommandError",
    "EXIT_AUDIT_FAILED",
    "EXIT_INTERRUPTED",
    "emit",
    "fmt",
    "finite",
    "significance_level",
    "radius_nats",
]

EXIT_AUDIT_FAILED = 1
# A command stopped by Ctrl-C (128 + SIGINT, as a shell reports it), also when it kept a partial result.
EXIT_INTERRUPTED = 130


significance_level = checked(
    float,
    lambda value: 0 < value < 1,
    "beta must be a number in (0, 1); got {text!r}",
    "beta (significance level) must be in (0, 1); got {text!r}",
)
radius_nats = checked(
    float,
    lambda value: not math.isnan(value) and value >= 0,
    "radius must be a number ≥ 0 or 'inf'; got {text!r}",
    "radius must be ≥ 0 (nats) or 'inf'; got {text!r}",
)


class CommandError(ValidationError):
    """A command-line request that cannot be carried out (reported as one line, exit 2)."""


def emit(args: argparse.Namespace, record: dict[str, Any], lines: Sequence[str]) -> None:
    if args.json:
        print(json.dumps(record, allow_nan=False, default=_json_default))
    else:
        print("\n".join(lines))


def _json_default(obj: Any) -> Any:
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def fmt(x: float | None) -> str:
    return "inf" if x is None else f"{x:.4f}"


def finite(x: float) -> float | None:
    return None if x is None or math.isinf(x) else float(x)
