"""Issue 35 D22: the one text validator (shared/parameters.check_text) every boundary uses for labels, names
and descriptions: no control, format, bidi or separator character, no lone surrogate; the message names
the parameter, the code point and its position."""

from __future__ import annotations

import pytest

from rldp.shared.errors import ParameterError
from rldp.shared.parameters import check_text

REFUSED = {
    "\x00": "U+0000 (a control character)",
    "\x1b": "U+001B (a control character)",
    "\r": "U+000D (a control character)",
    "\x7f": "U+007F (a control character)",
    "\x85": "U+0085 (a control character)",
    "\x9b": "U+009B (a control character)",
    "\u200e": "U+200E (LEFT-TO-RIGHT MARK)",
    "\u200f": "U+200F (RIGHT-TO-LEFT MARK)",
    "\u061c": "U+061C (ARABIC LETTER MARK)",
    "\u202a": "U+202A (LEFT-TO-RIGHT EMBEDDING)",
    "\u202e": "U+202E (RIGHT-TO-LEFT OVERRIDE)",
    "\u2066": "U+2066 (LEFT-TO-RIGHT ISOLATE)",
    "\u2069": "U+2069 (POP DIRECTIONAL ISOLATE)",
    "\u2028": "U+2028 (LINE SEPARATOR)",
    "\u2029": "U+2029 (PARAGRAPH SEPARATOR)",
    "\u200b": "U+200B (ZERO WIDTH SPACE)",
    "\ufeff": "U+FEFF (ZERO WIDTH NO-BREAK SPACE)",
    "\ud800": "U+D800 (a lone surrogate)",
    "\U000e0001": "U+E0001 (LANGUAGE TAG)",
}


@pytest.mark.parametrize(("char", "named"), REFUSED.items())
@pytest.mark.parametrize("multiline", [False, True])
def test_every_unsafe_character_is_refused_by_name_and_position(char, named, multiline):
    with pytest.raises(ParameterError) as caught:
        check_text(f"abc{char}def", "description", multiline=multiline)
    message = str(caught.value)
    assert message.startswith(f"description contains {named} at position 3;"), message
    assert caught.value.parameter == "description"


def test_line_breaks_only_in_multiline_text_and_blank_only_when_asked():
    assert check_text("a\n\tb", "description", multiline=True) == "a\n\tb"
    for char in "\n\t":
        with pytest.raises(ParameterError, match=f"U\\+{ord(char):04X}"):
            check_text(f"a{char}b", "label")
    assert check_text("", "description", blank=True) == ""
    with pytest.raises(ParameterError, match="non-empty text"):
        check_text(" ", "label")


def test_printable_text_of_any_script_passes():
    for text in ("Sign-ups by region, 2026", "Ünïcode ✓", "العربية", "日本語", "👩\u200d💻 dev", "می\u200cخواهم"):
        assert check_text(text, "label") == text
