/**
 * Component versions for feature checks, read from the image tag as the operator reads them: the text
 * after the last `:` (`latest` when there is none). `latest`, `nightly`, `master` and their `-suffix`
 * forms count as newer than every release; pre-release suffixes are ignored.
 */

const NEWEST = /^(latest|nightly|master)(-.*)?$/;
const SEMVER = /^v?(\d+)\.(\d+)\.(\d+)/;

export function imageTag(image: string): string {
  // A digest (`repo:tag@sha256:…`) pins the image; the tag is what stands before it.
  const name = image.split('@')[0];
  const slash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  return colon > slash ? name.slice(colon + 1) : 'latest';
}

/**
 * True when the image's version is a release below `version` (`x.y.z`). Tags that are neither a
 * release nor a newest-alias are not below anything, so version-gated legacy behaviour stays off.
 */
export function imageVersionBelow(image: string, version: string): boolean {
  return tagVersionAtLeast(imageTag(image), version) === false;
}

/**
 * Whether a version tag is at least `min`, as tidb-operator's version constraints judge it
 * (`pkg/util/cmpver` `Check`): the newest-aliases and their `-suffix` forms pass, a pre-release suffix
 * is ignored, and a tag that is no version gives undefined (the operator's check then fails, and the
 * feature stays off).
 */
export function tagVersionAtLeast(tag: string, min: string): boolean | undefined {
  if (NEWEST.test(tag)) return true;
  const have = SEMVER.exec(tag);
  const want = SEMVER.exec(min);
  if (!have || !want) return undefined;
  for (let i = 1; i <= 3; i++) {
    const d = Number(have[i]) - Number(want[i]);
    if (d !== 0) return d > 0;
  }
  return true;
}

/** {@link tagVersionAtLeast} of the image's tag. */
export function imageVersionAtLeast(image: string, version: string): boolean | undefined {
  return tagVersionAtLeast(imageTag(image), version);
}
