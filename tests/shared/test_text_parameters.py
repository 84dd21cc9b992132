"""Issue 35 D22: the one text validator (shared/parameters.check_text) every boundary uses for labels, names
and descriptions: no control, format, bidi or separator character, no lone surrogate; the message names
the parameter, the code point and its position."""

from __future__ import annotations

import copy
import hashlib

import numpy as np
import pytest

from rldp.shared.document import build_document, validate_document
from rldp.shared.document.canonical import UNHASHED, encode_canonical
from rldp.shared.errors import AlphabetError, DocumentError, ParameterError
from rldp.shared.parameters import check_text
from rldp.shared.records import Alphabet, Attribute

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


# -- a mechanism document's attribute names and values (the alphabet): the same rule, while reading


def _document_with(where: str, text: str) -> dict:
    """A valid document whose alphabet holds ``text``, correctly hashed (only its text can refuse it)."""
    alpha = Alphabet(Attribute("sex", ("Female", "Male")), [Attribute("race", ("Black", "White"))])
    doc = build_document(
        method="grr",
        matrix=np.full((4, 4), 0.25),
        alphabet=alpha,
        public_distribution=np.full((2, 2), 0.25),
        privacy={"notion": "ldp", "epsilon": 1.0},
    )
    doc = copy.deepcopy(doc)
    if where == "name":
        doc["released"][0]["name"] = f"ra{text}ce"
    else:
        doc["released"][0]["values"][1] = f"Wh{text}ite"
    body = {k: v for k, v in doc.items() if k not in UNHASHED}
    try:
        return {**doc, "id": hashlib.sha256(encode_canonical(body)).hexdigest()}
    except DocumentError:  # a lone surrogate: no UTF-8 form, no id
        return doc


@pytest.mark.parametrize(("char", "named"), [(c, n) for c, n in REFUSED.items() if c != "\ud800"])
@pytest.mark.parametrize("where", ["name", "value"])
def test_a_document_whose_alphabet_holds_an_unsafe_character_is_refused_naming_it(char, named, where):
    doc = _document_with(where, char)
    with pytest.raises(DocumentError) as caught:
        validate_document(doc)
    message = str(caught.value)
    what = "attribute name 'ra" if where == "name" else "attribute 'race': value 'Wh"
    assert message.startswith(f"sensitive/released: {what}"), message
    assert f"contains {named} at position 2;" in message, message
    assert char not in message  # the message quotes the text escaped
    with pytest.raises(AlphabetError, match=f"contains U\\+{ord(char):04X}"):  # built in code, too
        Attribute("race", ("Black", f"Wh{char}ite")) if where == "value" else Attribute(f"ra{char}ce", ("a",))


def test_a_document_whose_alphabet_holds_joiners_or_any_script_is_read():
    for text in ("\u200d", "\u200c", "\xa0", "é", "中文", "👩\u200d💻"):
        for where in ("name", "value"):
            assert validate_document(_document_with(where, text))["released"][0]


def test_a_lone_surrogate_anywhere_in_a_document_is_a_document_error():
    doc = {**_document_with("value", "x"), "method": "grr\ud800"}
    with pytest.raises(DocumentError, match="lone surrogate U\\+D800"):
        validate_document(doc)
    with pytest.raises(DocumentError, match="U\\+DC00 \\(a lone surrogate\\)"):
        validate_document(_document_with("value", "\udc00"))


def test_the_format_characters_are_unicode_14s_frozen_whatever_the_interpreter():
    """The refused format and separator characters are a frozen table (so the Python client on 3.12+, with a newer
    Unicode, and the TypeScript SDK refuse exactly what 3.11 does); on Unicode 14.0 it is unicodedata's own set."""
    import unicodedata

    from rldp.shared.format_characters import FORMAT_CHARACTERS, UNICODE_VERSION
    from rldp.shared.parameters import unsafe_character

    if unicodedata.unidata_version == UNICODE_VERSION:
        live = {
            cp: unicodedata.name(chr(cp))
            for cp in range(0x110000)
            if unicodedata.category(chr(cp)) in {"Cf", "Zl", "Zp"}
        }
        assert live == FORMAT_CHARACTERS
    assert not unsafe_character(chr(0x13439))  # a format character of Unicode 15.0: not in the table, accepted
    assert unsafe_character("\u202e") and not unsafe_character("\u200d")
