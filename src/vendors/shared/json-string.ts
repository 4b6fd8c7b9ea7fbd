/**
 * Strings the completions layer writes into JSON by hand (stream chunks, the non-stream answer):
 * whether they can go in as they are (no call into the runtime to quote them) and whether they are
 * ASCII (then they can be written as latin1: the same bytes as UTF-8 without measuring and encoding
 * them a character at a time), found in one scan.
 */

/** The text goes between quotes as it is, and is all ASCII. */
export const plainAscii = 0;
/** The text goes between quotes as it is, and has characters above U+007F (none a surrogate half). */
export const plainWide = 1;
/** The text needs `JSON.stringify`: a quote, a backslash, a control character or a surrogate half. */
export const escaped = 2;

/** Anything but the printable ASCII JSON writes as it is (all of U+0020–U+007F but the quote and the backslash). */
const notPlainAscii = /[^\x20\x21\x23-\x5b\x5d-\x7f]/;
const expressionFrom = 24;

/**
 * How a text goes into JSON (`plainAscii`, `plainWide` or `escaped`). Almost every token is plain;
 * for those, `"${text}"` is exactly what `JSON.stringify(text)` writes. Surrogate halves go through
 * `JSON.stringify` even when paired (it writes a lone one as an escape).
 */
export function textKind(text: string): number {
  // A long text (a whole non-stream answer) is first checked by a regular expression, ~13
  // instructions a character where the loop below takes ~35; a token's few characters stay with
  // the loop, which beats the expression's call below ~25 characters.
  if (text.length > expressionFrom && !notPlainAscii.test(text)) return plainAscii;
  let kind = plainAscii;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x22 || code === 0x5c) return escaped;
    if (code > 0x7f) {
      if (code >= 0xd800 && code <= 0xdfff) return escaped;
      kind = plainWide;
    }
  }
  return kind;
}

/** No character above U+007F (a token is a few characters: a loop beats a regular expression's call). */
export function isAscii(text: string): boolean {
  for (let index = 0; index < text.length; index++) if (text.charCodeAt(index) > 0x7f) return false;
  return true;
}
