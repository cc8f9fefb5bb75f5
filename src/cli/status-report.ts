/**
 * What `tidb-gitops status` says of one cluster: built from what the API server holds (the
 * controller's `<cluster>-status` document, the StatefulSets, the controller's Deployment, recent
 * Warning Events) and nothing else, so it needs only read access to the namespace. Pure: the caller
 * reads the objects; this decides what they mean, what is wrong, and how it prints.
 */
import type { BackupRun } from '../controller/records/backup-runs';
import type { OperationRecord } from '../controller/records/operations';
import type { InitializerRecord } from '../controller/records/initializer';
import type { LogBackupTask } from '../controller/plan/log-backups';
import type { ClusterStatus, ComponentStatus } from '../controller/reconcile/status';
import type { ChangefeedsStatus } from '../controller/reconcile/changefeeds';
import type { ResourceGroupsStatus } from '../controller/reconcile/resource-groups';
import type { SqlAccountsStatus } from '../controller/reconcile/sql-accounts';
import { COMPONENTS, names, type ComponentKind } from '../tidbcluster/names';

/** The objects the report is made of, as the API server returned them. */
export interface StatusInputs {
  readonly cluster: string;
  readonly namespace: string;
  /** `status.json` of `<cluster>-status`, parsed; undefined when the ConfigMap or the key is missing. */
  readonly doc?: StatusDocument;
  /** The cluster's StatefulSets. */
  readonly statefulSets: readonly Obj[];
  /** The `<cluster>-discovery` Deployment (the controller), if it exists. */
  readonly controller?: Obj;
  /** Warning Events of the namespace. */
  readonly events: readonly Obj[];
  /** Epoch milliseconds. */
  readonly now: number;
}

type Obj = Record<string, any>;

/** The controller's status document: what `reconcile/status.ts` writes. */
export type StatusDocument = Partial<ClusterStatus> & {
  readonly backupRuns?: readonly BackupRun[];
  readonly operations?: readonly OperationRecord[];
  readonly initializer?: InitializerRecord;
  readonly logBackups?: readonly LogBackupTask[];
  readonly logBackupsError?: string;
  readonly sqlAccounts?: SqlAccountsStatus;
  readonly resourceGroups?: ResourceGroupsStatus;
  readonly changefeeds?: ChangefeedsStatus;
  readonly stoppedWithLeaders?: readonly { pod: string; storeId: number; leaderCount: number; time: string; reason?: string }[];
};

/** One component's line. */
export interface ComponentLine {
  readonly component: ComponentKind;
  readonly phase: string;
  readonly ready: number;
  readonly replicas: number;
  /** The image tag of the component's Pod template: what its Pods run once rolled out (the phase says whether they are). */
  readonly versions: readonly string[];
  /** What the controller does or waits for. */
  readonly reason: string;
  /** Since when the operation waits, and the way out. @default none */
  readonly stuck?: { readonly since: string; readonly hint: string };
}

