/**
 * Text safe to show, log and write to a CSV file (port of `rldp.shared.parameters.unsafe_character` /
 * `check_text`): no control (C0, DEL, C1), format (bidi marks, embeddings, overrides, isolates, zero-width
 * spaces), line or paragraph separator characters and no lone surrogates. The zero-width (non-)joiners
 * U+200C/U+200D are kept (Persian and Indic words, emoji sequences). A mechanism document's attribute names
 * and values are checked with it: they reach terminals, CSV exports and pages.
 */

const UNSAFE = /(?![\u200c\u200d])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;
const UNSAFE_ALL = /(?![\u200c\u200d])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

/** Names of the characters most often met (messages only; Python's names them all). */
const NAMES: Record<number, string> = {
  0x00: "a control character",
  0x0a: "a control character",
  0x0d: "a control character",
  0x1b: "a control character",
  0x85: "a control character",
  0x061c: "ARABIC LETTER MARK",
  0x200e: "LEFT-TO-RIGHT MARK",
  0x200f: "RIGHT-TO-LEFT MARK",
  0x2028: "LINE SEPARATOR",
  0x2029: "PARAGRAPH SEPARATOR",
  0x202a: "LEFT-TO-RIGHT EMBEDDING",
  0x202b: "RIGHT-TO-LEFT EMBEDDING",
  0x202c: "POP DIRECTIONAL FORMATTING",
  0x202d: "LEFT-TO-RIGHT OVERRIDE",
  0x202e: "RIGHT-TO-LEFT OVERRIDE",
  0x2066: "LEFT-TO-RIGHT ISOLATE",
  0x2067: "RIGHT-TO-LEFT ISOLATE",
  0x2068: "FIRST STRONG ISOLATE",
  0x2069: "POP DIRECTIONAL ISOLATE",
};

/** Whether a code point (one character of a string iterated with for…of) is refused in text. */
export function unsafeCharacter(ch: string): boolean {
  return UNSAFE.test(ch);
}

/** `U+202E (RIGHT-TO-LEFT OVERRIDE)`: a code point and, when known, its name (messages only). */
export function characterName(ch: string): string {
  const cp = ch.codePointAt(0) ?? 0;
  const hex = cp.toString(16).toUpperCase().padStart(4, "0");
  const name = NAMES[cp] ?? (cp < 0x20 || (cp >= 0x7f && cp < 0xa0) ? "a control character" : null);
  return name ? `U+${hex} (${name})` : `U+${hex}`;
}

/** `text` with every refused character written as a `\uXXXX` escape (to quote it in a message). */
export function escapeUnsafe(text: string): string {
  return text.replace(UNSAFE_ALL, (ch) => `\\u${(ch.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`);
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
