/**
 * The SQL accounts Git declares for a cluster (`SqlUser` and `SqlRole` documents), as the controller
 * keeps them: created when missing, changed to match, dropped only when their document leaves Git
 * with `deletionPolicy: Delete`. Part of the cluster JSON (`ControllerClusterInfo.sql`). Passwords
 * are never in it: a Secret and key name each one.
 */
import type { ResourceGroupInfo } from './resource-groups';

/** Privileges on one level, as one GRANT statement gives them. */
export interface SqlGrantInfo {
  /**
   * Privilege names in upper case, as TiDB's parser knows them (pingcap/tidb
   * `pkg/parser/mysql/privs.go`): `SELECT`, `INSERT`, `CREATE USER`, `ALL PRIVILEGES`, or a dynamic
   * privilege such as `BACKUP_ADMIN`. Sorted, each once.
   */
  readonly privileges: readonly string[];
  /** The database (`db.*`), unquoted. @default none: global (`*.*`) */
  readonly database?: string;
  /** The table (`db.table`), with `database`. @default none: every table of the database */
  readonly table?: string;
  /** `WITH GRANT OPTION`. @default false */
  readonly withGrantOption?: boolean;
}

/** A user or role by name and host, as `GRANT role TO user` names them. */
export interface SqlAccountRef {
  readonly user: string;
  readonly host: string;
}

/** One account Git declares. */
export interface SqlAccountInfo extends SqlAccountRef {
  /** The document's kind: a role is an account that cannot log in (`CREATE ROLE`). */
  readonly kind: 'SqlUser' | 'SqlRole';
  /** The document's `metadata.name`: the status and Events name the account by it. */
  readonly document: string;
  /** SqlUser: the Secret and key that hold the password; the controller reads it, never writes it. @default none (a role) */
  readonly password?: { readonly secret: string; readonly key: string };
  /** SqlUser: `REQUIRE SSL` or `REQUIRE X509`. @default 'NONE' */
  readonly require?: 'NONE' | 'SSL' | 'X509';
  /** SqlUser: `RESOURCE GROUP` (TiDB v7.1 and later). @default none (the server's default group) */
  readonly resourceGroup?: string;
  /** SqlUser: `ACCOUNT LOCK`. @default false */
  readonly locked?: boolean;
  /** Roles granted to the account, sorted. @default [] */
  readonly roles?: readonly SqlAccountRef[];
  /** Its privileges, sorted by level. @default [] */
  readonly grants?: readonly SqlGrantInfo[];
  /** What the controller does once the document leaves Git: keep the account, or drop it. @default 'Retain' */
  readonly deletionPolicy?: 'Retain' | 'Delete';
  /** A managed account changed by hand (a grant added, a lock lifted): `report` it, or `correct` it back to Git. @default 'report' */
  readonly drift?: 'report' | 'correct';
}

/** Every account Git declares for the cluster, and how the controller logs in to keep them. */
export interface SqlAccountsInfo {
  /**
   * The Secret whose `root` key is root's password: the controller logs in as root with it (the
   * cluster's initializer Secret).
   */
  readonly loginSecret: string;
  /** TLS to TiDB's MySQL port: the client certificate's Secret, and whether its CA goes unchecked. @default none (plain) */
  readonly tls?: {
    readonly secret: string;
    /** @default absent (the CA is checked) */
    readonly skipCA?: true;
  };
  /** The accounts, roles first, then users, each sorted by user and host. */
  readonly accounts: readonly SqlAccountInfo[];
  /** The resource groups, sorted by name. @default none */
  readonly resourceGroups?: readonly ResourceGroupInfo[];
}

/** `'user'@'host'`: how the status, Events and logs name an account. */
export const accountName = (a: SqlAccountRef): string => `'${a.user}'@'${a.host}'`;
