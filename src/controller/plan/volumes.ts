/**
 * Growing volumes from Git. The API server refuses a StatefulSet whose volumeClaimTemplates changed,
 * so a larger size in Git reaches the controller through the `<cluster>-volume-sizes` ConfigMap, and
 * the controller does what tidb-operator does (`pkg/manager/volumes/pvc_resizer.go`,
 * `pvc_replacer.go` `DeleteStatefulSetWithOrphan`): it grows each claim of the component, waits until
 * the storage has grown, then re-creates the StatefulSet with the new templates, its Pods orphaned
 * and adopted again, none of them restarted. Pure: the caller carries out the action.
 */
import { quantityToBytes } from '../../base/quantity';
import { names } from '../../tidbcluster/names';
import { ordinalOf, type Pvc, type StatefulSet } from '../model/objects';
import type { ComponentState, PlanInput } from '../view/view';
import type { Action, PlanEvent } from './action';

/** What the volume step decided: an action, a wait, a refusal, or nothing to do (undefined). */
export interface VolumeStep {
  readonly reason: string;
  readonly action?: Action;
  readonly event?: PlanEvent;
  /** The claims cannot reach the size Git asks for until Git or the cluster changes. */
  readonly refused?: boolean;
}

const storageOf = (o: { spec?: { resources?: { requests?: Record<string, unknown> } } } | undefined): string | undefined => {
  const v = o?.spec?.resources?.requests?.storage;
  return v === undefined ? undefined : String(v);
};
const bytes = (q: string | undefined): number | undefined => (q === undefined ? undefined : quantityToBytes(q));

/** The claim template sizes Git asks for that differ from the StatefulSet's, by template name. */
export function templateChanges(
  sts: StatefulSet,
  wanted: Readonly<Record<string, string>> | undefined,
): { name: string; live: string; want: string }[] {
  const out: { name: string; live: string; want: string }[] = [];
  for (const t of sts.spec?.volumeClaimTemplates ?? []) {
    const name = t.metadata?.name;
    const want = name === undefined ? undefined : wanted?.[name];
    const live = storageOf(t);
    if (name === undefined || want === undefined || live === undefined) continue;
    if (bytes(want) !== bytes(live)) out.push({ name, live, want });
  }
  return out;
}

/** A claim's size now: what the storage reports (`status.capacity`), else what was asked for. */
const capacityOf = (pvc: Pvc): string | undefined => (pvc.status?.capacity?.storage ?? storageOf(pvc)) as string | undefined;

/**
 * The next volume step of a component that is neither upgrading nor scaling; undefined when the
 * claims and the templates are at the sizes Git asks for (or Git names none).
 */
export function volumeStep(input: PlanInput, c: ComponentState, replicas: number): VolumeStep | undefined {
  const wanted = input.volumeSizes?.[c.kind];
  const changes = templateChanges(c.sts, wanted);
  if (changes.length === 0) return undefined;
  const sts = names.statefulSet(input.cluster.name, c.kind);
  const shrink = changes.filter((ch) => bytes(ch.want)! < bytes(ch.live)!);
  if (shrink.length > 0) {
    const what = shrink.map((ch) => `${ch.name} ${ch.live} -> ${ch.want}`).join(', ');
    const reason = `volumes cannot shrink (${what}): set the size back to at least ${shrink.map((ch) => ch.live).join(', ')} in Git`;
    return { reason, refused: true, event: { type: 'Warning', reason: 'VolumeShrinkRefused', message: `${sts}: ${reason}` } };
  }
  const refusal = input.volumeRefusals?.[c.kind];
  if (refusal && refusal.sizes === JSON.stringify(wanted)) {
    return {
      reason: `cannot grow the volumes: ${refusal.message}`,
      refused: true,
      event: { type: 'Warning', reason: 'VolumeResizeRefused', message: `${sts}: ${refusal.message}` },
    };
  }

  const claims = (input.volumes ?? []).filter((v) => v.metadata.labels?.['app.kubernetes.io/component'] === c.kind);
  const grow: { name: string; uid: string; size: string }[] = [];
  const unbound: string[] = [];
  const growing: string[] = [];
  for (const ch of changes) {
    const want = bytes(ch.want)!;
    for (const pvc of claims) {
      const name = pvc.metadata.name ?? '';
      const prefix = `${ch.name}-`;
      const ord = name.startsWith(prefix) ? ordinalOf(name.slice(prefix.length), sts) : undefined;
      // Claims of ordinals beyond the replicas wait for deletion or reuse: the scale-out that reuses
      // one finds it grown by the next pass.
      if (ord === undefined || ord >= replicas || pvc.metadata.deletionTimestamp) continue;
      if ((bytes(storageOf(pvc)) ?? 0) < want) {
        if (pvc.status?.phase !== 'Bound') unbound.push(name);
        else grow.push({ name, uid: pvc.metadata.uid ?? '', size: ch.want });
      } else if ((bytes(capacityOf(pvc)) ?? 0) < want) {
        const pending = pvc.status?.conditions?.some((x) => x.type === 'FileSystemResizePending' && x.status === 'True');
        growing.push(`${name} (${capacityOf(pvc)} of ${ch.want}${pending ? ', file system resize pending on the node' : ''})`);
      }
    }
  }
  const sizes = changes.map((ch) => `${ch.name} ${ch.live} -> ${ch.want}`).join(', ');
  if (grow.length > 0) {
    return {
      reason: `growing ${grow.length} claim(s) for ${sizes}`,
      action: { type: 'resize-volumes', volumes: grow },
      event: {
        type: 'Normal',
        reason: 'VolumeResize',
        message: `${sts}: growing ${grow.map((g) => g.name).join(', ')} to ${[...new Set(grow.map((g) => g.size))].join(', ')}`,
      },
    };
  }
  if (unbound.length > 0) return { reason: `waiting for ${unbound.join(', ')} to be bound before growing them (${sizes})` };
  if (growing.length > 0) return { reason: `waiting for the storage to grow: ${growing.join(', ')}` };
  return {
    reason: `every claim is at the new size; re-creating ${sts} with the new volumeClaimTemplates (${sizes}), its Pods kept`,
    action: { type: 'recreate', sizes: Object.fromEntries(changes.map((ch) => [ch.name, ch.want])) },
    event: {
      type: 'Normal',
      reason: 'VolumeTemplatesUpdate',
      message: `${sts}: re-creating the StatefulSet for ${sizes}; its Pods are orphaned and adopted again, none restarts`,
    },
  };
}
