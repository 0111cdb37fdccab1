/**
 * Scanning JSON text without parsing it: the pieces the nesting check and the number check share.
 *
 * @module
 */

/** The code unit of `"`, which opens and closes every JSON string. */
export const QUOTE = 0x22
const BACKSLASH = 0x5c

/** The index of the quote that ends the string opened at `open` (one not escaped by an odd run of backslashes), or -1. */
export function closingQuote(text: string, open: number): number {
  let at = open
  for (;;) {
    // indexOf skips long strings far faster than a loop over their characters.
    at = text.indexOf('"', at + 1)
    if (at < 0) return -1
    let backslashes = 0
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++
    if (backslashes % 2 === 0) return at
  }
}
