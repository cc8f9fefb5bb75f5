/**
 * The resource groups Git declares for a cluster (`ResourceGroup` documents), as the controller keeps
 * them: created when missing, altered to match, dropped only when their document leaves Git with
 * `deletionPolicy: Delete`. Part of the cluster JSON (`ControllerClusterInfo.sql.resourceGroups`), with
 * one encoder (the render's link step writes it) and one parser (below), which the controller and
 * `diff` read it back with.
 */

/** A runaway-query rule (`QUERY_LIMIT`): what a query may take before TiDB acts on it. TiDB v7.2 and later. */
export interface RunawayRuleInfo {
  /** `EXEC_ELAPSED`, in milliseconds. */
  readonly execElapsedMs: number;
  /** `ACTION`. */
  readonly action: 'DRYRUN' | 'COOLDOWN' | 'KILL';
  /** `WATCH`: queries like a runaway one are marked at once for a while (TiDB v7.3 and later). @default none */
  readonly watch?: {
    readonly type: 'EXACT' | 'SIMILAR' | 'PLAN';
    /** `DURATION`, in milliseconds. @default none: UNLIMITED */
    readonly durationMs?: number;
  };
}

/** One resource group Git declares. */
export interface ResourceGroupInfo {
  /** The document's `metadata.name`: the status and Events name the group by it. */
  readonly document: string;
  /** The group's name in the database, in lower case (TiDB compares them so). */
  readonly name: string;
  /** `RU_PER_SEC`. */
  readonly ruPerSecond: number;
  /** `PRIORITY`. @default 'MEDIUM' */
  readonly priority?: 'LOW' | 'MEDIUM' | 'HIGH';
  /** `BURSTABLE`: the group may use RUs beyond its quota while the cluster has them. @default false */
  readonly burstable?: boolean;
  /** `QUERY_LIMIT`. @default none */
  readonly queryLimit?: RunawayRuleInfo;
  /** What the controller does once the document leaves Git: keep the group, or drop it. @default 'Retain' */
  readonly deletionPolicy?: 'Retain' | 'Delete';
  /** A managed group changed by hand: `report` it, or `correct` it back to Git. @default 'report' */
  readonly drift?: 'report' | 'correct';
}

/** The group every session is in unless told otherwise: it can be altered, never dropped, never listed as unmanaged. */
export const DEFAULT_RESOURCE_GROUP = 'default';

/** The priorities, lowest first. */
export const PRIORITIES = ['LOW', 'MEDIUM', 'HIGH'] as const;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const positive = (v: unknown, optional = false) => (optional && v === undefined) || (Number.isSafeInteger(v) && (v as number) > 0);
const oneOf = (v: unknown, values: readonly string[], optional = true) => (optional && v === undefined) || values.includes(v as string);

/** `sql.resourceGroups` of the cluster JSON, checked: the groups, or an error naming what was expected. */
export function parseResourceGroups(raw: unknown): readonly ResourceGroupInfo[] | undefined {
  if (raw === undefined) return undefined;
  const expected =
    'expected {document, name (lower case), ruPerSecond (a positive integer)} and optionally priority (LOW, MEDIUM or HIGH), burstable, queryLimit {execElapsedMs, action (DRYRUN, COOLDOWN or KILL), watch {type (EXACT, SIMILAR or PLAN), durationMs}}, deletionPolicy (Retain or Delete), drift (report or correct)';
  if (!Array.isArray(raw)) throw new Error(`TIDB_GITOPS_CLUSTER.sql.resourceGroups: ${expected}`);
  raw.forEach((g: unknown, i) => {
    const limit = isObject(g) ? g.queryLimit : undefined;
    const watch = isObject(limit) ? limit.watch : undefined;
    const ok =
      isObject(g) &&
      typeof g.document === 'string' &&
      g.document !== '' &&
      typeof g.name === 'string' &&
      g.name !== '' &&
      g.name === g.name.toLowerCase() &&
      positive(g.ruPerSecond) &&
      oneOf(g.priority, PRIORITIES) &&
      (g.burstable === undefined || typeof g.burstable === 'boolean') &&
      (limit === undefined ||
        (isObject(limit) &&
          positive(limit.execElapsedMs) &&
          oneOf(limit.action, ['DRYRUN', 'COOLDOWN', 'KILL'], false) &&
          (watch === undefined ||
            (isObject(watch) && oneOf(watch.type, ['EXACT', 'SIMILAR', 'PLAN'], false) && positive(watch.durationMs, true))))) &&
      oneOf(g.deletionPolicy, ['Retain', 'Delete']) &&
      oneOf(g.drift, ['report', 'correct']);
    if (!ok) throw new Error(`TIDB_GITOPS_CLUSTER.sql.resourceGroups[${i}]: ${expected}`);
  });
  return raw as ResourceGroupInfo[];
}
