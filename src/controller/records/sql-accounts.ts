/**
 * The records of the SQL accounts the controller manages, kept in the status ConfigMap: which accounts
 * are its own (created or adopted from a `SqlUser` or `SqlRole`), what Git asked of each when it last
 * made the account match (so that a change by hand is told from a change in Git), the deletionPolicy
 * Git last gave it, and the version of the password Secret it last set the password from. Never a
 * password, nor a hash of one.
 */
import type { SqlAccountRef, SqlGrantInfo } from '../../tidbcluster/contract/sql-accounts';

/** What Git asked of an account when the controller last made it match. */
export interface AppliedAccount {
  /** Privileges per level. */
  readonly grants: readonly SqlGrantInfo[];
  /** The roles granted. */
  readonly roles: readonly SqlAccountRef[];
  /** SqlUser: `REQUIRE`. @default 'NONE' */
  readonly require?: string;
  /** SqlUser: `ACCOUNT LOCK`. @default false */
  readonly locked?: boolean;
  /** SqlUser: the resource group. @default none */
  readonly resourceGroup?: string;
}

/** One account the controller manages, by `'user'@'host'`. */
export interface SqlAccountRecord {
  readonly kind: 'SqlUser' | 'SqlRole';
  /** The document's name. */
  readonly document: string;
  /** What is done with it once its document leaves Git. */
  readonly deletionPolicy: 'Retain' | 'Delete';
  /** SqlUser: `<uid>/<resourceVersion>` of the Secret its password was last set from. @default none */
  readonly secretVersion?: string;
  /** What Git asked when the account last matched. @default none (never made to match yet) */
  readonly applied?: AppliedAccount;
  /** Its document left Git with `Retain`: kept on the server, no longer changed. @default false */
  readonly retained?: boolean;
}

const isText = (v: unknown): v is string => typeof v === 'string';
const isRef = (v: unknown): v is SqlAccountRef => isText((v as SqlAccountRef)?.user) && isText((v as SqlAccountRef)?.host);
const isGrant = (v: unknown): v is SqlGrantInfo => {
  const g = v as SqlGrantInfo;
  return (
    Array.isArray(g?.privileges) &&
    g.privileges.every(isText) &&
    (g.database === undefined || isText(g.database)) &&
    (g.table === undefined || isText(g.table))
  );
};

function appliedOf(v: unknown): AppliedAccount | undefined {
  const a = v as Partial<AppliedAccount> | undefined;
  if (!a || !Array.isArray(a.grants) || !a.grants.every(isGrant) || !Array.isArray(a.roles) || !a.roles.every(isRef)) return undefined;
  return {
    grants: a.grants,
    roles: a.roles,
    ...(isText(a.require) && { require: a.require }),
    ...(a.locked === true && { locked: true }),
    ...(isText(a.resourceGroup) && { resourceGroup: a.resourceGroup }),
  };
}

/** Reads back the records from a status document written before (`sqlAccountRecords`). */
export function sqlAccountsOf(doc: unknown): Record<string, SqlAccountRecord> {
  const out: Record<string, SqlAccountRecord> = {};
  const all = (doc as { sqlAccountRecords?: Record<string, Partial<SqlAccountRecord>> } | undefined)?.sqlAccountRecords;
  if (!all || typeof all !== 'object') return out;
  for (const [name, r] of Object.entries(all)) {
    if ((r?.kind !== 'SqlUser' && r?.kind !== 'SqlRole') || !isText(r.document)) continue;
    if (r.deletionPolicy !== 'Retain' && r.deletionPolicy !== 'Delete') continue;
    const applied = appliedOf(r.applied);
    out[name] = {
      kind: r.kind,
      document: r.document,
      deletionPolicy: r.deletionPolicy,
      ...(isText(r.secretVersion) && { secretVersion: r.secretVersion }),
      ...(applied && { applied }),
      ...(r.retained === true && { retained: true }),
    };
  }
  return out;
}
