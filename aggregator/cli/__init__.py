"""``rldp design``, ``rldp audit`` and ``rldp evaluate``: mechanisms from the command line.

The root command (:mod:`rldp.cli`) registers these through :func:`add_parser` and turns
every error into one clear line on stderr (exit 2), never a traceback. ``--json`` prints
one machine-readable line on stdout.
"""

from __future__ import annotations

import argparse

from .design import add_design_parser
from .inspect import add_check_parsers

__all__ = ["add_parser"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``design``, ``audit`` and ``evaluate`` on the root command's subparsers."""
    add_design_parser(sub)
    add_check_parsers(sub)
