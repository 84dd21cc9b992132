/**
 * Text safe to show, log and write to a CSV file (port of `rldp.shared.parameters.unsafe_character` /
 * `check_text`): no control (C0, DEL, C1), format (bidi marks, embeddings, overrides, isolates, zero-width
 * spaces), line or paragraph separator characters and no lone surrogates. The zero-width (non-)joiners
 * U+200C/U+200D are kept (Persian and Indic words, emoji sequences). A mechanism document's attribute names
 * and values are checked with it: they reach terminals, CSV exports and pages.
 */
import { FORMAT_NAMES } from "./format-names.js";

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** Whether a code point (one character of a string iterated with for…of) is refused in text: the controls
 * and lone surrogates (ranges that never change) and the format and separator characters of Unicode 14.0
 * ({@link FORMAT_NAMES}, frozen as the Python client's is: the verdict must not depend on the runtime's
 * Unicode version), the zero-width (non-)joiners excepted. */
export function unsafeCharacter(ch: string): boolean {
  const cp = ch.codePointAt(0) ?? 0;
  if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0xd800 && cp <= 0xdfff)) return true;
  return cp !== 0x200c && cp !== 0x200d && FORMAT_NAMES.has(cp);
}

/** `U+202E (RIGHT-TO-LEFT OVERRIDE)`: a code point and its name, as `rldp.shared.parameters.character_name` writes it. */
export function characterName(ch: string): string {
  const cp = ch.codePointAt(0) ?? 0;
  const hex = cp.toString(16).toUpperCase().padStart(4, "0");
  const control = cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
  const name = FORMAT_NAMES.get(cp) ?? (cp >= 0xd800 && cp <= 0xdfff ? "a lone surrogate" : control ? "a control character" : null);
  return name ? `U+${hex} (${name})` : `U+${hex}`;
}

/** The first refused character of `value` as a message (`<what> contains U+… at position i; …`), or null. */
export function unsafeText(value: string, what: string): string | null {
  if (PRINTABLE_ASCII.test(value)) return null; // the common case, one regular-expression pass
  let i = 0;
  for (const ch of value) {
    if (unsafeCharacter(ch)) {
      return `${what} contains ${characterName(ch)} at position ${i}; control, format, bidi and separator characters are not allowed`;
    }
    i++;
  }
  return null;
}
