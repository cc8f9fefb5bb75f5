/**
 * The `<cluster>-status` ConfigMap, and every record the controller keeps in it so that a restart (or
 * another replica taking over) finds them: failure records, the evict-leader schedulers it added, the
 * DDL pause of a TiDB upgrade, StatefulSets being re-created, each component's last operation, the runs
 * of the BackupSchedules, the one-shot Backups and Restores, the initializer, the SQL accounts it manages. The one module that
 * reads and writes it.
 *
 * A record changes in memory and is written at once; when the write fails, the old value is put back,
 * so memory never claims what the cluster does not hold, and the caller acts only on what is written.
 */
import { LABEL, names, selectorLabels, type ComponentKind, type Labels } from '../../tidbcluster/names';
import type { KubeAccess } from '../clients/kube';
import { backupRunsOf, type BackupRun } from './backup-runs';
import { operationsOf, type OperationRecord } from './operations';
import { initializerOf, type InitializerRecord } from './initializer';
import { logTasksOf, type LogTaskRecord } from './log-tasks';
import { ddlPauseOf, type DdlPauseRecord } from './ddl-pause';
import { evictionsOf, type EvictionRecord } from './evictions';
import { replacementsOf, type ReplaceRecord } from './replacements';
import { failoverOf, NO_FAILOVER, type ComponentFailover, type FailoverKind, type FailoverState } from './failover';
import { lastOperationsOf, type LastOperation } from './last-operations';
import { recreateKey, recreateRecordsOf, type RecreateRecord } from './recreate';
import { changefeedsOf, type ChangefeedRecord } from './changefeeds';
import { resourceGroupsOf, type ResourceGroupRecord } from './resource-groups';
import { onlineConfigOf, type OnlineConfigComponent, type OnlineConfigRecord } from './online-config';
import { sqlAccountsOf, type SqlAccountRecord } from './sql-accounts';

/** The key of the status document (JSON, for people and tools) in the ConfigMap's data. */
export const STATUS_KEY = 'status.json';

/** A status document written before, or undefined when there is none or it is not JSON (start afresh). */
export function parseStatus(json: string | undefined): unknown {
  if (!json) return undefined;
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
}

/**
 * The status ConfigMap's labels: the discovery's, without `app.kubernetes.io/instance`. Argo CD's label
 * tracking takes an object with that label and the Application's name for one of the Application's,
 * and prunes it when Git does not have it, which Git never has: the records of what ran, the
 * operations' above all, would go with it, and what they keep from running twice would run again.
 */
export function statusLabels(cluster: string): Labels {
  const { [LABEL.instance]: _instance, ...labels } = selectorLabels(cluster, 'discovery');
  return labels;
}

export class StatusRecords {
  private failoverState: FailoverState = NO_FAILOVER;
  private evictionRecords: Record<string, EvictionRecord> = {};
  private replaceRecords: Record<string, ReplaceRecord> = {};
  private ddlPauseRecord?: DdlPauseRecord;
  private recreateRecords = new Map<string, RecreateRecord>();
  private lastOps = new Map<ComponentKind, LastOperation>();
  private runs: Record<string, BackupRun> = {};
  private ops: Record<string, OperationRecord> = {};
  private logs: Record<string, LogTaskRecord> = {};
  private init?: InitializerRecord;
  private accounts: Record<string, SqlAccountRecord> = {};
  private groups: Record<string, ResourceGroupRecord> = {};
  private feeds: Record<string, ChangefeedRecord> = {};
  private online: Partial<Record<OnlineConfigComponent, OnlineConfigRecord>> = {};
  private restored = false;
  /** The status document last written (or found at start), kept when only the records change. */
  private doc?: string;
  /** What was last written: the document and the re-creation records. */
  private written?: string;
  /** Makes the status document of the pass under way; the last one written when none is set. */
  private compose?: () => string;

  constructor(
    private readonly kube: Pick<KubeAccess, 'getConfigMapData' | 'applyConfigMap'>,
    private readonly cluster: string,
  ) {}

  /** Failure records and health history. */
  get failover(): FailoverState {
    return this.failoverState;
  }

  /** The evict-leader schedulers this controller added, by store id. */
  /** The replacements Git asked for, by Pod name. */
  get replacements(): Readonly<Record<string, ReplaceRecord>> {
    return this.replaceRecords;
  }

