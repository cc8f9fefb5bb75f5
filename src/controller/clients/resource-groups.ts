/**
 * TiDB's resource groups as the controller reads them, over a connection logged in as root, and the
 * statements that change them, per release. The facts, from pingcap/tidb:
 * - `information_schema.resource_groups` (`pkg/infoschema/tables.go` `tableResourceGroupsCols`, filled
 *   by `pkg/executor/infoschema_reader.go` `setDataFromResourceGroups`): `NAME` (lower case),
 *   `RU_PER_SEC` (decimal text, or `UNLIMITED`), `PRIORITY` (`LOW`, `MEDIUM`, `HIGH`), `BURSTABLE`
 *   (`YES`/`NO` up to v8.5; `OFF`, `MODERATED`, `UNLIMITED` after), `QUERY_LIMIT` (NULL, or
 *   `EXEC_ELAPSED='1m0s', ACTION=KILL, WATCH=SIMILAR DURATION='10m0s'` with Go durations; from v7.2).
 * - The grammar (`pkg/parser/parser.y` `DirectResourceGroupOption`): `RU_PER_SEC = n`, `PRIORITY = p`,
 *   `BURSTABLE` (every release), `BURSTABLE = FALSE` (v7.2 to v8.5), `BURSTABLE = OFF` (after v8.5),
 *   `QUERY_LIMIT = (EXEC_ELAPSED = '…', ACTION = …, WATCH = … [DURATION = '…'])` and `QUERY_LIMIT = NULL`
 *   (v7.2 on). `ALTER` keeps the options it does not name (`pkg/ddl/resource_group.go`
 *   `buildResourceGroup`); the statements here name every option Git declares.
 */
import { goDuration, parseDurationMs } from '../../base/duration';
import type { ResourceGroupInfo, RunawayRuleInfo } from '../../tidbcluster/contract/resource-groups';
import type { MysqlConnection } from './mysql';

/** A resource group as TiDB has it. */
export interface ObservedGroup {
  readonly name: string;
  /** `RU_PER_SEC`: a number, or `UNLIMITED`. */
  readonly ruPerSecond: number | 'UNLIMITED';
  readonly priority: string;
  /** Whether it may use more than its quota (`YES`, `MODERATED`, `UNLIMITED`). */
  readonly burstable: boolean;
  /** Its runaway-query rule as read, or the text TiDB shows when this reader does not know all of it. @default none */
  readonly queryLimit?: RunawayRuleInfo | { readonly unread: string };
}

/** A TiDB release as `major.minor.patch` numbers, from the server's version (`8.0.11-TiDB-v8.5.1`); newest when it says none. */
export function tidbRelease(serverVersion: string): readonly [number, number, number] {
  const m = /TiDB-v?(\d+)\.(\d+)\.(\d+)/i.exec(serverVersion);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [99, 0, 0];
}

const atLeast = (v: readonly number[], major: number, minor: number) => v[0] > major || (v[0] === major && v[1] >= minor);

/** What a release's grammar has. */
export interface GroupGrammar {
  /** `QUERY_LIMIT` (v7.2 and later). */
  readonly queryLimit: boolean;
  /** How BURSTABLE is turned off: `BURSTABLE = FALSE` (v7.2 to v8.5), `BURSTABLE = OFF` (later), or not at all (v7.1). */
  readonly burstableOff?: 'FALSE' | 'OFF';
}

export function groupGrammar(release: readonly [number, number, number]): GroupGrammar {
  const queryLimit = atLeast(release, 7, 2);
  const burstableOff = atLeast(release, 9, 0) ? 'OFF' : queryLimit ? 'FALSE' : undefined;
  return { queryLimit, ...(burstableOff && { burstableOff }) };
}

/** Every resource group on the server. */
export async function readGroups(conn: MysqlConnection, grammar: GroupGrammar): Promise<ObservedGroup[]> {
  const columns = `NAME, RU_PER_SEC, PRIORITY, BURSTABLE${grammar.queryLimit ? ', QUERY_LIMIT' : ''}`;
  const { rows } = await conn.query(`SELECT ${columns} FROM information_schema.resource_groups`);
  return rows
    .filter((r) => r[0] !== null)
    .map(([name, ru, priority, burstable, limit]) => ({
      name: (name ?? '').toLowerCase(),
      ruPerSecond: ru === null || ru === 'UNLIMITED' || !/^\d+$/.test(ru) ? 'UNLIMITED' : Number(ru),
      priority: priority ?? '',
      burstable: burstable === 'YES' || burstable === 'MODERATED' || burstable === 'UNLIMITED',
      ...(limit !== null && limit !== undefined && limit !== '' && { queryLimit: parseQueryLimit(limit) }),
    }));
}

