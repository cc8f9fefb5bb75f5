/**
 * Whether a restore may start on the cluster as it is. BR refuses a cluster that holds user tables
 * before a full restore of everything, and cannot be told not to (br/pkg/task/restore.go: the
 * fresh-cluster check runs for `restore full`, and `restore point`'s snapshot, without `--filter`, on a
 * full backup). Before a restore of a database, a table or a table filter, older releases check
 * nothing of the kind, and later ones check the tables themselves only with `--check-requirements`
 * (the default) and not from an incremental backup. Restored into tables that exist, the backup's rows
 * mix with theirs. So before such a restore starts, whatever BR's release, the controller reads the
 * cluster's tables from TiDB and holds it back while one it would write into exists. `checkRequirements: false` turns this check off, as it turns off BR's own.
 * Pure: the tables are read by the caller.
 */
import { parseTableFilter, type TableName } from '../../base/table-filter';

/** What a restore writes into, as far as the check is concerned. */
export type RestoreWrites =
  /** Everything: BR's own check of an empty cluster guards it. */
  | { readonly kind: 'all' }
  /** `--check-requirements=false`: no check, BR's or this one. */
  | { readonly kind: 'unchecked' }
  /** The tables it selects; `what` says which, in words. */
  | { readonly kind: 'tables'; readonly selects: (t: TableName) => boolean; readonly what: string }
  /** Its tables cannot be told (a filter rule not read here): held back, saying why. */
  | { readonly kind: 'unknown'; readonly problem: string };

/** Schemas every cluster has, or BR keeps for itself: never a table a restore is held back for. */
export const isSystemSchema = (schema: string): boolean =>
  /^(mysql|information_schema|performance_schema|metrics_schema|sys|__tidb_br_temporary_.*)$/i.test(schema);

/** What the restore whose Job this is (the ConfigMap's `job.json`) writes into, from BR's arguments. */
export function restoreWrites(jobJson: string): RestoreWrites {
  let args: string[];
  try {
    const job = JSON.parse(jobJson) as { spec?: { template?: { spec?: { containers?: { args?: unknown }[] } } } };
    const list = job.spec?.template?.spec?.containers?.[0]?.args;
    args = Array.isArray(list) ? list.map(String) : [];
  } catch {
    return { kind: 'unknown', problem: 'its Job cannot be read as JSON' };
  }
  const command = args[1];
  const flags = readFlags(args.slice(2));
  if (flags.checkRequirements === false) return { kind: 'unchecked' };
  const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  if (command === 'db' && flags.db !== undefined) {
    const db = flags.db;
    return { kind: 'tables', selects: (t) => same(t.schema, db), what: `the database ${db}` };
  }
  if (command === 'table' && flags.db !== undefined && flags.table !== undefined) {
    const { db, table } = flags;
    return { kind: 'tables', selects: (t) => same(t.schema, db) && same(t.name, table), what: `the table ${db}.${table}` };
  }
  if ((command === 'full' || command === 'point') && flags.filter.length > 0) {
    const filter = parseTableFilter(flags.filter);
    if ('problem' in filter) return { kind: 'unknown', problem: filter.problem };
    return { kind: 'tables', selects: filter.matches, what: `the tables of the filter ${flags.filter.join(' ')}` };
  }
  if (command === 'full' || command === 'point') return { kind: 'all' };
  return { kind: 'unknown', problem: `its BR command (${args.slice(0, 2).join(' ')}) is not one this check knows` };
}

interface Flags {
  filter: string[];
  db?: string;
  table?: string;
  checkRequirements?: boolean;
}

/** The flags that say what a restore writes, as BR's flag parser reads them (the last of a name wins; `--filter` adds up). */
function readFlags(args: readonly string[]): Flags {
  const flags: Flags = { filter: [] };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const long = /^--([^=]+)(?:=(.*))?$/s.exec(arg);
    const short = long ? undefined : /^-([ft])(?:=?(.+))?$/s.exec(arg);
    const name = long ? long[1] : short ? (short[1] === 'f' ? 'filter' : 'table') : undefined;
    if (name === undefined) continue;
    const inline = long ? long[2] : short?.[2];
    if (name === 'check-requirements') {
      flags.checkRequirements = inline === undefined ? true : !/^(false|0|f)$/i.test(inline);
      continue;
    }
    if (name !== 'filter' && name !== 'db' && name !== 'table') continue;
    const value = inline ?? args[++i];
    if (value === undefined) continue;
    if (name === 'filter') flags.filter.push(value);
    else flags[name] = value;
  }
  return flags;
}

/**
 * Why the restore may not start on a cluster with these user tables, or undefined when it may. Shows
 * the first few tables it would write into.
 */
export function restoreBlocked(writes: RestoreWrites, tables: readonly TableName[]): string | undefined {
  if (writes.kind === 'unknown')
    return `cannot tell which tables it restores into (${writes.problem}), to check that none of them exists: set br.checkRequirements: false to restore without this check`;
  if (writes.kind !== 'tables') return undefined;
  const taken = tables.filter((t) => !isSystemSchema(t.schema) && writes.selects(t)).map((t) => `${t.schema}.${t.name}`);
  if (taken.length === 0) return undefined;
  const shown = taken.length > 5 ? `${taken.slice(0, 5).join(', ')} and ${taken.length - 5} more` : taken.join(', ');
  return `the cluster already has tables it would restore into (${shown}, of ${writes.what}): BR would restore the backup's rows among theirs; drop them, or set br.checkRequirements: false to restore into them anyway`;
}

/** Whether the check needs the cluster's tables. */
export const needsTables = (writes: RestoreWrites): boolean => writes.kind === 'tables';
