/**
 * The APIs the target cluster serves, when the render is told: the list `kubectl api-versions` prints,
 * and what Argo CD passes to config-management plugins as `KUBE_API_VERSIONS` (comma-separated
 * `group/version` entries, and `group/version/Kind` entries beside them). Optional integrations (the
 * Prometheus Operator's kinds) render only where their API is served; when nobody says, nothing is
 * assumed either way. Pure functions.
 */

/** Whether the target serves an API: known to, known not to, or not told. */
export type ApiAvailability = 'served' | 'missing' | 'unknown';

/** One segment of an entry: a group, a version or a Kind (DNS names and CamelCase, no spaces). */
const SEGMENT = /^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/;

const ENTRY_FORM = 'expected group/version (apps/v1, monitoring.coreos.com/v1) or v1, each optionally followed by /Kind';

/** A Kind starts with a capital letter; groups and versions are lowercase DNS names. */
const isKind = (segment: string) => /^[A-Z]/.test(segment);

/** Why a list of served APIs is refused; `index` is the bad item's, when it was given as a list. */
export interface ApiVersionsError {
  readonly error: string;
  /** @default none (the whole value) */
  readonly index?: number;
}

/** The entries of a list given as text (comma-separated, as Argo CD passes it) or as a YAML list, with their list index. */
function entriesOf(value: unknown): { entry: string; index?: number }[] | ApiVersionsError {
  if (typeof value === 'string')
    return value
      .split(',')
      .map((e) => ({ entry: e.trim() }))
      .filter((e) => e.entry !== '');
  if (!Array.isArray(value))
    return { error: `expected a list of API versions (or one comma-separated string), got ${JSON.stringify(value)}` };
  const out: { entry: string; index: number }[] = [];
  for (const [index, item] of value.entries()) {
    if (typeof item !== 'string') return { error: `expected an API version such as apps/v1, got ${JSON.stringify(item)}`, index };
    if (item.trim() !== '') out.push({ entry: item.trim(), index });
  }
  return out;
}

/**
 * The served APIs of a setting, sorted and without repeats, or why it is not such a list. A list
 * that does not name `v1` is refused: every cluster serves it, so such a list is not the whole of
 * what the cluster serves (only the APIs asked about, perhaps), and reading it as whole would leave
 * out whatever it forgot.
 */
export function parseApiVersions(value: unknown): { list: string[] } | ApiVersionsError {
  const given = entriesOf(value);
  if ('error' in given) return given;
  for (const { entry, index } of given) {
    const segments = entry.split('/');
    const kinds = segments.filter(isKind).length;
    const shapeOk =
      segments.length <= 3 &&
      segments.every((s) => SEGMENT.test(s)) &&
      kinds <= 1 &&
      (kinds === 0 || isKind(segments[segments.length - 1])) &&
      segments.length - kinds >= 1;
    if (!shapeOk) return { error: `${JSON.stringify(entry)} is not an API version: ${ENTRY_FORM}`, ...(index !== undefined && { index }) };
  }
  const entries = given.map((e) => e.entry);
  if (entries.length === 0) return { error: 'expected the API versions the cluster serves, got none' };
  if (!entries.includes('v1')) {
    return {
      error:
        'expected every API version the cluster serves (as `kubectl api-versions` prints them), which always includes v1; list them all, not only the ones you add',
    };
  }
  return { list: [...new Set(entries)].sort() };
}

/**
 * Whether `groupVersion` (`monitoring.coreos.com/v1`) is served, and, given `kind`, that kind in it.
 * A list naming kinds for a group version (as Argo CD's does) must name this kind; one naming none
 * counts the whole group version.
 */
export function apiAvailability(served: readonly string[] | undefined, groupVersion: string, kind?: string): ApiAvailability {
  if (served === undefined) return 'unknown';
  const kinds = served.filter((e) => e.startsWith(`${groupVersion}/`));
  if (!served.includes(groupVersion) && kinds.length === 0) return 'missing';
  if (kind === undefined || kinds.length === 0) return 'served';
  return kinds.includes(`${groupVersion}/${kind}`) ? 'served' : 'missing';
}
