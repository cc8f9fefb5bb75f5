/**
 * The `SqlUser` and `SqlRole` inputs (apiVersion `tidb-gitops.io/v1alpha1`), the project's own kinds:
 * a user or a role of a cluster's database, its roles and its grants, declared beside the TidbCluster.
 * `schema.ts` decides what is valid, `read.ts` reads them, `link.ts` ties them to their cluster.
 */
import type { SqlAccountInfo } from '../tidbcluster/contract';

/** The apiVersion of the project's own kinds. */
export const DATABASE_API_VERSION = 'tidb-gitops.io/v1alpha1';
export const SQL_USER_KIND = 'SqlUser';
export const SQL_ROLE_KIND = 'SqlRole';
/** Kinds of this API group that nothing carries out yet: refused, so that nobody thinks they run. */
export const NOT_CARRIED_OUT_KINDS = ['Changefeed', 'ResourceGroup'] as const;

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
