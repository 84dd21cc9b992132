"""Ids by a unique prefix, one rule for every command and the SDK (rldp.client.ids): a unique prefix is the
full id, an ambiguous one is one line naming the candidates, an unknown or non-hex one says so."""

from __future__ import annotations

import pytest

from rldp.client.ids import full_mechanism_id, resolve_prefix
from rldp.shared.errors import ValidationError

IDS = ["ab" + "0" * 62, "ab" + "1" * 62, "cd" + "2" * 62]


def _resolve(given: str) -> str:
    return resolve_prefix(given, lambda: IDS, "mechanism", 64, "rldp mechanisms")


def test_a_unique_prefix_is_the_full_id() -> None:
    assert _resolve("cd") == IDS[2] and _resolve("AB0") == IDS[0] and _resolve(IDS[1]) == IDS[1]


def test_an_ambiguous_prefix_is_one_line_naming_the_candidates() -> None:
    with pytest.raises(ValidationError) as info:
        _resolve("ab")
    text = str(info.value)
    assert "\n" not in text and "'ab' is the prefix of 2 mechanism ids" in text
    assert IDS[0][:12] in text and IDS[1][:12] in text and "give more characters" in text


@pytest.mark.parametrize(("given", "needle"), [("ef", "no mechanism id starts with 'ef'"), ("xyz", "hexadecimal")])
def test_unknown_and_malformed_prefixes_say_so(given: str, needle: str) -> None:
    with pytest.raises(ValidationError, match=needle):
        _resolve(given)


def test_the_sdk_resolves_against_the_catalogue_unless_one_verified_id_matches() -> None:
    asked = []

    def catalogue() -> list[str]:
        asked.append(1)
        return IDS

    assert full_mechanism_id("ab1", [], catalogue) == IDS[1] and asked
    asked.clear()
    assert full_mechanism_id("ab0", [IDS[0]], catalogue) == IDS[0] and not asked  # verified: no request
