/**
 * Replacing the Pods Git names in `tidb-gitops.io/replace`: a PD member or a TiKV or TiFlash store
 * whose volume died with its node (or that is to start afresh for any other reason) is removed
 * safely, then its claims and Pod are deleted, and the StatefulSet brings the same ordinal back on
 * fresh volumes. One Pod at a time per component, before failover, scaling and upgrades (a member
 * that is gone for good may be what holds them), each done once: the record (`records/replacements.ts`)
 * says how far it went, and a done one stays until Git stops asking.
 *
 * - TiKV, TiFlash: the store goes offline (`DELETE /pd/api/v1/store/{id}`) and PD moves its regions
 *   away, also from a Down store, until it is Tombstone; a TiKV only while the other Up stores can hold
 *   every region's replicas (`replication.max-replicas`), as a scale-in (`store-safety.ts`).
 * - PD: leadership moves off the member first; then the member is deleted, only while the others
 *   keep a healthy majority.
 * - Then the claims and the Pod go (claims first: the StatefulSet does not create the Pod again while
 *   its claim is being deleted, so the new Pod can only start on a fresh volume). The Pod is deleted
 *   without a grace period: its node may be gone, and its store or member is removed already.
 * - Done once the Pod is Ready again and PD has its new store Up, or its new member healthy.
 */
import { REPLACE_VOLUME_ANNOTATION } from '../model/annotations';
import { isReady, isTerminating, ordinalOf, type Pod } from '../model/objects';
import type { ComponentSettings } from '../../tidbcluster/contract';
import { names } from '../../tidbcluster/names';
import type { ReplaceRecord } from '../records/replacements';
import { memberOfPod, pdOf, pdStoresOf, storeOfPod, volumesOfPod } from '../view/lookups';
import type { ComponentState, PdState, PlanInput } from '../view/view';
import { act, wait, waitPd, type Step } from './action';
import { removalHold } from './store-safety';
import { transferTarget } from './upgrade-pd';

type Kind = ReplaceRecord['component'];
const isReplaceable = (k: string): k is Kind => k === 'pd' || k === 'tikv' || k === 'tiflash';

/** The Pods Git asks this component to replace (the renderer checked them). */
export function replaceRequested(settings: ComponentSettings): string[] {
  return Array.isArray(settings.replace) ? settings.replace.filter((p): p is string => typeof p === 'string') : [];
}

/**
 * The Pods asked to be replaced: by Git, and by tidb-operator's request on the Pod itself (the same
 * replacement, asked with kubectl).
 */
export function replacePodsAsked(c: ComponentState, settings: ComponentSettings): string[] {
  const fromPods = c.pods
    .filter((p) => !isTerminating(p) && p.metadata.annotations?.[REPLACE_VOLUME_ANNOTATION] === 'true')
    .map((p) => p.metadata.name!);
  return [...new Set([...replaceRequested(settings), ...fromPods])];
}

/** The next replacement step of a component, or undefined when none is asked for or all are done. */
export function replaceStep(input: PlanInput, c: ComponentState, settings: ComponentSettings): Step | undefined {
  const kind = c.kind;
  if (!isReplaceable(kind)) return undefined;
  const fromGit = replaceRequested(settings);
  const asked = replacePodsAsked(c, settings);
  const records = input.replacements ?? {};
  for (const [pod, r] of Object.entries(records)) {
    // A Pod's own request goes with the Pod it replaces: its record stays until the replacement is done.
    if (r.component === kind && !asked.includes(pod) && (r.requestedBy !== 'pod' || r.phase === 'done')) {
      const who = r.requestedBy === 'pod' ? 'the replaced Pod carried the request' : 'Git no longer asks for it';
      return act(`forgetting the replacement of ${pod}: ${who}`, { type: 'replace-set', pod, record: undefined });
    }
  }
  for (const pod of [...asked, ...Object.keys(records).filter((p) => records[p].component === kind && !asked.includes(p))]) {
    const r = records[pod];
    if (r?.phase === 'done') continue;
    if (!r) return begin(input, c, kind, pod, !fromGit.includes(pod));
    if (r.phase === 'removing') return kind === 'pd' ? removeMember(input, pod, r) : removeStore(input, pod, r);
    return recreate(input, c, pod, r);
  }
  return undefined;
}

