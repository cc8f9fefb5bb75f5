/**
 * JSON from Go servers, read without losing 64-bit integers. PD writes member and cluster ids as
 * bare uint64 numbers (`"member_id": 10276657743932975437`), which `JSON.parse` rounds to the nearest
 * double: a member deleted by such an id does not exist, and PD answers 500. Here every integer
 * literal that a double cannot hold exactly is read as its decimal string instead.
 */

/** Like `JSON.parse`, but integers beyond ±2^53 become decimal strings. */
export function parseJsonExact(text: string): unknown {
  return JSON.parse(quoteLargeIntegers(text));
}

/** Puts quotes around integer literals outside strings that are not safe integers. */
export function quoteLargeIntegers(text: string): string {
  let out = '';
  let from = 0;
  let i = 0;
  while (i < text.length) {
    const ch = text.charCodeAt(i);
    if (ch === 0x22 /* " */) {
      i++;
      while (i < text.length && text.charCodeAt(i) !== 0x22) i += text.charCodeAt(i) === 0x5c /* \ */ ? 2 : 1;
      i++;
      continue;
    }
    if (ch === 0x2d /* - */ || (ch >= 0x30 && ch <= 0x39)) {
      const start = i;
      i++;
      while (i < text.length && /[0-9.eE+-]/.test(text[i])) i++;
      const literal = text.slice(start, i);
      if (/^-?\d+$/.test(literal) && !Number.isSafeInteger(Number(literal))) {
        out += `${text.slice(from, start)}"${literal}"`;
        from = i;
      }
      continue;
    }
    i++;
  }
  return from === 0 ? text : out + text.slice(from);
}
