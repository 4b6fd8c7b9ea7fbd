/**
 * Strings written into stream chunks: quoted without a call into the runtime in the common case,
 * and whether they are ASCII (then they can be written as latin1: the same bytes as UTF-8 without
 * measuring and encoding them a character at a time).
 */

/**
 * `JSON.stringify(text)` for a string: text with nothing to escape (no quote, backslash, control
 * character or lone surrogate half — almost every token) is quoted as it is, which gives the same
 * characters without a call into the runtime.
 */
export function quote(text: string): string {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return JSON.stringify(text);
  }
  return `"${text}"`;
}

/** No character above U+007F (a token is a few characters: a loop beats a regular expression's call). */
export function isAscii(text: string): boolean {
  for (let index = 0; index < text.length; index++) if (text.charCodeAt(index) > 0x7f) return false;
  return true;
}