/** What `status` reports; `-o json` prints it as it is. */
export interface StatusReport {
  readonly cluster: string;
  readonly namespace: string;
  /** Whether the controller runs (its Deployment has an available replica). */
  readonly controller: 'running' | 'not running' | 'missing';
  readonly pd: { readonly reachable: boolean; readonly leader?: string; readonly error?: string } | null;
  readonly components: readonly ComponentLine[];
  readonly stores: readonly {
    readonly component: string;
    readonly id: number;
    readonly pod: string | null;
    readonly state: string;
    readonly leaders: number;
    readonly regions: number;
    readonly evicting: boolean;
  }[];
  /** The newest run of each schedule. */
  readonly backups: readonly {
    readonly schedule: string;
    readonly job: string;
    readonly phase: string;
    readonly finished?: string;
    readonly error?: string;
  }[];
  readonly operations: readonly { readonly job: string; readonly phase: string; readonly error?: string }[];
  readonly logBackups: readonly {
    readonly task: string;
    readonly state: string;
    readonly checkpoint: string;
    readonly lagSeconds: number;
    readonly error?: string;
  }[];
  readonly initializer?: { readonly name: string; readonly phase: string; readonly note?: string };
  /** The SQL accounts Git declares (SqlUser, SqlRole), as the controller last found them. */
  readonly sqlAccounts: readonly {
    readonly account: string;
    readonly kind: string;
    readonly state: string;
    /** Why it waits or failed, or what was changed by hand. @default none */
    readonly note?: string;
  }[];
  /** Accounts on the server no document declares, left alone. */
  readonly unmanagedAccounts: readonly string[];
  /** The resource groups Git declares, as the controller last found them. */
  readonly resourceGroups: readonly { readonly group: string; readonly state: string; readonly note?: string }[];
  /** The TiCDC changefeeds Git declares, as the controller last found them. */
  readonly changefeeds: readonly {
    readonly id: string;
    readonly phase: string;
    /** TiCDC's state. @default none (not there yet) */
    readonly state?: string;
    /** The checkpoint's time (RFC 3339). @default none */
    readonly checkpoint?: string;
    /** @default none */
    readonly lagSeconds?: number;
    readonly message: string;
  }[];
  /** Warning Events of the last hour about the cluster's objects, newest first (at most 10). */
  readonly warnings: readonly {
    readonly time: string;
    readonly object: string;
    readonly reason: string;
    readonly message: string;
    readonly count: number;
  }[];
  /** What is stuck or failing; empty when all is well. */
  readonly problems: readonly string[];
}

/** How long a Warning Event counts as recent. */
export const RECENT_MS = 60 * 60_000;
/** The most Warning Events listed. */
const MAX_WARNINGS = 10;

const imageTag = (image: string | undefined): string => {
  if (!image) return '?';
  const at = image.indexOf('@');
  if (at >= 0) return image.slice(at + 1, at + 20);
  const slash = image.lastIndexOf('/');
  const colon = image.lastIndexOf(':');
  return colon > slash ? image.slice(colon + 1) : 'latest';
};

