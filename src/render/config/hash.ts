/**
 * ConfigMap name suffix for `configUpdateStrategy: RollingUpdate`
 * (reference §1.7): the operator hashes Go's `encoding/json` output for the
 * ConfigMap's `data` map, so we must reproduce that serialisation exactly.
 */
import { createHash } from 'node:crypto';

/** Go escapes these even inside strings so JSON can be embedded in HTML/JS. */
const GO_EXTRA_ESCAPES = /[<>&\u2028\u2029]/g;

/** Unpaired UTF-16 surrogates (the regex works on code units: no `u` flag). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * A lone surrogate cannot be written as UTF-8; Node writes it as U+FFFD, so
 * that is the character the operator would see (and hash) in the manifest.
 */
function toWellFormed(s: string): string {
  return s.replace(LONE_SURROGATE, '\uFFFD');
}

/**
 * Go's string encoding: JSON.stringify already matches it for quotes,
 * backslashes, \b \f \n \r \t and other control characters (\u00xx,
 * lowercase hex); Go additionally escapes < > & U+2028 U+2029.
 */
function goJsonString(s: string): string {
  return JSON.stringify(toWellFormed(s)).replace(GO_EXTRA_ESCAPES, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Go sorts map keys by their UTF-8 bytes, which differs from JavaScript's UTF-16 order above U+FFFF. */
function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** Go encoding/json (HTML-safe) serialisation of a string map, keys sorted. */
export function goJsonStringMap(data: Record<string, string>): string {
  const entries = Object.keys(data).map((key) => {
    const value = data[key];
    if (typeof value !== 'string') throw new TypeError(`ConfigMap data "${key}" must be a string, got ${typeof value}`);
    return [toWellFormed(key), value] as const;
  });
  entries.sort(([a], [b]) => compareUtf8(a, b));
  return `{${entries.map(([key, value]) => `${goJsonString(key)}:${goJsonString(value)}`).join(',')}}`;
}

/** First 7 hex chars of sha256(goJsonStringMap(data)). */
export function configMapHash(data: Record<string, string>): string {
  return createHash('sha256').update(goJsonStringMap(data), 'utf8').digest('hex').slice(0, 7);
}