/** Whether a replacement of this component has begun and is not done: it holds the component's other operations. */
export function replaceUnderWay(input: PlanInput, kind: string): boolean {
  return Object.values(input.replacements ?? {}).some((r) => r.component === kind && r.phase !== 'done');
}

function podOf(input: PlanInput, c: ComponentState, pod: string): Pod | undefined {
  const ord = ordinalOf(pod, names.statefulSet(input.cluster.name, c.kind));
  return ord === undefined ? undefined : c.pods.find((p) => p.metadata.name === pod);
}

/** The record that starts a replacement: what is replaced, by identity, once the removal is safe. */
function begin(input: PlanInput, c: ComponentState, kind: Kind, pod: string, byPod: boolean): Step {
  const live = podOf(input, c, pod);
  const base = {
    component: kind,
    phase: 'removing' as const,
    ...(byPod && { requestedBy: 'pod' as const }),
    startedAt: new Date(input.now).toISOString(),
    ...(live?.metadata.uid !== undefined && { podUid: live.metadata.uid }),
    volumes: volumesOfPod(input.volumes ?? [], c.sts, pod).map((v) => ({ name: v.metadata.name!, uid: v.metadata.uid ?? '' })),
  };
  let record: ReplaceRecord;
  let what: string;
  if (kind === 'pd') {
    const pd = pdOf(input);
    if (typeof pd === 'string') return waitPd(pd);
    const member = memberOfPod(pd.members, pod);
    const refusal = member && quorumRefusal(pd, member.memberId, pod);
    if (refusal) return refuse(pod, refusal);
    if (member && pd.leader === member.name) {
      const to = transferTarget(input, c, pd, pod);
      if (!to) return refuse(pod, `${pod} leads PD and no other member is healthy to take over`);
      return act(`moving PD leadership off ${pod} before it is replaced`, { type: 'transfer-leader', pod, from: member.name, to });
    }
    record = { ...base, ...(member && { memberId: member.memberId }) };
    what = member ? `PD member ${member.name} is deleted` : `${pod} has no PD member`;
  } else {
    const pd = pdStoresOf(input);
    if (typeof pd === 'string') return waitPd(pd);
    const store = storeOfPod(pd.stores, input.cluster.name, kind, pod);
    const hold = store && removalHold(pd, kind, store);
    if (hold?.why === 'max-replicas-unknown') return wait(`reading PD max-replicas before replacing ${pod}`);
    if (hold?.why === 'too-few-up-stores') {
      return refuse(
        pod,
        `only ${hold.others} other TiKV stores are Up and PD keeps ${hold.maxReplicas} replicas of each region (replication.max-replicas): its regions would have nowhere to go`,
      );
    }
    record = { ...base, ...(store && { storeId: store.id }) };
    what = store ? `store ${store.id} goes offline until PD reports it Tombstone` : `${pod} has no store in PD`;
  }
  const asker = byPod ? `its ${REPLACE_VOLUME_ANNOTATION} annotation` : 'Git';
  return act(
    `replacing ${pod} as ${asker} asks: ${what}`,
    { type: 'replace-set', pod, record },
    {
      type: 'Warning',
      reason: 'ReplaceMember',
      message: `replacing ${pod} (${byPod ? REPLACE_VOLUME_ANNOTATION : 'tidb-gitops.io/replace'}): ${what}; then its volumes and Pod are deleted and it starts again on fresh volumes`,
      pod,
    },
  );
}

/** Why deleting this member now would cost PD its majority, or undefined. */
function quorumRefusal(pd: PdState, memberId: string, pod: string): string | undefined {
  const others = pd.members.filter((m) => m.memberId !== memberId);
  const healthy = others.filter((m) => m.healthy).length;
  if (healthy * 2 > others.length) return undefined;
  return `removing ${pod} would leave ${healthy} healthy of ${others.length} PD members, not a majority`;
}

function refuse(pod: string, why: string): Step {
  const reason = `cannot replace ${pod} yet: ${why}`;
  return wait(reason, { type: 'Warning', reason: 'ReplaceRefused', message: reason, pod });
}