  get evictions(): Readonly<Record<string, EvictionRecord>> {
    return this.evictionRecords;
  }

  /** The DDL pause this controller asked TiDB for in a TiDB upgrade. */
  get ddlPause(): DdlPauseRecord | undefined {
    return this.ddlPauseRecord;
  }

  /** StatefulSets being re-created for larger volumes, by component. */
  get recreates(): ReadonlyMap<string, RecreateRecord> {
    return this.recreateRecords;
  }

  /** Each component's last operation. */
  get lastOperations(): ReadonlyMap<ComponentKind, LastOperation> {
    return this.lastOps;
  }

  /** The runs of the BackupSchedules' CronJobs, by Job name. */
  get backupRuns(): Readonly<Record<string, BackupRun>> {
    return this.runs;
  }

  /** The one-shot Backups and Restores, by Job name. */
  get operations(): Readonly<Record<string, OperationRecord>> {
    return this.ops;
  }

  /** The log backups declared in Git (and those that left it, until stopped), by ConfigMap name. */
  get logTasks(): Readonly<Record<string, LogTaskRecord>> {
    return this.logs;
  }

  /** The cluster's initializer: root's password, users and the initial SQL. */
  get initializer(): InitializerRecord | undefined {
    return this.init;
  }

  /** The SQL accounts the controller manages, by `'user'@'host'`. */
  get sqlAccounts(): Readonly<Record<string, SqlAccountRecord>> {
    return this.accounts;
  }

  /** The resource groups the controller manages, by name. */
  get resourceGroups(): Readonly<Record<string, ResourceGroupRecord>> {
    return this.groups;
  }

  /** The TiCDC changefeeds the controller manages, by id. */
  get changefeeds(): Readonly<Record<string, ChangefeedRecord>> {
    return this.feeds;
  }

  /** The config applied online, per component. */
  get onlineConfig(): Readonly<Partial<Record<OnlineConfigComponent, OnlineConfigRecord>>> {
    return this.online;
  }

  /** The records are read again on the next `restore`: this replica has just become the leader. */
  forget(): void {
    this.restored = false;
  }

  /** Reads the records from the ConfigMap, once per term as leader. */
  async restore(): Promise<void> {
    if (this.restored) return;
    const data = await this.kube.getConfigMapData(names.status(this.cluster));
    const doc = parseStatus(data?.[STATUS_KEY]);
    this.lastOps = lastOperationsOf(doc);
    this.failoverState = failoverOf(doc);
    this.evictionRecords = evictionsOf(doc);
    this.replaceRecords = replacementsOf(doc);
    this.ddlPauseRecord = ddlPauseOf(doc);
    this.runs = backupRunsOf(doc);
    this.ops = operationsOf(doc);
    this.logs = logTasksOf(doc);
    this.init = initializerOf(doc);
    this.accounts = sqlAccountsOf(doc);
    this.groups = resourceGroupsOf(doc);
    this.feeds = changefeedsOf(doc);
    this.online = onlineConfigOf(doc);
    this.recreateRecords = recreateRecordsOf(data);
    this.doc = data?.[STATUS_KEY];
    this.restored = true;
  }

  /**
   * How the status document is made while a pass runs, from its view and plans (undefined: the last
   * document written). A record written meanwhile goes out in the document of the pass.
   */
  composeWith(compose: (() => string) | undefined): void {
    this.compose = compose;
  }

  /** Notes since when members, stores and Pods are seen unhealthy; written with the pass's status. */
  setUnhealthySince(unhealthySince: FailoverState['unhealthySince']): void {
    this.failoverState = { ...this.failoverState, unhealthySince };
  }

  /** Notes a component's last operation; written with the pass's status. */
  setLastOperation(kind: ComponentKind, op: LastOperation): void {
    this.lastOps.set(kind, op);
  }

  /** Replaces (undefined: removes) a component's failure records. */
  async setFailover(kind: FailoverKind, next: ComponentFailover | undefined): Promise<void> {
    const previous = this.failoverState;
    const components = { ...previous.components };
    if (next) components[kind] = next;
    else delete components[kind];
    this.failoverState = { ...previous, components };
    await this.writeOrUndo(() => (this.failoverState = previous));
  }

  /** Sets (undefined: forgets) the replacement record of a Pod. */
  async setReplacement(pod: string, record: ReplaceRecord | undefined): Promise<void> {
    const previous = this.replaceRecords;
    const next = { ...previous };
    if (record) next[pod] = record;
    else delete next[pod];
    this.replaceRecords = next;
    await this.writeOrUndo(() => (this.replaceRecords = previous));
  }