/** The report of one cluster. */
export function statusReport(i: StatusInputs): StatusReport {
  const doc = i.doc ?? {};
  const problems: string[] = [];
  const controller = controllerState(i.controller);
  if (controller !== 'running')
    problems.push(`the controller (${names.discovery(i.cluster)}) is ${controller}: nothing is reconciled, and what follows may be old`);
  if (!i.doc) problems.push(`no status from the controller yet (ConfigMap ${names.status(i.cluster)} has no status.json)`);
  const pd =
    doc.pd === undefined || doc.pd === null
      ? null
      : { reachable: doc.pd.reachable, ...leaderOf(doc.components?.pd), ...(doc.pd.error !== undefined && { error: doc.pd.error }) };
  if (pd && !pd.reachable) problems.push(`PD does not answer the controller: ${pd.error ?? 'no reason given'}`);
  const components: ComponentLine[] = [];
  const stores: StatusReport['stores'][number][] = [];
  for (const kind of COMPONENTS) {
    const c = doc.components?.[kind] as ComponentStatus | undefined;
    const sts = i.statefulSets.find((s) => s.metadata?.name === names.statefulSet(i.cluster, kind));
    if (!c && !sts) continue;
    const replicas = c?.replicas ?? sts?.spec?.replicas ?? 0;
    const ready = c?.readyReplicas ?? sts?.status?.readyReplicas ?? 0;
    const line: ComponentLine = {
      component: kind,
      phase: c?.phase ?? 'Unknown',
      ready,
      replicas,
      versions: versionsOf(sts),
      reason: c?.reason ?? "not in the controller's status yet",
      ...(c?.stuck && { stuck: c.stuck }),
    };
    components.push(line);
    if (line.stuck)
      problems.push(`${kind} ${line.phase.toLowerCase()} is stuck since ${line.stuck.since}: ${line.reason}. ${line.stuck.hint}`);
    else if (line.phase === 'Normal' && ready < replicas) problems.push(`${kind}: ${replicas - ready} of ${replicas} Pods not Ready`);
    for (const m of c?.members ?? []) if (!m.health) problems.push(`PD member ${m.name} is not healthy`);
    for (const s of c?.stores ?? []) {
      stores.push({
        component: kind,
        id: s.id,
        pod: s.pod,
        state: s.state,
        leaders: s.leaderCount,
        regions: s.regionCount,
        evicting: s.evictingLeaders,
      });
      if (s.state === 'Down' || s.state === 'Disconnected')
        problems.push(`${kind} store ${s.id}${s.pod ? ` (${s.pod})` : ''} is ${s.state}`);
    }
  }
  const backups = newestRuns(doc.backupRuns ?? []);
  for (const b of backups)
    if (b.phase === 'Failed' || b.phase === 'Lost')
      problems.push(`the last backup of schedule ${b.schedule} (${b.job}) is ${b.phase}${b.error ? `: ${b.error}` : ''}`);
  const operations = (doc.operations ?? []).map((o) => ({ job: o.job, phase: o.phase, ...(o.error !== undefined && { error: o.error }) }));
  for (const o of operations)
    if (o.phase === 'Failed' || o.phase === 'Lost') problems.push(`${o.job} is ${o.phase}${o.error ? `: ${o.error}` : ''}`);
  const logBackups = (doc.logBackups ?? []).map((t) => ({
    task: t.name,
    state: t.state,
    checkpoint: t.checkpointTime,
    lagSeconds: t.lagSeconds,
    ...(t.error !== undefined && { error: t.error }),
  }));
  for (const t of logBackups)
    if (t.state === 'Error') problems.push(`log backup ${t.task} is paused by an error${t.error ? `: ${t.error}` : ''}`);
  if (doc.logBackupsError) problems.push(`the log backups cannot be read: ${doc.logBackupsError}`);
  const init = doc.initializer;
  const initializer = init && {
    name: init.name,
    phase: init.phase,
    ...((init.error ?? init.reason) !== undefined && { note: init.error ?? init.reason }),
  };
  if (init && (init.phase === 'Failed' || init.phase === 'Lost'))
    problems.push(`the initializer ${init.name} is ${init.phase}${init.error ? `: ${init.error}` : ''}`);
  const sql = doc.sqlAccounts;
  const sqlAccounts = (sql?.accounts ?? []).map((a) => {
    const note = a.reason ?? a.drift?.join('; ');
    return { account: a.account, kind: a.kind, state: a.state, ...(note !== undefined && { note }) };
  });
  if (sql?.waiting) problems.push(`the SQL accounts are not looked at: ${sql.waiting}`);
  for (const a of sqlAccounts)
    if (a.state === 'failed' || a.state === 'drift')
      problems.push(`SQL account ${a.account} ${a.state === 'failed' ? 'failed' : 'was changed by hand'}${a.note ? `: ${a.note}` : ''}`);
  const resourceGroups = (doc.resourceGroups?.groups ?? []).map((g) => {
    const note = g.reason ?? g.drift?.join('; ');
    return { group: g.group, state: g.state, ...(note !== undefined && { note }) };
  });
  for (const g of resourceGroups)
    if (g.state === 'failed' || g.state === 'drift' || g.state === 'refused')
      problems.push(`resource group ${g.group} ${g.state === 'drift' ? 'was changed by hand' : g.state}${g.note ? `: ${g.note}` : ''}`);
  const changefeeds = (doc.changefeeds?.feeds ?? []).map((f) => ({
    id: f.id,
    phase: f.phase,
    ...(f.state !== undefined && { state: f.state }),
    ...(f.checkpointTime !== undefined && { checkpoint: f.checkpointTime }),
    ...(f.lagMs !== undefined && { lagSeconds: Math.round(f.lagMs / 1000) }),
    message: f.message,
  }));
  for (const f of changefeeds) if (f.phase === 'Failed') problems.push(`changefeed ${f.id}: ${f.message}`);
  return {
    cluster: i.cluster,
    namespace: i.namespace,
    controller,
    pd,
    components,
    stores,
    backups,
    operations,
    logBackups,
    ...(initializer && { initializer }),
    sqlAccounts,
    unmanagedAccounts: sql?.unmanaged ?? [],
    resourceGroups,
    changefeeds,
    warnings: recentWarnings(i),
    problems,
  };
}

