"""Subcommands of the ``rldp`` CLI contributed by this package (being written)."""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register this module's subcommands (none yet)."""
