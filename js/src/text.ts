/**
 * Text safe to show, log and write to a CSV file (port of `rldp.shared.parameters.unsafe_character` /
 * `check_text`): no control (C0, DEL, C1), format (bidi marks, embeddings, overrides, isolates, zero-width
 * spaces), line or paragraph separator characters and no lone surrogates. The zero-width (non-)joiners
 * U+200C/U+200D are kept (Persian and Indic words, emoji sequences). A mechanism document's attribute names
 * and values are checked with it: they reach terminals, CSV exports and pages.
 */
import { FORMAT_NAMES } from "./format-names.js";

const CONTROL = /^\p{Cc}$/u;
const UNSAFE = /(?![\u200c\u200d])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

/** Whether a code point (one character of a string iterated with for…of) is refused in text. */
export function unsafeCharacter(ch: string): boolean {
  return UNSAFE.test(ch);
}

/** `U+202E (RIGHT-TO-LEFT OVERRIDE)`: a code point and its name, as `rldp.shared.parameters.character_name` writes it. */
export function characterName(ch: string): string {
  const cp = ch.codePointAt(0) ?? 0;
  const hex = cp.toString(16).toUpperCase().padStart(4, "0");
  const name = FORMAT_NAMES.get(cp) ?? (cp >= 0xd800 && cp <= 0xdfff ? "a lone surrogate" : CONTROL.test(ch) ? "a control character" : null);
  return name ? `U+${hex} (${name})` : `U+${hex}`;
}

/** The first refused character of `value` as a message (`<what> contains U+… at position i; …`), or null. */
export function unsafeText(value: string, what: string): string | null {
  if (!UNSAFE.test(value)) return null;
  let i = 0;
  for (const ch of value) {
    if (UNSAFE.test(ch)) {
      return `${what} contains ${characterName(ch)} at position ${i}; control, format, bidi and separator characters are not allowed`;
    }
    i++;
  }
  return null;
}
