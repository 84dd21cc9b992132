"""Session fixtures (constants live in helpers.py)."""

from __future__ import annotations

import gzip
import os as _os
from pathlib import Path

import pytest
from helpers import ADULT_COLUMNS, adult_path
from hypothesis import settings as _settings


@pytest.fixture(scope="session")
def adult_csv(tmp_path_factory) -> Path:
    """adult.data with a header row, as a plain CSV (the CLI's input format)."""
    src = adult_path()
    out = tmp_path_factory.mktemp("adult") / "adult.csv"
    with gzip.open(src, "rt") as fin, open(out, "w") as fout:
        fout.write(",".join(ADULT_COLUMNS) + "\n")
        for line in fin:
            if line.strip():
                fout.write(line)
    return out


@pytest.fixture(scope="session", autouse=True)
def _user_data_folder(tmp_path_factory):
    """The clients' default state file (rldp.client.defaults) in a temporary folder, never the tester's own."""
    old = _os.environ.get("XDG_DATA_HOME")
    _os.environ["XDG_DATA_HOME"] = str(tmp_path_factory.mktemp("user-data"))
    yield
    if old is None:
        _os.environ.pop("XDG_DATA_HOME", None)
    else:
        _os.environ["XDG_DATA_HOME"] = old


# Property tests draw the same examples on every run (reproducible CI); set
# RLDP_HYPOTHESIS_EXPLORE=1 to explore new examples locally.
_settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
_settings.register_profile("explore", print_blob=True)
_settings.load_profile("explore" if _os.environ.get("RLDP_HYPOTHESIS_EXPLORE") else "ci")
