/**
 * The resource groups Git declares (`ResourceGroup`), made to match on the server: pure. From the
 * declared groups, the server's groups as read, the records of the groups the controller manages and
 * the server's grammar, the statements to run, group by group, and a report.
 *
 * The rules, as for SQL accounts (plan/sql-accounts.ts):
 * - A declared group that is missing is created; one that exists and is not recorded is adopted:
 *   altered to match Git, never dropped and created again.
 * - What changed in Git since the group last matched (the record's `applied`) is made to match. What
 *   differs from Git although Git did not change is drift, done by hand: reported, and undone only
 *   with `drift: correct`.
 * - A group is dropped only when the controller manages it and its document left Git with
 *   `deletionPolicy: Delete`; with `Retain` it is kept and no longer changed. `default` is never
 *   dropped. A group neither declared nor recorded is never touched: it is listed as unmanaged (but for
 *   `default`).
 */
import { stableJson } from '../../base/stable-json';
import { DEFAULT_RESOURCE_GROUP, type ResourceGroupInfo, type RunawayRuleInfo } from '../../tidbcluster/contract/resource-groups';
import { alterGroupSql, createGroupSql, dropGroupSql, type GroupGrammar, type ObservedGroup } from '../clients/resource-groups';
import { appliedOf, type AppliedGroup, type ResourceGroupRecord } from '../records/resource-groups';

export interface ResourceGroupsInput {
  /** The groups Git declares. */
  readonly groups: readonly ResourceGroupInfo[];
  /** Every group on the server, by name. */
  readonly server: ReadonlyMap<string, ObservedGroup>;
  /** The records of the groups the controller manages, by name. */
  readonly records: Readonly<Record<string, ResourceGroupRecord>>;
  readonly grammar: GroupGrammar;
}

/** The statement of one group and the record to keep once it ran. */
export interface GroupStep {
  readonly group: string;
  /** The statement to run. @default none (only the record changes) */
  readonly statement?: string;
  /** What the Event says once it ran. @default none */
  readonly news?: 'created' | 'changed' | 'dropped';
  /** The record once the statement ran; undefined: none is kept. */
  readonly record: ResourceGroupRecord | undefined;
}

/** How a declared group stands. */
export interface GroupReport {
  readonly document: string;
  readonly group: string;
  /** `ok`: as Git says; `changing`: a statement to run; `drift`: changed by hand, reported; `refused`: the release cannot say it. */
  readonly state: 'ok' | 'changing' | 'drift' | 'refused';
  /** Why it is refused. @default none */
  readonly reason?: string;
  /** What differs from Git, done by hand. @default none */
  readonly drift?: readonly string[];
  /** The drift is undone by this pass's statement (`drift: correct`). @default false */
  readonly corrected?: boolean;
}

export interface ResourceGroupsPlan {
  readonly steps: readonly GroupStep[];
  /** The declared groups, in Git's order. */
  readonly groups: readonly GroupReport[];
  /** On the server, neither declared nor managed (`default` left out). */
  readonly unmanaged: readonly string[];
  /** Managed groups whose document left Git, kept on the server (`Retain`, or `default`). */
  readonly kept: readonly string[];
}

/** What of a group on the server differs from what Git asks, in words. */
export function groupDifferences(want: AppliedGroup, has: ObservedGroup): string[] {
  const out: string[] = [];
  if (has.ruPerSecond !== want.ruPerSecond) out.push(`RU_PER_SEC is ${has.ruPerSecond}, not ${want.ruPerSecond}`);
  if (has.priority !== (want.priority ?? 'MEDIUM')) out.push(`PRIORITY is ${has.priority}, not ${want.priority ?? 'MEDIUM'}`);
  if (has.burstable !== (want.burstable === true)) out.push(has.burstable ? 'it is BURSTABLE' : 'it is not BURSTABLE');
  const rule = has.queryLimit;
  if (rule && 'unread' in rule) out.push(`its QUERY_LIMIT is ${rule.unread}`);
  else if (!sameRule(rule, want.queryLimit))
    out.push(rule ? (want.queryLimit ? 'its QUERY_LIMIT differs' : 'it has a QUERY_LIMIT') : 'it has no QUERY_LIMIT');
  return out;
}

function sameRule(a: RunawayRuleInfo | undefined, b: RunawayRuleInfo | undefined): boolean {
  return stableJson(a ?? null) === stableJson(b ?? null);
}

/** The statements that make the server's groups match Git. */
export function planResourceGroups(input: ResourceGroupsInput): ResourceGroupsPlan {
  const steps: GroupStep[] = [];
  const reports: GroupReport[] = [];
  const declared = new Set(input.groups.map((g) => g.name));
  for (const g of input.groups) {
    const record = input.records[g.name];
    const has = input.server.get(g.name);
    const applied = appliedOf(g);
    const next: ResourceGroupRecord = { document: g.document, deletionPolicy: g.deletionPolicy ?? 'Retain', applied };
    const base = { document: g.document, group: g.name };
    if (!has) {
      steps.push({ group: g.name, statement: createGroupSql(g), news: 'created', record: next });
      reports.push({ ...base, state: 'changing' });
      continue;
    }
    const differs = groupDifferences(applied, has);
    const recordChanged = stableJson(record ?? null) !== stableJson(next);
    if (differs.length === 0) {
      if (recordChanged) steps.push({ group: g.name, record: next });
      reports.push({ ...base, state: 'ok' });
      continue;
    }
    // Git changed since it last matched (or the group was never made to match): not drift.
    const gitChanged = !record?.applied || stableJson(record.applied) !== stableJson(applied);
    const drift = gitChanged ? undefined : differs;
    if (drift && g.drift !== 'correct') {
      if (recordChanged) steps.push({ group: g.name, record: next });
      reports.push({ ...base, state: 'drift', drift });
      continue;
    }
    const sql = alterGroupSql(g, has, input.grammar);
    if (typeof sql !== 'string') {
      reports.push({ ...base, state: 'refused', reason: sql.refused });
      continue;
    }
    steps.push({ group: g.name, statement: sql, news: 'changed', record: next });
    reports.push({ ...base, state: 'changing', ...(drift && { drift, corrected: true }) });
  }
  const kept: string[] = [];
  for (const [name, record] of Object.entries(input.records).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (declared.has(name)) continue;
    if (!input.server.has(name)) {
      steps.push({ group: name, record: undefined });
      continue;
    }
    if (record.deletionPolicy === 'Delete' && name !== DEFAULT_RESOURCE_GROUP) {
      steps.push({ group: name, statement: dropGroupSql(name), news: 'dropped', record: undefined });
      continue;
    }
    kept.push(name);
    if (!record.retained) steps.push({ group: name, record: { ...record, retained: true } });
  }
  const unmanaged = [...input.server.keys()].filter((n) => n !== DEFAULT_RESOURCE_GROUP && !declared.has(n) && !input.records[n]).sort();
  return { steps, groups: reports, unmanaged, kept };
}
