/**
 * Requests to PD: moving PD's leadership or a micro-service's primary away from a Pod before it
 * restarts or goes, and removing a member or a store before scale-in.
 */
import { PdError, transferMsPrimary } from '../clients/pd';
import type { Handlers } from './context';

/**
 * A leader or primary transfer is asked at most once per Pod in this long: the old leader steps down
 * at once and the new one is elected soon after, so a slow election is not asked again.
 */
const TRANSFER_PATIENCE_MS = 5000;

export function pdActions(): Pick<Handlers, 'transfer-leader' | 'transfer-primary' | 'delete-member' | 'delete-store'> {
  /** When a transfer away from a Pod was last asked for (a leader transfer: when the ask ended). */
  const transfers = new Map<string, number>();
  return {
    async 'transfer-primary'(action, ctx) {
      const key = `${action.service}/${action.pod}`;
      const last = transfers.get(key);
      if (last !== undefined && ctx.now - last < TRANSFER_PATIENCE_MS) return false;
      transfers.set(key, ctx.now);
      try {
        await transferMsPrimary(action.primary, action.service, action.to, ctx.tls);
      } catch (e) {
        // Refused (not unreachable): the server knows which members may lead, so let it choose.
        if (!(e instanceof PdError) || e.status === undefined || action.to === '' || action.exact) throw e;
        ctx.log.warn(`the ${action.service} primary refused ${action.to} (${e.message}); letting it choose another server`);
        await transferMsPrimary(action.primary, action.service, '', ctx.tls);
      }
      ctx.log.info(ctx.reason, { from: action.pod, to: action.to || '(any)' });
    },

    async 'transfer-leader'(action, ctx) {
      // PD may take its move timeout plus a redirect hop to answer, and the move may complete after
      // it answered (see `PdClient.transferLeader`); so patience counts from when the ask ended, and
      // the passes in between read PD's leader before it is asked again.
      const last = transfers.get(action.pod);
      if (last !== undefined && ctx.now - last < TRANSFER_PATIENCE_MS) return false;
      const started = Date.now();
      transfers.set(action.pod, ctx.now);
      let outcome: 'submitted' | 'unsettled';
      try {
        outcome = await ctx.pd.transferLeader(action.to);
      } catch (e) {
        transfers.delete(action.pod); // refused or unreachable: nothing is under way
        throw e;
      }
      transfers.set(action.pod, ctx.now + (Date.now() - started));
      if (outcome === 'unsettled') {
        ctx.log.warn(
          `PD did not confirm the leader transfer to ${action.to} in time; it may still complete, so it is not asked again for ${TRANSFER_PATIENCE_MS} ms`,
        );
        return false;
      }
      ctx.log.info(ctx.reason, { from: action.from, to: action.to });
    },

    async 'delete-member'(action, ctx) {
      await ctx.pd.deleteMemberByName(action.member);
      ctx.log.info(ctx.reason, { member: action.member });
    },

    async 'delete-store'(action, ctx) {
      await ctx.pd.deleteStore(action.storeId);
      ctx.log.info(ctx.reason, { store: action.storeId });
    },
  };
}
