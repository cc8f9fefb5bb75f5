/**
 * Container image references as the kubelet reads them before pulling (it parses `image` with the
 * distribution project's `reference.ParseNormalizedNamed`, and a Pod whose image does not parse
 * waits in `InvalidImageName`): `[registry[:port]/]path[:tag][@digest]`, the path's components in
 * lowercase letters and digits joined by `.`, `_`, `__` or dashes, a tag of at most 128 word
 * characters, `.` and `-` not starting with either, a digest as `algorithm:hex`.
 */

const DOMAIN_COMPONENT = /^([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9])$/;
const PORT = /^\d+$/;
const PATH_COMPONENT = /^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*$/;
const TAG = /^\w[\w.-]{0,127}$/;
const DIGEST = /^[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$/;
/** Hex digits of the digests whose algorithm fixes them. */
const DIGEST_LENGTH: Readonly<Record<string, number>> = { sha256: 64, sha384: 96, sha512: 128 };
/** The longest repository name (registry and path) the kubelet takes. */
const MAX_NAME = 255;

/** Why the kubelet could not read `image`, or undefined when it can (also when it is unset or empty). */
export function imageReferenceProblem(image: string | undefined): string | undefined {
  if (image === undefined || image === '') return undefined;
  const shown = JSON.stringify(image);
  if (/\s/.test(image)) return `${shown} contains white space, which no image reference has`;
  const at = image.indexOf('@');
  const named = at < 0 ? image : image.slice(0, at);
  if (at >= 0) {
    const digest = image.slice(at + 1);
    const algorithm = digest.split(':')[0];
    if (
      !DIGEST.test(digest) ||
      (DIGEST_LENGTH[algorithm] !== undefined && digest.length - algorithm.length - 1 !== DIGEST_LENGTH[algorithm])
    ) {
      return `${shown} has the digest ${JSON.stringify(digest)}: expected algorithm:hex, such as sha256: and 64 hexadecimal digits`;
    }
  }
  const colon = named.lastIndexOf(':');
  const tagged = colon > named.lastIndexOf('/');
  const name = tagged ? named.slice(0, colon) : named;
  if (tagged && !TAG.test(named.slice(colon + 1))) {
    return `${shown} has the tag ${JSON.stringify(named.slice(colon + 1))}: a tag is at most 128 letters, digits, "_", "." and "-", not starting with "." or "-"`;
  }
  if (name === '') return `${shown} names no repository`;
  if (name.length > MAX_NAME) return `${shown} has a repository name longer than ${MAX_NAME} characters`;
  const parts = name.split('/');
  // The first part is a registry when it has a "." or ":" or is localhost, as the kubelet decides.
  const registry = parts.length > 1 && (/[.:]/.test(parts[0]) || parts[0] === 'localhost') ? parts.shift()! : undefined;
  if (registry !== undefined) {
    const [host, port, ...more] = registry.split(':');
    if (more.length > 0 || !host.split('.').every((c) => DOMAIN_COMPONENT.test(c)) || (port !== undefined && !PORT.test(port))) {
      return `${shown} has the registry ${JSON.stringify(registry)}: expected a host name with an optional :port, such as registry.example.com:5000`;
    }
  }
  for (const part of parts) {
    if (PATH_COMPONENT.test(part)) continue;
    if (PATH_COMPONENT.test(part.toLowerCase()))
      return `${shown} has upper case in ${JSON.stringify(part)}: repository names are lowercase (the kubelet refuses the image, or reads such a first part as a registry it cannot reach)`;
    return `${shown} has ${JSON.stringify(part)} in its repository name: expected lowercase letters and digits, joined by ".", "_", "__" or "-"`;
  }
  return undefined;
}
