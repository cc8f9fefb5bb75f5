/**
 * The inputs of what lives in a cluster's database (apiVersion `tidb-gitops.io/v1alpha1`), the
 * project's own kinds declared beside the TidbCluster: `SqlUser` and `SqlRole` (an account, its roles
 * and its grants), `ResourceGroup`, and `Changefeed` (a TiCDC changefeed). `schema.ts` decides what
 * an account is, `read.ts`, `resource-groups.ts` and `changefeeds.ts` read them, `link.ts` ties them
 * to their cluster.
 */
import type { ChangefeedInfo, ResourceGroupInfo, SqlAccountInfo } from '../tidbcluster/contract';

/** The apiVersion of the project's own kinds. */
export const DATABASE_API_VERSION = 'tidb-gitops.io/v1alpha1';
export const SQL_USER_KIND = 'SqlUser';
export const SQL_ROLE_KIND = 'SqlRole';
export const RESOURCE_GROUP_KIND = 'ResourceGroup';
export const CHANGEFEED_KIND = 'Changefeed';

/** One `GRANT` as the document writes it. */
export interface SqlGrant {
  /** Privilege names, any case: `SELECT`, `CREATE USER`, `ALL PRIVILEGES`, `BACKUP_ADMIN`. */
  privileges: string[];
  /**
   * What `GRANT ... ON` names: `*.*`, `db.*` or `db.table`; backquotes quote a name with odd
   * characters (`` `my-db`.* ``). Not called `on`: YAML 1.1 readers (kubectl's among them) read that key as `true`.
   */
  level: string;
  /** @default false */
  withGrantOption?: boolean;
}

/** A role granted to the account. */
export interface SqlRoleRef {
  name: string;
  /** @default '%' */
  host?: string;
}

/** What an SqlRole and an SqlUser both say. */
export interface SqlAccountSpec {
  /** The TidbCluster whose database holds the account. */
  cluster: {
    name: string;
    /** @default the document's namespace */
    namespace?: string;
  };
  /** The account's name in the database. @default metadata.name */
  user?: string;
  /** MySQL's host pattern. @default '%' */
  host?: string;
  /** @default [] */
  roles?: SqlRoleRef[];
  /** @default [] */
  grants?: SqlGrant[];
  /** Once the document leaves Git: keep the account, or drop it. @default 'Retain' */
  deletionPolicy?: 'Retain' | 'Delete';
  /** A managed account changed by hand: report it, or correct it back to Git. @default 'report' */
  drift?: 'report' | 'correct';
}

/** The SqlUser's own fields. */
export interface SqlUserSpec extends SqlAccountSpec {
  /** The Secret and key holding the password; the controller reads it, never writes it. */
  passwordSecret: { name: string; key: string };
  /** @default 'NONE' */
  require?: 'NONE' | 'SSL' | 'X509';
  /** TiDB v7.1 and later. @default none (the server's default group) */
  resourceGroup?: string;
  /** @default false */
  locked?: boolean;
}

/** An `SqlUser` or `SqlRole` document. */
export interface SqlAccountDocument {
  apiVersion: typeof DATABASE_API_VERSION;
  kind: typeof SQL_USER_KIND | typeof SQL_ROLE_KIND;
  metadata: {
    name: string;
    /** @default the `--namespace` of `render`, else the cluster's */
    namespace?: string;
  };
  spec: SqlUserSpec | SqlAccountSpec;
}

/** An SqlUser or SqlRole as read: the account as the controller keeps it, and the cluster it names. */
export interface ResolvedSqlAccount {
  readonly kind: typeof SQL_USER_KIND | typeof SQL_ROLE_KIND;
  /** The document's `metadata.name`. */
  readonly name: string;
  /** @default none (the cluster's) */
  readonly namespace?: string;
  readonly cluster: {
    readonly name: string;
    /** @default the document's namespace */
    readonly namespace?: string;
  };
  /** `spec.user` was written (the only way to name `root`). */
  readonly userGiven: boolean;
  /** `spec.roles` as written, defaults applied: the index of each is its place in the document. */
  readonly writtenRoles: readonly { readonly user: string; readonly host: string }[];
  /** The account, defaults omitted, lists sorted. */
  readonly account: SqlAccountInfo;
}

