/**
 * Writes to PersistentVolumeClaims: growing them to the size Git asks for, marking the claims of a
 * Pod scaled in for deferred deletion, and deleting those before their ordinal comes back.
 */
import { DEFER_DELETING_ANNOTATION } from '../model/annotations';
import { rfc3339, type Handlers } from './context';

export const volumeActions: Pick<Handlers, 'resize-volumes' | 'delete-volumes' | 'mark-volumes'> = {
  async 'resize-volumes'(action, ctx) {
    for (const v of action.volumes) {
      try {
        await ctx.kube.resizeVolume(v.name, v.uid, v.size);
      } catch (e) {
        // The API server's word is final until Git or the cluster changes: no expansion in the
        // claim's StorageClass, a claim not bound, a quota. Shown as a refusal, not retried.
        const code = (e as { code?: number }).code;
        if (code !== 403 && code !== 422) throw e;
        ctx.noteVolumeRefusal(
          ctx.kind,
          `the API server refused to grow ${v.name} to ${v.size}: ${(e as Error).message.replace(/^resize pvc \S+: /, '')}`,
        );
        throw e;
      }
    }
    ctx.log.info(ctx.reason, { volumes: action.volumes.map((v) => `${v.name}=${v.size}`) });
  },

  async 'delete-volumes'(action, ctx) {
    for (const v of action.volumes) await ctx.kube.deleteIfSame('pvc', v.name, v.uid);
    ctx.log.info(ctx.reason, { volumes: action.volumes.map((v) => v.name) });
  },

  async 'mark-volumes'(action, ctx) {
    for (const v of action.volumes) await ctx.kube.annotateVolume(v, { [DEFER_DELETING_ANNOTATION]: rfc3339(ctx.now) });
    ctx.log.info(ctx.reason, { volumes: action.volumes });
  },
};