function controllerState(d: Obj | undefined): StatusReport['controller'] {
  if (!d) return 'missing';
  return (d.status?.availableReplicas ?? 0) > 0 ? 'running' : 'not running';
}

function leaderOf(pd: ComponentStatus | undefined): { leader?: string } {
  const leader = pd?.members?.find((m) => m.leader);
  return leader ? { leader: leader.pod ?? leader.name } : {};
}

/** The image tags of a StatefulSet's Pods: the template's, after the main container. */
function versionsOf(sts: Obj | undefined): string[] {
  const containers: Obj[] = sts?.spec?.template?.spec?.containers ?? [];
  const main = containers.find((c) => c.name === sts?.metadata?.labels?.['app.kubernetes.io/component']) ?? containers[0];
  return main ? [imageTag(main.image)] : [];
}

function newestRuns(runs: readonly BackupRun[]): StatusReport['backups'][number][] {
  const bySchedule = new Map<string, BackupRun>();
  for (const r of runs) {
    const seen = bySchedule.get(r.schedule);
    if (!seen || r.job > seen.job) bySchedule.set(r.schedule, r);
  }
  return [...bySchedule.values()]
    .sort((a, b) => (a.schedule < b.schedule ? -1 : 1))
    .map((r) => ({
      schedule: r.schedule,
      job: r.job,
      phase: r.phase,
      ...(r.finished !== undefined && { finished: r.finished }),
      ...(r.error !== undefined && { error: r.error }),
    }));
}

/** Warning Events of the last hour whose object belongs to the cluster, newest first. */
function recentWarnings(i: StatusInputs): StatusReport['warnings'][number][] {
  const own = (name: string) => name.startsWith(`${i.cluster}-`) || name.startsWith('backup-') || name.startsWith('restore-');
  return i.events
    .filter((e) => e.type === 'Warning' && own(String(e.involvedObject?.name ?? e.regarding?.name ?? '')))
    .map((e) => ({ e, at: Date.parse(e.lastTimestamp ?? e.eventTime ?? e.series?.lastObservedTime ?? e.firstTimestamp ?? '') }))
    .filter(({ at }) => Number.isFinite(at) && i.now - at <= RECENT_MS)
    .sort((a, b) => b.at - a.at)
    .slice(0, MAX_WARNINGS)
    .map(({ e, at }) => ({
      time: new Date(at).toISOString(),
      object: `${e.involvedObject?.kind ?? e.regarding?.kind ?? '?'}/${e.involvedObject?.name ?? e.regarding?.name ?? '?'}`,
      reason: String(e.reason ?? ''),
      message: String(e.message ?? e.note ?? ''),
      count: Number(e.count ?? e.series?.count ?? 1),
    }));
}

/** A table of rows, columns padded to their widest cell. */
function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const line = (r: readonly string[]) =>
    r
      .map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c])))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

const ago = (iso: string, now: number): string => {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  return s < 120 ? `${s}s ago` : s < 7200 ? `${Math.round(s / 60)}m ago` : `${Math.round(s / 3600)}h ago`;
};

