/**
 * Carries out the action a plan asks for, through the handler of its family: a new action is a new
 * handler in the module of its family (or a new module), never a new branch here.
 */
import { describe } from '../clients/kube-errors';
import type { Pod } from '../model/objects';
import type { Action } from '../plan/action';
import type { ComponentPlan } from '../plan/plan';
import type { Logger } from '../runtime/log';
import type { ActionDeps, Handler, Handlers } from './context';
import { evictActions } from './evict';
import { failoverActions } from './failover';
import { gracefulActions } from './graceful';
import { pdActions } from './pd';
import { podActions } from './pods';
import { replaceActions } from './replace';
import { statefulSetActions } from './statefulset';
import { tidbActions } from './tidb';
import { volumeActions } from './volumes';

export class Executor {
  private readonly handlers: Handlers;

  constructor(
    private readonly deps: ActionDeps,
    private readonly log: Logger,
  ) {
    this.handlers = {
      ...statefulSetActions,
      ...pdActions(),
      ...evictActions,
      ...podActions,
      ...volumeActions,
      ...gracefulActions,
      ...tidbActions,
      ...failoverActions(),
      ...replaceActions(),
    };
  }

  /** Carries out one action; false when it failed (logged, retried on the next pass) or is still under way. */
  async execute(p: ComponentPlan, action: Action, pods: readonly Pod[], now: number): Promise<boolean> {
    const log = this.log.with({ component: p.kind, action: action.type });
    const labels = { component: p.kind, action: action.type };
    try {
      const handler = this.handlers[action.type] as Handler<Action['type']>;
      const done = await handler(action, { ...this.deps, kind: p.kind, reason: p.reason, pods, now, log });
      if (done === false) return false;
      this.deps.metrics.inc('tidb_gitops_actions_total', labels);
      return true;
    } catch (err) {
      this.deps.metrics.inc('tidb_gitops_action_errors_total', labels);
      log.warn('action failed; it is tried again on the next pass', { error: describe(err) });
      return false;
    }
  }
}
