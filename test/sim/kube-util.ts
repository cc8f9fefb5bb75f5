/**
 * Small value helpers shared by the simulated API server: JSON-ish cloning and comparison, the
 * timestamp formats Kubernetes uses, and the short hash the StatefulSet controller names revisions with.
 */
import { randomBytes } from 'node:crypto';

/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Whether `v` is a plain JSON object (not an array, not null). */
export function isObject(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A deep copy of a JSON value; `undefined` stays `undefined`. */
export function clone<T>(v: T): T {
  return v === undefined ? v : structuredClone(v);
}

/** Freezes a value and everything inside it, so stored objects cannot be changed by accident. */
export function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const child of Object.values(v)) deepFreeze(child);
  }
  return v;
}

/** JSON text with object keys sorted at every level, so equal values give equal text. */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(v, (_key, value: unknown) => {
    if (!isObject(value)) return value;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) sorted[k] = value[k];
    return sorted;
  });
}

/** Deep equality of JSON values, ignoring object key order. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** RFC 3339 with whole seconds, the form of `metadata.creationTimestamp` and condition times. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** 32-bit FNV-1a over the UTF-8 bytes of `text`. */
export function fnv32a(text: string): number {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** The alphabet of Kubernetes' `rand.SafeEncodeString`: no vowels, no confusable digits. */
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** Maps each character onto the safe alphabet, as Kubernetes does to turn a hash into a name suffix. */
export function safeEncode(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) out += SAFE_ALPHABET[text.charCodeAt(i) % SAFE_ALPHABET.length];
  return out;
}

/** A short, stable, name-safe hash of a JSON value (key order does not matter). */
export function shortHash(v: unknown): string {
  return safeEncode(String(fnv32a(canonicalJson(v))));
}

/** Five random name-safe characters, as `metadata.generateName` gets. */
export function randomSuffix(): string {
  return Array.from(randomBytes(5), (b) => SAFE_ALPHABET[b % SAFE_ALPHABET.length]).join('');
}
