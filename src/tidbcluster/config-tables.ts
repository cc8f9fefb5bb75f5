/**
 * Config tables the renderer writes keys into (certificate paths under cluster TLS, TiDB's log
 * rotation, PD's dashboard client): a user's value there must be a table too, or the renderer's table
 * would silently replace it. TiFlash and TiProxy keep their own lists beside their resolvers.
 */
import { isTomlTable, type TomlTable, type TomlValue } from '../base/toml';
import type { SpecIssue } from './errors';

/** Per component: the dotted paths of the tables the renderer may write into. */
export const OWNED_CONFIG_TABLES: Readonly<Record<string, readonly string[]>> = {
  pd: ['security', 'dashboard'],
  tikv: ['security'],
  tidb: ['log.file', 'security'],
  pump: ['security'],
};

/** The renderer writes keys inside these tables; a user value of another type there cannot be merged. */
export function checkOwnedTables(table: TomlTable, owned: readonly string[], path: string, issues: SpecIssue[]): void {
  for (const dotted of owned) {
    let cur: TomlValue = table;
    const keys = dotted.split('.');
    for (let i = 0; i < keys.length; i++) {
      const next: TomlValue | undefined = isTomlTable(cur) ? cur[keys[i]] : undefined;
      if (next === undefined) break;
      if (!isTomlTable(next)) {
        const at = keys.slice(0, i + 1).join('.');
        // Each bad table once, even when several owned paths run through it.
        if (!issues.some((x) => x.path === `${path}.${at}`)) {
          issues.push({
            path: `${path}.${at}`,
            message: `expected a table (the renderer sets keys inside ${at}), got ${JSON.stringify(next)}`,
          });
        }
        break;
      }
      cur = next;
    }
  }
}

/** `table`, after recording an issue for each owned table that holds something else. */
export function ownedTablesChecked(table: TomlTable, owned: readonly string[], path: string, issues: SpecIssue[]): TomlTable {
  checkOwnedTables(table, owned, path, issues);
  return table;
}