/** `EXEC_ELAPSED='1m0s', ACTION=KILL, WATCH=SIMILAR DURATION='10m0s'` read back; anything else is kept as text. */
export function parseQueryLimit(text: string): RunawayRuleInfo | { readonly unread: string } {
  const m =
    /^EXEC_ELAPSED='([^']+)', ACTION=(DRYRUN|COOLDOWN|KILL)(?:, WATCH=(EXACT|SIMILAR|PLAN) DURATION=(?:'([^']+)'|UNLIMITED))?$/.exec(
      text.trim(),
    );
  const exec = m ? parseDurationMs(m[1]) : undefined;
  const duration = m?.[4] === undefined ? undefined : parseDurationMs(m[4]);
  if (!m || exec === undefined || (m[4] !== undefined && duration === undefined)) return { unread: text };
  return {
    execElapsedMs: exec,
    action: m[2] as RunawayRuleInfo['action'],
    ...(m[3] && { watch: { type: m[3] as 'EXACT' | 'SIMILAR' | 'PLAN', ...(duration !== undefined && { durationMs: duration }) } }),
  };
}

const quoted = (name: string) => `\`${name.replace(/`/g, '``')}\``;

function rule(r: RunawayRuleInfo): string {
  const watch = r.watch
    ? `, WATCH = ${r.watch.type}${r.watch.durationMs === undefined ? '' : ` DURATION = '${goDuration(r.watch.durationMs)}'`}`
    : '';
  return `QUERY_LIMIT = (EXEC_ELAPSED = '${goDuration(r.execElapsedMs)}', ACTION = ${r.action}${watch})`;
}

/** `CREATE RESOURCE GROUP IF NOT EXISTS` with every option Git declares. */
export function createGroupSql(g: ResourceGroupInfo): string {
  const options = [`RU_PER_SEC = ${g.ruPerSecond}`, `PRIORITY = ${g.priority ?? 'MEDIUM'}`];
  if (g.burstable) options.push('BURSTABLE');
  if (g.queryLimit) options.push(rule(g.queryLimit));
  return `CREATE RESOURCE GROUP IF NOT EXISTS ${quoted(g.name)} ${options.join(', ')}`;
}

/**
 * `ALTER RESOURCE GROUP` to what Git declares, from what the server has: every option named, so
 * that nothing set by hand stays; or why the release cannot say it. BURSTABLE is named only to
 * change it: after v8.5 a bare BURSTABLE is MODERATED (pkg/ddl/resource_group.go), and would take a
 * group that bursts UNLIMITED (the `default` group) down to MODERATED although it already bursts.
 */
export function alterGroupSql(g: ResourceGroupInfo, has: ObservedGroup, grammar: GroupGrammar): string | { refused: string } {
  const options = [`RU_PER_SEC = ${g.ruPerSecond}`, `PRIORITY = ${g.priority ?? 'MEDIUM'}`];
  if (g.burstable) {
    if (!has.burstable) options.push('BURSTABLE');
  } else if (has.burstable) {
    if (!grammar.burstableOff)
      return {
        refused: `this TiDB release has no way to turn BURSTABLE off (TiDB v7.2 has BURSTABLE = FALSE): set burstable: true again, or drop the group by hand and let it be created anew`,
      };
    options.push(`BURSTABLE = ${grammar.burstableOff}`);
  }
  if (g.queryLimit) options.push(rule(g.queryLimit));
  else if (has.queryLimit && grammar.queryLimit) options.push('QUERY_LIMIT = NULL');
  return `ALTER RESOURCE GROUP ${quoted(g.name)} ${options.join(', ')}`;
}

/** `DROP RESOURCE GROUP IF EXISTS`. */
export const dropGroupSql = (name: string): string => `DROP RESOURCE GROUP IF EXISTS ${quoted(name)}`;
