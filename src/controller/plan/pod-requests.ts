/**
 * tidb-operator's Pod-level requests on PD and TiDB Pods (`pkg/controller/tidbcluster/pod_control.go`),
 * carried out while the cluster is idle, as the operator does. A request made with `kubectl annotate`
 * goes with its Pod: the re-created Pod does not carry it.
 *
 * - `tidb.pingcap.com/pd-transfer-leader` (`none` or `delete-pod`) on a PD Pod: PD leadership moves off
 *   the Pod while more PD members are healthy than half plus one (`IsPDStable`); with `delete-pod` the
 *   Pod is then deleted (here once it no longer leads, where the operator deletes right after asking). Past
 *   `tidb.pingcap.com/pd-evict-leader-expiration-time` the request is removed.
 * - `tidb.pingcap.com/tidb-graceful-shutdown: delete-pod` on a TiDB Pod: the Pod is deleted (TiDB
 *   shuts down gracefully within its grace period) while neither PD, TiKV nor TiDB upgrades or scales;
 *   `none` does nothing.
 * - `tidb.pingcap.com/replace-volume: "true"` on a PD, TiKV or TiFlash Pod is a replacement
 *   (`plan/replace.ts`).
 */
import type { ComponentKind } from '../../tidbcluster/names';
import { PD_TRANSFER_EXPIRY_ANNOTATION, PD_TRANSFER_REQUEST_ANNOTATION, TIDB_SHUTDOWN_REQUEST_ANNOTATION } from '../model/annotations';
import { isTerminating } from '../model/objects';
import { toMillis } from '../model/values';
import { memberOfPod, pdOf } from '../view/lookups';
import type { ComponentState, PlanInput } from '../view/view';
import { act, wait, waitPd, type Phase, type Step } from './action';
import { transferTarget } from './upgrade-pd';

/** The PD request of each Pod that has one with a value the operator knows. */
function pdRequests(c: ComponentState) {
  return c.pods
    .filter((p) => !isTerminating(p))
    .map((pod) => ({ pod, value: pod.metadata.annotations?.[PD_TRANSFER_REQUEST_ANNOTATION] }))
    .filter((r) => r.value === 'none' || r.value === 'delete-pod');
}

/** `tidb.pingcap.com/pd-transfer-leader` on a PD Pod, while PD is idle. */
export function pdTransferRequestStep(input: PlanInput, c: ComponentState): Step | undefined {
  if (c.kind !== 'pd') return undefined;
  const standing = pdRequests(c);
  if (standing.length === 0) return undefined;
  for (const { pod, value } of standing) {
    const name = pod.metadata.name!;
    const expiry = toMillis(pod.metadata.annotations?.[PD_TRANSFER_EXPIRY_ANNOTATION]);
    if (pod.metadata.annotations?.[PD_TRANSFER_EXPIRY_ANNOTATION] !== undefined && (expiry === undefined || input.now >= expiry)) {
      return act(`the PD leader transfer asked for on ${name} expired: removing the request`, {
        type: 'clear-marks',
        marks: [{ pod: name, keys: [PD_TRANSFER_REQUEST_ANNOTATION, PD_TRANSFER_EXPIRY_ANNOTATION] }],
      });
    }
    const pd = pdOf(input);
    if (typeof pd === 'string') return waitPd(pd);
    const member = memberOfPod(pd.members, name);
    const leads = member !== undefined && pd.leader === member.name;
    if (!leads && value === 'none') continue;
    // The operator's IsPDStable (pkg/pdapi/pdutil.go): more healthy members than half plus one, so
    // never with one or two members; nothing moves or goes before that.
    const healthy = pd.members.filter((m) => m.healthy).length;
    if (healthy <= Math.floor(pd.members.length / 2) + 1) {
      return wait(
        `the PD request on ${name} waits: ${healthy} of ${pd.members.length} PD members are healthy, and it needs more than half plus one`,
      );
    }
    if (leads) {
      const to = transferTarget(input, c, pd, name);
      if (!to) return wait(`the PD leader transfer asked for on ${name} waits: no other member is healthy`);
      return act(
        `moving PD leadership off ${name}, as its ${PD_TRANSFER_REQUEST_ANNOTATION} annotation asks`,
        { type: 'transfer-leader', pod: name, from: member!.name, to },
        {
          type: 'Normal',
          reason: 'PDLeaderTransfer',
          message: `transferring PD leadership from ${member!.name} to ${to}, as the Pod's ${PD_TRANSFER_REQUEST_ANNOTATION} annotation asks`,
          pod: name,
        },
      );
    }
    return act(
      `deleting ${name}, which does not lead PD, as its ${PD_TRANSFER_REQUEST_ANNOTATION}: delete-pod annotation asks`,
      { type: 'delete-pod', pod: name, uid: pod.metadata.uid },
      {
        type: 'Normal',
        reason: 'PDLeaderTransferDeletePod',
        message: `${name} does not lead PD: deleting the Pod, as its ${PD_TRANSFER_REQUEST_ANNOTATION}: delete-pod annotation asks`,
        pod: name,
      },
    );
  }
  return undefined;
}

/** `tidb.pingcap.com/tidb-graceful-shutdown: delete-pod` on a TiDB Pod, while PD, TiKV and TiDB are idle. */
export function tidbShutdownRequestStep(c: ComponentState, phases: ReadonlyMap<ComponentKind, Phase>): Step | undefined {
  if (c.kind !== 'tidb') return undefined;
  const asked = c.pods.find((p) => !isTerminating(p) && p.metadata.annotations?.[TIDB_SHUTDOWN_REQUEST_ANNOTATION] === 'delete-pod');
  if (!asked) return undefined;
  const name = asked.metadata.name!;
  const busy = (['pd', 'tikv', 'tidb'] as const).filter((k) => phases.get(k) === 'Upgrading' || phases.get(k) === 'Scaling');
  if (busy.length > 0)
    return wait(
      `deleting ${name}, as its ${TIDB_SHUTDOWN_REQUEST_ANNOTATION} annotation asks, waits until ${busy.join(', ')} ${busy.length === 1 ? 'is' : 'are'} idle`,
    );
  return act(
    `deleting ${name}, as its ${TIDB_SHUTDOWN_REQUEST_ANNOTATION}: delete-pod annotation asks`,
    { type: 'delete-pod', pod: name, uid: asked.metadata.uid },
    {
      type: 'Normal',
      reason: 'TiDBGracefulShutdown',
      message: `deleting ${name}, as its ${TIDB_SHUTDOWN_REQUEST_ANNOTATION}: delete-pod annotation asks; TiDB shuts down gracefully`,
      pod: name,
    },
  );
}
