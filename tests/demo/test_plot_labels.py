"""Legends name methods and cite papers by keys a reader can look up in docs/references.md."""

from __future__ import annotations

import re
from pathlib import Path

from rldp.demo.plots import METHOD_STYLES

REFERENCES = Path(__file__).resolve().parents[2] / "docs" / "references.md"


def test_every_legend_label_cites_known_keys():
    keys = set(re.findall(r"^\| \[(\w+)\]", REFERENCES.read_text(encoding="utf-8"), re.M))
    assert {"LZG24", "LZG21"} <= keys
    for method, (label, *_rest) in METHOD_STYLES.items():
        assert not re.search(r"(?i)\bseed\b|\bpaper \d", label), label
        cited = re.findall(r"\[(\w+),", label)
        assert set(cited) <= keys, (method, label)
        assert label[0].isupper(), label  # starts with the method's name
