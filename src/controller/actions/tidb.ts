/**
 * TiDB's smooth upgrade: DDL paused before the first TiDB Pod restarts and resumed once the upgrade
 * is over. The pause is recorded in the status before TiDB is asked, so that a controller that dies
 * once TiDB paused DDL finds the record and resumes it.
 */
import { tidbStatusBase, tidbUpgradeOp } from '../clients/tidb';
import { rfc3339, type Handlers } from './context';

export const tidbActions: Pick<Handlers, 'ddl-pause' | 'ddl-resume'> = {
  async 'ddl-pause'(action, ctx) {
    const since = ctx.records.ddlPause?.since ?? rfc3339(ctx.now);
    await ctx.records.setDdlPause({ source: action.source, target: action.target, state: 'starting', since });
    await tidbUpgradeOp(tidbStatusBase(ctx.cluster, action.pod), 'start', ctx.tls);
    await ctx.records.setDdlPause({ source: action.source, target: action.target, state: 'paused', since });
    ctx.log.info(ctx.reason, { pod: action.pod });
  },

  async 'ddl-resume'(action, ctx) {
    await tidbUpgradeOp(tidbStatusBase(ctx.cluster, action.pod), 'finish', ctx.tls);
    await ctx.records.setDdlPause(undefined);
    ctx.log.info(ctx.reason, { pod: action.pod, stale: action.stale });
  },
};
