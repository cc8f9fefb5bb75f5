/**
 * PD in an upgrade, as tidb-operator's `pd_upgrader.go` steps it: a member restarts only while the
 * others keep a healthy majority (and, with `pd-check-quorum-before-upgrade`, one more), after PD's
 * leadership has moved to another member; an upgraded member counts once it is healthy and, from PD
 * v8.5.2, ready (`/pd/api/v2/ready`: its regions are loaded).
 */
import { names } from '../../tidbcluster/names';
import { ordinalOf } from '../model/objects';
import { replicasOf } from '../model/settings';
import { memberOfPod, pdOf } from '../view/lookups';
import type { ComponentState, PdState, PlanInput } from '../view/view';
import { OK, wait, waitPd, type UpgradeChecks } from './action';

export const pdUpgrade: UpgradeChecks = {
  upgraded(input, _c, pod) {
    const name = pod.metadata.name!;
    const pd = pdOf(input);
    if (typeof pd === 'string') return waitPd(pd);
    const member = memberOfPod(pd.members, name);
    if (!member?.healthy) return wait(`waiting for PD member ${name} to be healthy`);
    // PD v8.5.2+ says when a member has loaded its regions (older PD answers 404: ready).
    const ready = input.probes?.pdReady?.[name];
    if (!ready) return wait(`checking whether PD member ${member.name} is ready (/pd/api/v2/ready)`);
    if (!ready.ok) return wait(`waiting for PD member ${member.name} to be ready: ${ready.detail}`);
    return OK;
  },

  prepare(input, c, pod, settings) {
    const name = pod.metadata.name!;
    const pd = pdOf(input);
    if (typeof pd === 'string') return waitPd(pd);
    const member = memberOfPod(pd.members, name);
    const others = pd.members.filter((m) => m !== member);
    if (member && others.length > 0 && others.filter((m) => m.healthy).length <= pd.members.length / 2) {
      return wait(`restarting ${name} now would leave PD without a healthy majority`);
    }
    if (settings.checkQuorumBeforeUpgrade === true) {
      // tidb-operator's IsPDStable: more healthy members than a majority plus one.
      const healthy = pd.members.filter((m) => m.healthy).length;
      const needed = Math.floor(pd.members.length / 2) + 2;
      if (healthy < needed) {
        return wait(
          `pd-check-quorum-before-upgrade: ${healthy} of ${pd.members.length} PD members are healthy; ${name} restarts once ${needed} are`,
        );
      }
    }
    if (member && pd.leader === member.name) {
      const target = transferTarget(input, c, pd, name);
      if (target) {
        return {
          ok: false,
          reason: `moving PD leadership from ${member.name} to ${target} before restarting ${name}`,
          action: { type: 'transfer-leader', pod: name, from: member.name, to: target },
          event: {
            type: 'Normal',
            reason: 'PDLeaderTransfer',
            message: `transferring PD leadership from ${member.name} to ${target}`,
            pod: name,
          },
        };
      }
    }
    return OK;
  },
};

/** Leader transfer target as the operator picks it: the highest healthy ordinal above, else the lowest below. */
export function transferTarget(input: PlanInput, c: ComponentState, pd: PdState, pod: string): string | undefined {
  const sts = names.statefulSet(input.cluster.name, 'pd');
  const self = ordinalOf(pod, sts)!;
  const healthy = new Map<number, string>();
  for (const m of pd.members) {
    if (!m.healthy) continue;
    const ord = ordinalOf(m.name.split('.')[0], sts);
    if (ord !== undefined && ord !== self && ord < replicasOf(c.sts)) healthy.set(ord, m.name);
  }
  const above = [...healthy.keys()].filter((o) => o > self).sort((a, b) => b - a);
  const below = [...healthy.keys()].filter((o) => o < self).sort((a, b) => a - b);
  const ord = above[0] ?? below[0];
  if (ord !== undefined) return healthy.get(ord);
  // Peer members of another Kubernetes cluster (acrossK8s, heterogeneous).
  return pd.members.find((m) => m.healthy && !m.name.startsWith(`${pod}`) && ordinalOf(m.name.split('.')[0], sts) === undefined)?.name;
}
