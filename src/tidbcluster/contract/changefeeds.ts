/**
 * The TiCDC changefeeds Git declares for a cluster (`Changefeed` documents), as the controller keeps
 * them through TiCDC's open API v2: created when missing (an existing one of the same id adopted),
 * updated the way TiCDC requires (paused, updated, resumed), paused and resumed as Git says, and
 * removed only when their document leaves Git with `deletionPolicy: Delete`. Part of the cluster JSON
 * (`ControllerClusterInfo.changefeeds`), with one parser (below) the controller and `diff` read it
 * with. Credentials are never in it: a Secret and its keys name them.
 */

/** Where a changefeed's sink credentials come from: keys of one Secret, added to the URI or the replica config at run time. */
export interface SinkCredentialsInfo {
  /** The Secret, in the cluster's namespace. */
  readonly secret: string;
  /** The key whose value is the URI's userinfo password (MySQL and TiDB sinks). @default none */
  readonly password?: string;
  /** Query parameters of the URI, each from a key (`sasl-password`, `secret-access-key`). @default none */
  readonly params?: Readonly<Record<string, string>>;
  /** Replica config fields, by their dotted path (`sink.kafka_config.sasl_password`), each from a key. @default none */
  readonly fields?: Readonly<Record<string, string>>;
}

/** One changefeed Git declares. */
export interface ChangefeedInfo {
  /** The document's `metadata.name`: the status, Events and its ConfigMap name the changefeed by it. */
  readonly document: string;
  /** The changefeed's id in TiCDC. */
  readonly id: string;
  /** The sink URI, without credentials. */
  readonly sinkUri: string;
  /** @default none */
  readonly credentials?: SinkCredentialsInfo;
  /** Where a new changefeed starts (a TSO, as decimal text); an existing one is never restarted. @default none (now) */
  readonly startTs?: string;
  /** Where it stops (a TSO, as decimal text). @default none (never) */
  readonly targetTs?: string;
  /** Git asks it paused. @default false */
  readonly paused?: boolean;
  /** TiCDC's `replica_config`, as the document writes it (snake_case keys). @default none (TiCDC's defaults) */
  readonly replicaConfig?: Readonly<Record<string, unknown>>;
  /** What the controller does once the document leaves Git: keep the changefeed, or remove it. @default 'Retain' */
  readonly deletionPolicy?: 'Retain' | 'Delete';
}

/** The changefeeds of a cluster and the TiCDC that runs them. */
export interface ChangefeedsInfo {
  /** tiflow's TiCDC, or the new architecture (pingcap/ticdc): the API's scope parameter differs. */
  readonly architecture: 'tiflow' | 'new';
  /** The changefeeds, sorted by id. */
  readonly feeds: readonly ChangefeedInfo[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown, optional = false) => (optional && v === undefined) || (typeof v === 'string' && v !== '');
const tso = (v: unknown) => v === undefined || (typeof v === 'string' && /^\d{1,20}$/.test(v));
const textMap = (v: unknown) => v === undefined || (isObject(v) && Object.values(v).every((x) => text(x)));

/** `changefeeds` of the cluster JSON, checked: the changefeeds, or an error naming what was expected. */
export function parseChangefeeds(raw: unknown): ChangefeedsInfo | undefined {
  if (raw === undefined) return undefined;
  if (!isObject(raw) || (raw.architecture !== 'tiflow' && raw.architecture !== 'new') || !Array.isArray(raw.feeds))
    throw new Error('TIDB_GITOPS_CLUSTER.changefeeds: expected {architecture (tiflow or new), feeds}');
  raw.feeds.forEach((f: unknown, i) => {
    const c = isObject(f) ? f.credentials : undefined;
    const ok =
      isObject(f) &&
      text(f.document) &&
      text(f.id) &&
      text(f.sinkUri) &&
      (c === undefined || (isObject(c) && text(c.secret) && text(c.password, true) && textMap(c.params) && textMap(c.fields))) &&
      tso(f.startTs) &&
      tso(f.targetTs) &&
      (f.paused === undefined || typeof f.paused === 'boolean') &&
      (f.replicaConfig === undefined || isObject(f.replicaConfig)) &&
      (f.deletionPolicy === undefined || f.deletionPolicy === 'Retain' || f.deletionPolicy === 'Delete');
    if (!ok)
      throw new Error(
        `TIDB_GITOPS_CLUSTER.changefeeds.feeds[${i}]: expected {document, id, sinkUri} and optionally credentials {secret, password, params, fields}, startTs and targetTs (decimal TSOs), paused, replicaConfig, deletionPolicy (Retain or Delete)`,
      );
  });
  return raw as unknown as ChangefeedsInfo;
}
