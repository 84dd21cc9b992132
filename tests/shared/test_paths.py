"""The per-user data folder (shared by the client's state file and the aggregator's default store)."""

from __future__ import annotations

from pathlib import Path

from rldp.shared.paths import user_data_dir


def test_platform_rules():
    env = {"HOME": "/home/u"}
    assert user_data_dir("linux", env) == Path("/home/u/.local/share/rldp")
    assert user_data_dir("linux", {**env, "XDG_DATA_HOME": "/data"}) == Path("/data/rldp")
    assert user_data_dir("linux", {**env, "XDG_DATA_HOME": "relative"}) == Path("/home/u/.local/share/rldp")
    assert user_data_dir("darwin", env) == Path("/home/u/Library/Application Support/rldp")
    win = {"HOME": "C:/Users/u", "APPDATA": "C:/R", "LOCALAPPDATA": "C:/L"}
    assert user_data_dir("win32", win) == Path("C:/R/rldp")
    assert user_data_dir("win32", win, local=True) == Path("C:/L/rldp")
    assert user_data_dir("win32", {"HOME": "C:/Users/u"}, local=True) == Path("C:/Users/u/AppData/Local/rldp")
