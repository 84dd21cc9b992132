"""The platform's per-user data folder, where rldp keeps what it stores by default.

One rule for the client's state file (:mod:`rldp.client.defaults`) and the aggregator's default
store (:func:`rldp.aggregator.storage.default_url`), with no dependency:

* Windows: ``%APPDATA%\\rldp`` (roaming; ``local=True``: ``%LOCALAPPDATA%\\rldp``, for data
  too large to roam, such as a store of reports);
* macOS: ``~/Library/Application Support/rldp``;
* elsewhere: ``$XDG_DATA_HOME/rldp``, ``~/.local/share/rldp`` when XDG_DATA_HOME is unset or
  not absolute (the XDG Base Directory rule).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["user_data_dir"]


def user_data_dir(
    platform: str = sys.platform, environ: Mapping[str, str] | None = None, *, local: bool = False
) -> Path:
    """This user's rldp data folder on ``platform`` (see the module docstring); not created here."""
    env = os.environ if environ is None else environ
    home = Path(env.get("HOME") or Path.home())
    if platform.startswith("win"):
        var, fallback = ("LOCALAPPDATA", "Local") if local else ("APPDATA", "Roaming")
        base = Path(env[var]) if env.get(var) else home / "AppData" / fallback
    elif platform == "darwin":
        base = home / "Library" / "Application Support"
    else:
        xdg = env.get("XDG_DATA_HOME", "")
        base = Path(xdg) if xdg and os.path.isabs(xdg) else home / ".local" / "share"
    return base / "rldp"
