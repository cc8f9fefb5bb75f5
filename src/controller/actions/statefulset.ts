/**
 * Writes to the component StatefulSets: the two fields the controller owns (replicas and the update
 * strategy with its partition), and re-creation with new volume claim templates, which the record in
 * the status carries across a restart of the controller.
 */
import { names } from '../../tidbcluster/names';
import { recreateRecord } from '../records/recreate';
import type { Logger } from '../runtime/log';
import type { ActionDeps, Handlers } from './context';

export const statefulSetActions: Pick<Handlers, 'apply' | 'recreate'> = {
  async apply(action, ctx) {
    await ctx.kube.applyStatefulSet(names.statefulSet(ctx.cluster.name, ctx.kind), action.replicas, action.partition);
    ctx.log.info(ctx.reason, { replicas: action.replicas, partition: action.partition });
  },

  async recreate(action, ctx) {
    const name = names.statefulSet(ctx.cluster.name, ctx.kind);
    const live = await ctx.kube.readStatefulSet(name);
    const cached = ctx.kube.statefulSets().find((s) => s.metadata.name === name);
    if (!live || live.metadata?.uid !== cached?.metadata.uid || live.metadata?.deletionTimestamp) return false;
    // The record first: a controller that dies after the delete creates the StatefulSet from it.
    const record = recreateRecord(live, action.sizes);
    await ctx.records.setRecreate(ctx.kind, record);
    await ctx.kube.deleteStatefulSetOrphan(name, record.uid);
    ctx.log.info(ctx.reason, { statefulSet: name, sizes: action.sizes });
  },
};

/**
 * Carries on with the StatefulSets being re-created: deletes (Pods orphaned) one whose record was
 * written but whose delete did not happen, creates one that is gone, and forgets the record once a
 * new StatefulSet of that name exists. True while one is still on its way.
 */
export async function finishRecreates(deps: ActionDeps, log: Logger): Promise<boolean> {
  const { kube, records } = deps;
  if (records.recreates.size === 0) return false;
  let pending = false;
  for (const [kind, record] of records.recreates) {
    const name = record.object.metadata.name as string;
    const slog = log.with({ component: kind, statefulSet: name });
    const live = await kube.readStatefulSet(name);
    if (live && live.metadata?.uid !== record.uid) {
      await records.setRecreate(kind, undefined);
      slog.info('the StatefulSet is re-created with its new volume claim templates');
      continue;
    }
    pending = true;
    if (live && !live.metadata?.deletionTimestamp) {
      await kube.deleteStatefulSetOrphan(name, record.uid);
      continue;
    }
    if (live) continue; // The garbage collector is orphaning its Pods and revisions.
    const uid = await kube.createStatefulSet(record.object);
    if (uid) {
      await kube
        .setManagedFields(name, uid, record.managedFields)
        .catch((e: Error) => slog.warn(`cannot give the field owners back: ${e.message}`));
      await deps.event(
        name,
        'Normal',
        'VolumeTemplatesUpdated',
        `${name}: created again with its new volume claim templates; its Pods are adopted, none restarted`,
        true,
      );
      slog.info('StatefulSet created again; its Pods are adopted');
    }
  }
  return pending;
}