/** The report as text, for a terminal. */
export function statusText(r: StatusReport, now: number): string {
  const out: string[] = [];
  const pd =
    r.pd === null
      ? 'PD: not read yet'
      : r.pd.reachable
        ? `PD: reachable${r.pd.leader ? `, leader ${r.pd.leader}` : ''}`
        : `PD: not reachable (${r.pd.error ?? 'no reason given'})`;
  out.push(
    `Cluster ${r.namespace}/${r.cluster}: ${r.problems.length === 0 ? 'healthy' : `${r.problems.length} problem${r.problems.length === 1 ? '' : 's'}`}`,
  );
  out.push(`Controller: ${r.controller}. ${pd}`, '');
  out.push(
    ...table(
      ['COMPONENT', 'PHASE', 'READY', 'VERSION', 'WHAT THE CONTROLLER DOES'],
      r.components.map((c) => [c.component, c.phase, `${c.ready}/${c.replicas}`, c.versions.join(', '), c.reason]),
    ),
  );
  if (r.stores.length > 0) {
    out.push(
      '',
      ...table(
        ['STORE', 'POD', 'STATE', 'LEADERS', 'REGIONS'],
        r.stores.map((s) => [
          `${s.component} ${s.id}`,
          s.pod ?? '-',
          `${s.state}${s.evicting ? ' (evicting leaders)' : ''}`,
          String(s.leaders),
          String(s.regions),
        ]),
      ),
    );
  }
  if (r.backups.length > 0 || r.operations.length > 0) {
    const rows = [
      ...r.backups.map((b) => [`schedule ${b.schedule}`, b.job, b.phase, b.finished ? ago(b.finished, now) : '-']),
      ...r.operations.map((o) => [o.job.startsWith('restore-') ? 'restore' : 'backup', o.job, o.phase, '-']),
    ];
    out.push('', ...table(['BACKUP', 'JOB', 'PHASE', 'FINISHED'], rows));
  }
  if (r.logBackups.length > 0) {
    out.push(
      '',
      ...table(
        ['LOG BACKUP', 'STATE', 'CHECKPOINT', 'LAG'],
        r.logBackups.map((t) => [t.task, t.state, t.checkpoint, `${t.lagSeconds}s`]),
      ),
    );
  }
  if (r.initializer)
    out.push('', `Initializer ${r.initializer.name}: ${r.initializer.phase}${r.initializer.note ? ` (${r.initializer.note})` : ''}`);
  if (r.sqlAccounts.length > 0)
    out.push(
      '',
      ...table(
        ['SQL ACCOUNT', 'KIND', 'STATE', 'NOTE'],
        r.sqlAccounts.map((a) => [a.account, a.kind, a.state, a.note ?? '-']),
      ),
    );
  if (r.unmanagedAccounts.length > 0) out.push('', `Unmanaged SQL accounts (left alone): ${r.unmanagedAccounts.join(', ')}`);
  if (r.resourceGroups.length > 0)
    out.push(
      '',
      ...table(
        ['RESOURCE GROUP', 'STATE', 'NOTE'],
        r.resourceGroups.map((g) => [g.group, g.state, g.note ?? '-']),
      ),
    );
  if (r.changefeeds.length > 0)
    out.push(
      '',
      ...table(
        ['CHANGEFEED', 'PHASE', 'STATE', 'CHECKPOINT', 'LAG'],
        r.changefeeds.map((f) => [
          f.id,
          f.phase,
          f.state ?? '-',
          f.checkpoint ?? '-',
          f.lagSeconds === undefined ? '-' : `${f.lagSeconds}s`,
        ]),
      ),
    );
  if (r.warnings.length > 0) {
    out.push('', 'Warning Events (last hour):');
    for (const w of r.warnings)
      out.push(`  ${ago(w.time, now)}  ${w.object}  ${w.reason}${w.count > 1 ? ` (x${w.count})` : ''}: ${w.message}`);
  }
  if (r.problems.length > 0) {
    out.push('', 'Problems:');
    for (const p of r.problems) out.push(`  - ${p}`);
  }
  return `${out.join('\n')}\n`;
}
