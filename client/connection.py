"""Where the aggregator is and how hard to try: the options every client command shares.

``rldp privatize`` and the operator's commands (``rldp publish``, ``mechanisms``, …) take the
server from ``--server`` or RLDP_SERVER, the same ``--timeout``/``--retries`` and ``--json``.
"""

from __future__ import annotations

import argparse
import os

from rldp.shared.arguments import add_json_flag, nonnegative_int, positive_float
from rldp.shared.errors import ValidationError

__all__ = ["SERVER_ENV", "connection_options", "server_url"]

SERVER_ENV = "RLDP_SERVER"


def connection_options(*, retries: int, json_help: str) -> argparse.ArgumentParser:
    """A parent parser with ``--server``, ``--timeout``, ``--retries`` (default ``retries``) and ``--json``."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--server",
        metavar="URL",
        default=None,
        help=f"the aggregator's URL (default ${SERVER_ENV}), e.g. http://127.0.0.1:8000",
    )
    common.add_argument(
        "--timeout", type=positive_float("timeout"), default=10.0, help="seconds per attempt (default 10)"
    )
    common.add_argument(
        "--retries",
        type=nonnegative_int("retries"),
        default=retries,
        help=f"attempts after the first when the server cannot be reached or answers 429/5xx (default {retries})",
    )
    add_json_flag(common, json_help)
    return common


def server_url(args: argparse.Namespace) -> str:
    """``--server``, else RLDP_SERVER; a one-line error naming both when neither is given."""
    url = str(args.server or os.environ.get(SERVER_ENV, "")).strip()
    if not url:
        raise ValidationError(
            f"give --server URL or set {SERVER_ENV} (the aggregator's URL, e.g. http://127.0.0.1:8000)"
        )
    return url
