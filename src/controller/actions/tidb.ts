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
    const started = await tidbUpgradeOp(tidbStatusBase(ctx.cluster, action.pod), 'start', ctx.tls);
    if (!started.supported) {
      // The TiDB has no DDL pause, whatever its tag says: the upgrade goes on without one, once.
      await ctx.records.setDdlPause({ source: action.source, target: action.target, state: 'unsupported', since });
      const message = `${action.pod} has no /upgrade/start (HTTP 404): the TiDB upgrade from ${action.source} to ${action.target} goes on without pausing DDL; run no DDL until it is over`;
      ctx.log.warn(message, { pod: action.pod });
      await ctx.event(action.pod, 'Warning', 'DDLPauseUnsupported', message);
      return;
    }
    await ctx.records.setDdlPause({ source: action.source, target: action.target, state: 'paused', since });
    ctx.log.info(ctx.reason, { pod: action.pod, answer: started.answer });
  },

  async 'ddl-resume'(action, ctx) {
    const finished = await tidbUpgradeOp(tidbStatusBase(ctx.cluster, action.pod), 'finish', ctx.tls);
    await ctx.records.setDdlPause(undefined);
    ctx.log.info(ctx.reason, {
      pod: action.pod,
      stale: action.stale,
      answer: finished.supported ? finished.answer : 'no /upgrade/finish (HTTP 404): nothing to resume there',
    });
  },
};