function removeStore(input: PlanInput, pod: string, r: ReplaceRecord): Step {
  const pd = pdStoresOf(input);
  if (typeof pd === 'string') return waitPd(pd);
  const store = r.storeId === undefined ? undefined : pd.stores.find((s) => s.id === r.storeId);
  if (store && store.state === 'Offline') {
    return wait(`replacing ${pod}: store ${store.id} is Offline, PD is moving its ${store.regionCount} regions away`);
  }
  if (store && store.state !== 'Tombstone') {
    return act(`replacing ${pod}: taking store ${store.id} offline; PD moves its regions away`, {
      type: 'delete-store',
      pod,
      storeId: store.id,
    });
  }
  return act(
    `replacing ${pod}: ${store || r.storeId !== undefined ? `store ${r.storeId} is Tombstone` : 'it has no store'}; its volumes and Pod go next`,
    {
      type: 'replace-set',
      pod,
      record: { ...r, phase: 'deleting' },
    },
  );
}

function removeMember(input: PlanInput, pod: string, r: ReplaceRecord): Step {
  const pd = pdOf(input);
  if (typeof pd === 'string') return waitPd(pd);
  const member = r.memberId === undefined ? undefined : pd.members.find((m) => m.memberId === r.memberId);
  if (member) {
    const refusal = quorumRefusal(pd, member.memberId, pod);
    if (refusal) return refuse(pod, refusal);
    return act(`replacing ${pod}: deleting PD member ${member.name}, then its volumes and Pod`, { type: 'replace-delete', pod, record: r });
  }
  return act(`replacing ${pod}: its PD member is deleted; its volumes and Pod go next`, {
    type: 'replace-set',
    pod,
    record: { ...r, phase: 'deleting' },
  });
}

/** The claims and the Pod recorded go; then the Pod comes back, and its store or member with it. */
function recreate(input: PlanInput, c: ComponentState, pod: string, r: ReplaceRecord): Step {
  const live = podOf(input, c, pod);
  const oldPod = live !== undefined && r.podUid !== undefined && live.metadata.uid === r.podUid ? live : undefined;
  const oldClaims = (input.volumes ?? []).filter((v) => r.volumes.some((x) => x.uid === v.metadata.uid));
  if (oldPod || oldClaims.some((v) => !v.metadata.deletionTimestamp)) {
    return act(`replacing ${pod}: deleting its volumes ${r.volumes.map((v) => v.name).join(', ') || '(none)'}, then the Pod`, {
      type: 'replace-delete',
      pod,
      record: r,
    });
  }
  if (oldClaims.length > 0)
    return wait(`replacing ${pod}: waiting for its old volumes ${oldClaims.map((v) => v.metadata.name).join(', ')} to be deleted`);
  if (!live || !isReady(live)) return wait(`replacing ${pod}: waiting for it to start again on fresh volumes`);
  const back = replacementBack(input, c.kind as Kind, pod, r);
  if ('wait' in back) return wait(`replacing ${pod}: ${back.wait}`, undefined, back.pdUnreadable ? 'pd-unreadable' : undefined);
  return act(
    `${pod} is replaced: ${back.done}`,
    { type: 'replace-set', pod, record: { ...r, phase: 'done', doneAt: new Date(input.now).toISOString() } },
    {
      type: 'Normal',
      reason: 'MemberReplaced',
      message: `${pod} is replaced: ${back.done}`,
      pod,
    },
  );
}

/**
 * What shows the new Pod serving (its new store Up, its new member healthy), or what it waits for
 * (`pdUnreadable`: PD's view, which says it, could not be read).
 */
function replacementBack(
  input: PlanInput,
  kind: Kind,
  pod: string,
  r: ReplaceRecord,
): { readonly done: string } | { readonly wait: string; readonly pdUnreadable?: true } {
  if (kind === 'pd') {
    const pd = pdOf(input);
    if (typeof pd === 'string') return { wait: pd, pdUnreadable: true };
    const m = memberOfPod(pd.members, pod);
    if (!m || m.memberId === r.memberId || !m.healthy) return { wait: 'waiting for its new PD member to be healthy' };
    return { done: `PD member ${m.memberId} in place of ${r.memberId ?? 'none'}` };
  }
  const pd = pdStoresOf(input);
  if (typeof pd === 'string') return { wait: pd, pdUnreadable: true };
  const store = storeOfPod(pd.stores, input.cluster.name, kind, pod);
  if (!store || store.id === r.storeId || store.state !== 'Up') return { wait: 'waiting for its new store to be Up' };
  return { done: `store ${store.id} in place of ${r.storeId ?? 'none'}` };
}