/** A runaway-query rule as the document writes it (`QUERY_LIMIT`). */
export interface RunawayRule {
  /** How long a query may run before it counts as runaway: a duration, `60s`, `5m`, `1h30m`. */
  execElapsed: string;
  /** What TiDB does with a runaway query. */
  action: 'DRYRUN' | 'COOLDOWN' | 'KILL';
  /** Mark queries like it as runaway at once, for a while (TiDB v7.3 and later). @default none */
  watch?: {
    /** How queries are matched: the same text, the same digest, the same plan. */
    type: 'EXACT' | 'SIMILAR' | 'PLAN';
    /** How long the mark lasts. @default none (UNLIMITED) */
    duration?: string;
  };
}

/** A `ResourceGroup`'s spec. */
export interface ResourceGroupSpec {
  /** The TidbCluster whose database holds the group. */
  cluster: {
    name: string;
    /** @default the document's namespace */
    namespace?: string;
  };
  /** The group's name in the database. @default metadata.name, with '-' as '_' */
  name?: string;
  /** Request units per second: the group's quota. */
  ruPerSecond: number;
  /** @default 'MEDIUM' */
  priority?: 'LOW' | 'MEDIUM' | 'HIGH';
  /** May use RUs beyond its quota while the cluster has them. @default false */
  burstable?: boolean;
  /** Runaway queries (TiDB v7.2 and later). @default none */
  queryLimit?: RunawayRule;
  /** Once the document leaves Git: keep the group, or drop it. @default 'Retain' */
  deletionPolicy?: 'Retain' | 'Delete';
  /** A managed group changed by hand: report it, or correct it back to Git. @default 'report' */
  drift?: 'report' | 'correct';
}

/** A `ResourceGroup` document. */
export interface ResourceGroupDocument {
  apiVersion: typeof DATABASE_API_VERSION;
  kind: typeof RESOURCE_GROUP_KIND;
  metadata: {
    name: string;
    /** @default the `--namespace` of `render`, else the cluster's */
    namespace?: string;
  };
  spec: ResourceGroupSpec;
}

/** A ResourceGroup as read: the group as the controller keeps it, and the cluster it names. */
export interface ResolvedResourceGroup {
  readonly kind: typeof RESOURCE_GROUP_KIND;
  /** The document's `metadata.name`. */
  readonly name: string;
  /** @default none (the cluster's) */
  readonly namespace?: string;
  readonly cluster: {
    readonly name: string;
    /** @default the document's namespace */
    readonly namespace?: string;
  };
  /** `spec.name` was written. */
  readonly nameGiven: boolean;
  /** The group, defaults omitted. */
  readonly group: ResourceGroupInfo;
}

/** Where a Changefeed's sink credentials come from: keys of one Secret in the cluster's namespace. */
export interface SinkCredentials {
  secretName: string;
  /** The key whose value is the sink URI's password (`mysql://user:<password>@host`). @default none */
  password?: string;
  /** Query parameters of the sink URI, each from a key: `{sasl-password: kafka-password}`. @default none */
  params?: Record<string, string>;
  /** Replica config fields, by dotted path, each from a key: `{sink.pulsar_config.authentication-token: token}`. @default none */
  fields?: Record<string, string>;
}

/** A `Changefeed`'s spec: what TiCDC's open API v2 takes. */
export interface ChangefeedSpec {
  /** The TidbCluster whose TiCDC runs the changefeed. */
  cluster: {
    name: string;
    /** @default the document's namespace */
    namespace?: string;
  };
  /** The changefeed's id in TiCDC. @default metadata.name */
  id?: string;
  /** The sink URI, with no credential in it. */
  sinkURI: string;
  /** @default none */
  sinkCredentials?: SinkCredentials;
  /** Where a new changefeed starts: a TSO. Never changes an existing one. @default none (now) */
  startTs?: string | number;
  /** Where it stops: a TSO. @default none (never) */
  targetTs?: string | number;
  /** @default false */
  paused?: boolean;
  /** TiCDC's replica config, checked against the fields of the cluster's TiCDC release. @default none */
  replicaConfig?: Record<string, unknown>;
  /** Once the document leaves Git: keep the changefeed, or remove it. @default 'Retain' */
  deletionPolicy?: 'Retain' | 'Delete';
}

/** A Changefeed as read: the changefeed as the controller keeps it, and the cluster it names. */
export interface ResolvedChangefeed {
  readonly kind: typeof CHANGEFEED_KIND;
  /** The document's `metadata.name`. */
  readonly name: string;
  /** @default none (the cluster's) */
  readonly namespace?: string;
  readonly cluster: {
    readonly name: string;
    /** @default the document's namespace */
    readonly namespace?: string;
  };
  /** `spec.id` was written. */
  readonly idGiven: boolean;
  readonly feed: ChangefeedInfo;
}
