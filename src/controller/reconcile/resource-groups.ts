/**
 * Each pass, the resource groups Git declares (`ResourceGroup`; `ControllerClusterInfo.sql.resourceGroups`),
 * before the SQL accounts (a user's `RESOURCE GROUP` must exist first): logged in as root
 * (reconcile/sql-login.ts), the groups are read from `information_schema.resource_groups`, planned
 * (plan/resource-groups.ts) and each group's statement run, recording each group it manages once its
 * statement ran. Events on the TiDB StatefulSet: `ResourceGroupCreated`, `ResourceGroupChanged`,
 * `ResourceGroupDropped`, `ResourceGroupDrift`, `ResourceGroupFailed`; `status.json` says under
 * `resourceGroups` how each declared group stands, which are unmanaged and which kept. A side task.
 */
import { hidePasswords } from '../../base/sql-secrets';
import type { SqlAccountsInfo } from '../../tidbcluster/contract/sql-accounts';
import type { EventRecorder } from '../clients/events';
import { describe } from '../clients/kube-errors';
import { MysqlError } from '../clients/mysql';
import { groupGrammar, readGroups, tidbRelease } from '../clients/resource-groups';
import { planResourceGroups, type GroupReport } from '../plan/resource-groups';
import type { StatusRecords } from '../records/store';
import type { Logger } from '../runtime/log';
import { SaidOnce } from './said-once';
import type { SidePass, SideTask } from './side-task';
import { connectAsRoot, rootLogin, type SqlLoginDeps, sqlEventTarget, sqlTarget, SqlWait } from './sql-login';

/** How a declared group stands, in `status.json`. */
export interface ResourceGroupStatus extends Omit<GroupReport, 'state'> {
  /** `waiting`: nothing was looked at (`reason` says why); `failed`: its statement failed this pass. */
  readonly state: GroupReport['state'] | 'waiting' | 'failed';
}

/** The `resourceGroups` part of `status.json`. */
export interface ResourceGroupsStatus {
  /** Why nothing was looked at this pass. @default none */
  readonly waiting?: string;
  readonly groups: readonly ResourceGroupStatus[];
  /** Groups on the server neither declared nor managed, left alone. */
  readonly unmanaged: readonly string[];
  /** Managed groups whose document left Git with `Retain`: kept on the server, no longer changed. */
  readonly kept: readonly string[];
}

export interface ResourceGroupsDeps extends SqlLoginDeps {
  readonly event: EventRecorder;
  readonly log: Logger;
}

export class ResourceGroupsKeeper implements SideTask {
  readonly name = 'resource groups';
  readonly readsOnly = false;
  private status?: ResourceGroupsStatus;
  /** What was last said per group (a failure, drift), so that a standing one is said once. */
  private readonly announced = new SaidOnce();

  constructor(
    private readonly d: ResourceGroupsDeps,
    private readonly records: StatusRecords,
  ) {}

  /** The status of the last pass, for `status.json`. */
  current(): ResourceGroupsStatus | undefined {
    return this.status;
  }

  async run({ tidbPods }: SidePass): Promise<void> {
    const info = this.declared();
    if (!info) {
      this.status = undefined;
      return;
    }
    const target = sqlTarget(this.d.cluster, this.records, tidbPods, 'the resource groups');
    if ('waiting' in target) return this.wait(info, target.waiting);
    let known: string[] = [];
    try {
      const login = await rootLogin(this.d, info);
      known = [login.password];
      const conn = await connectAsRoot(this.d, info.loginSecret, target.pod, login);
      try {
        await this.keep(info, conn);
      } finally {
        conn.close().catch(() => undefined);
      }
    } catch (err) {
      if (err instanceof SqlWait) return this.wait(info, err.message);
      this.d.log.warn('could not bring the resource groups up to date; tried again next pass', {
        pod: target.pod,
        error: hidePasswords(describe(err), { known }),
      });
    }
  }

  private async keep(info: SqlAccountsInfo, conn: Parameters<typeof readGroups>[0]): Promise<void> {
    const grammar = groupGrammar(tidbRelease(conn.serverVersion));
    const server = new Map((await readGroups(conn, grammar)).map((g) => [g.name, g]));
    const plan = planResourceGroups({ groups: info.resourceGroups ?? [], server, records: this.records.resourceGroups, grammar });
    const failed = new Map<string, string>();
    for (const step of plan.steps) {
      if (step.statement !== undefined) {
        try {
          await conn.query(step.statement);
        } catch (err) {
          if (!(err instanceof MysqlError) || err.code === 0) throw err;
          const error = `${step.statement.split(' ', 3).join(' ')} failed: ${err.message}`;
          failed.set(step.group, error);
          await this.announce(step.group, 'Warning', 'ResourceGroupFailed', `resource group ${step.group}: ${error}`);
          continue;
        }
        const reason =
          step.news === 'created' ? 'ResourceGroupCreated' : step.news === 'dropped' ? 'ResourceGroupDropped' : 'ResourceGroupChanged';
        this.d.log.info(`resource group ${step.group} ${step.news}`, { group: step.group });
        await this.d.event(sqlEventTarget(this.d.cluster), 'Normal', reason, `resource group ${step.group}: ${step.news}`, true);
        this.announced.forget(step.group);
      }
      await this.records.setResourceGroup(step.group, step.record);
    }
    for (const g of plan.groups) {
      // As Git says again (put back by hand): a drift or refusal that comes back is said again.
      if (g.state === 'ok') this.announced.forget(g.group);
      if (g.state === 'drift')
        await this.announce(
          g.group,
          'Warning',
          'ResourceGroupDrift',
          `resource group ${g.group} was changed by hand: ${g.drift!.join('; ')}`,
        );
      if (g.state === 'refused') await this.announce(g.group, 'Warning', 'ResourceGroupFailed', `resource group ${g.group}: ${g.reason}`);
    }
    this.status = {
      groups: plan.groups.map((g): ResourceGroupStatus => {
        const error = failed.get(g.group);
        if (error !== undefined) return { ...g, state: 'failed', reason: error };
        if (g.state !== 'changing') return g;
        const { corrected, ...rest } = g;
        return { ...rest, state: 'ok', ...(g.drift && { drift: g.drift.map((x) => `${x} (corrected)`) }) };
      }),
      unmanaged: plan.unmanaged,
      kept: plan.kept,
    };
  }

  /** What Git declares; with none declared but some still managed, none, so that those with `Delete` are dropped. */
  private declared(): SqlAccountsInfo | undefined {
    const { sql, initializer } = this.d.cluster;
    if (sql?.resourceGroups?.length) return sql;
    if (Object.keys(this.records.resourceGroups).length === 0) return undefined;
    if (sql) return sql;
    if (initializer?.passwordSecret === undefined) return undefined;
    return { loginSecret: initializer.passwordSecret, ...(initializer.tls && { tls: initializer.tls }), accounts: [] };
  }

  /** An Event said once for as long as the same thing stands. */
  private async announce(group: string, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const key = `${reason}\n${message}`;
    if (!this.announced.news(group, key)) return;
    this.d.log.warn(message, { group });
    await this.d.event(sqlEventTarget(this.d.cluster), type, reason, message, true);
  }

  private wait(info: SqlAccountsInfo, why: string): void {
    this.status = {
      waiting: why,
      groups: (info.resourceGroups ?? []).map((g) => ({ document: g.document, group: g.name, state: 'waiting', reason: why })),
      unmanaged: this.status?.unmanaged ?? [],
      kept: this.status?.kept ?? [],
    };
  }
}