  /** Replaces the eviction records. */
  async setEvictions(next: Record<string, EvictionRecord>): Promise<void> {
    const previous = this.evictionRecords;
    this.evictionRecords = next;
    await this.writeOrUndo(() => (this.evictionRecords = previous));
  }

  /** Replaces (undefined: removes) the DDL pause record. */
  async setDdlPause(next: DdlPauseRecord | undefined): Promise<void> {
    const previous = this.ddlPauseRecord;
    this.ddlPauseRecord = next;
    await this.writeOrUndo(() => (this.ddlPauseRecord = previous));
  }

  /** Replaces the backup run records. */
  async setBackupRuns(next: Record<string, BackupRun>): Promise<void> {
    const previous = this.runs;
    this.runs = next;
    await this.writeOrUndo(() => (this.runs = previous));
  }

  /** Replaces the operation records. */
  async setOperations(next: Record<string, OperationRecord>): Promise<void> {
    const previous = this.ops;
    this.ops = next;
    await this.writeOrUndo(() => (this.ops = previous));
  }

  /** Replaces the log backup records. */
  async setLogTasks(next: Record<string, LogTaskRecord>): Promise<void> {
    const previous = this.logs;
    this.logs = next;
    await this.writeOrUndo(() => (this.logs = previous));
  }

  /** Replaces the initializer's record. */
  async setInitializer(next: InitializerRecord): Promise<void> {
    const previous = this.init;
    this.init = next;
    await this.writeOrUndo(() => (this.init = previous));
  }

  /** Sets (undefined: forgets) the record of a SQL account. */
  async setSqlAccount(name: string, record: SqlAccountRecord | undefined): Promise<void> {
    const previous = this.accounts;
    const next = { ...previous };
    if (record) next[name] = record;
    else delete next[name];
    this.accounts = next;
    await this.writeOrUndo(() => (this.accounts = previous));
  }

  /** Sets (undefined: forgets) the record of a resource group. */
  async setResourceGroup(name: string, record: ResourceGroupRecord | undefined): Promise<void> {
    const previous = this.groups;
    const next = { ...previous };
    if (record) next[name] = record;
    else delete next[name];
    this.groups = next;
    await this.writeOrUndo(() => (this.groups = previous));
  }

  /** Sets (undefined: forgets) the record of a changefeed. */
  async setChangefeed(id: string, record: ChangefeedRecord | undefined): Promise<void> {
    const previous = this.feeds;
    const next = { ...previous };
    if (record) next[id] = record;
    else delete next[id];
    this.feeds = next;
    await this.writeOrUndo(() => (this.feeds = previous));
  }

  /** Sets (undefined: forgets) what was applied online to a component. */
  async setOnlineConfig(component: OnlineConfigComponent, record: OnlineConfigRecord | undefined): Promise<void> {
    const previous = this.online;
    const next = { ...previous };
    if (record) next[component] = record;
    else delete next[component];
    this.online = next;
    await this.writeOrUndo(() => (this.online = previous));
  }

  /** Adds (undefined: removes) a component's re-creation record. */
  async setRecreate(kind: string, record: RecreateRecord | undefined): Promise<void> {
    const previous = this.recreateRecords;
    const next = new Map(previous);
    if (record) next.set(kind, record);
    else next.delete(kind);
    this.recreateRecords = next;
    await this.writeOrUndo(() => (this.recreateRecords = previous));
  }

  /** Writes the status document and the re-creation records, when either changed. */
  async write(doc: string): Promise<void> {
    this.doc = doc;
    const records = Object.fromEntries([...this.recreateRecords].map(([kind, r]) => [recreateKey(kind), JSON.stringify(r)]));
    const content = JSON.stringify([doc, records]);
    if (content === this.written) return;
    await this.kube.applyConfigMap(names.status(this.cluster), statusLabels(this.cluster), { [STATUS_KEY]: doc, ...records });
    this.written = content;
  }

  /** Writes the status after a record changed in memory; when the write fails, `undo` puts the old value back. */
  private async writeOrUndo(undo: () => void): Promise<void> {
    try {
      await this.write(this.compose ? this.compose() : (this.doc ?? '{}'));
    } catch (err) {
      undo();
      throw err;
    }
  }
}
