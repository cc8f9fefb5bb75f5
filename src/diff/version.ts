/** Image versions: `vX.Y.Z` tags (with an optional `-pre.release`) compared as semantic versions. */
import { imageTag } from '../base/version';

export interface SemVer {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  /** Dot-separated pre-release identifiers; empty for a release. */
  readonly pre: readonly string[];
}

const SEMVER = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

/** The version an image tag names, or undefined for `latest`, `nightly`, digests and other tags. */
export function imageVersion(image: string): SemVer | undefined {
  if (image.includes('@')) return undefined;
  const m = SEMVER.exec(imageTag(image));
  if (!m) return undefined;
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), pre: m[4] ? m[4].split('.') : [] };
}

/** Negative when a < b, 0 when equal, positive when a > b (semver precedence; build metadata ignored). */
export function compareVersions(a: SemVer, b: SemVer): number {
  const core = a.major - b.major || a.minor - b.minor || a.patch - b.patch;
  if (core !== 0) return core;
  if (a.pre.length === 0 || b.pre.length === 0) return b.pre.length - a.pre.length;
  for (let i = 0; i < Math.min(a.pre.length, b.pre.length); i++) {
    const d = compareIdentifier(a.pre[i], b.pre[i]);
    if (d !== 0) return d;
  }
  return a.pre.length - b.pre.length;
}

function compareIdentifier(a: string, b: string): number {
  const na = /^\d+$/.test(a);
  const nb = /^\d+$/.test(b);
  if (na && nb) return Number(a) - Number(b);
  if (na !== nb) return na ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

export function formatVersion(v: SemVer): string {
  return `v${v.major}.${v.minor}.${v.patch}${v.pre.length > 0 ? `-${v.pre.join('.')}` : ''}`;
}
