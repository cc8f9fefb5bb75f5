/**
 * PD's micro-services (TSO, scheduling) in an upgrade, as tidb-operator's `pd_ms_upgrader.go` steps
 * them: a Pod restarts only after its server is no longer the service's primary (the primary is
 * asked to hand over, from pd-server v8.3.0, which has the transfer API), and an upgraded Pod counts
 * once it is Ready and registered with PD again. Pure, like the planner.
 */
import { names } from '../../tidbcluster/names';
import type { MsMember } from '../clients/pd';
import { ordinalOf, type Pod } from '../model/objects';
import { podImageTag, versionAtLeast } from '../model/values';
import { pdOf, podsByOrdinal } from '../view/lookups';
import type { ComponentState, MsState, PlanInput } from '../view/view';
import { act, OK, wait, waitPd, type Step, type UpgradeChecks } from './action';

/** The first pd-server release with the micro-services' primary transfer API (tikv/pd#8157). */
export const MS_TRANSFER_SINCE = 'v8.3.0';

/**
 * From this release a TSO primary takes as transfer targets only the servers in its keyspace group
 * (tikv/pd#8530, pkg/mcs/tso/server/apis/v1/api.go `transferPrimary`). Before, it answers 200 for a
 * server outside it, which never campaigns: TSO has no primary until the transfer's expected-primary
 * lease expires (pkg/mcs/utils/expected_primary.go `TransferPrimary`, pkg/tso/global_allocator.go
 * `primaryElectionLoop`).
 */
export const TSO_GROUP_FILTER_SINCE = 'v8.4.0';

export type MsService = 'tso' | 'scheduling';
export const isMsService = (kind: string): kind is MsService => kind === 'tso' || kind === 'scheduling';

/** The Pod a registered server runs in: the first label of its service address's host. */
export function podOfMsMember(m: Pick<MsMember, 'serviceAddr'>): string | undefined {
  // A bare host:port (an advertise-listen-addr given without a scheme) is a host all the same.
  const addr = m.serviceAddr.includes('://') ? m.serviceAddr : `http://${m.serviceAddr}`;
  try {
    return new URL(addr).hostname.split('.')[0] || undefined;
  } catch {
    return undefined;
  }
}

/** PD's view of the service, or why it is unknown. */
export function msOf(input: PlanInput, service: MsService): Extract<MsState, { members: unknown }> | string {
  const pd = pdOf(input);
  if (typeof pd === 'string') return pd;
  const ms = pd.ms?.[service];
  if (!ms) return `PD's registry of ${service} servers was not read`;
  if ('error' in ms) return `PD's registry of ${service} servers unavailable: ${ms.error}`;
  return ms;
}

/**
 * PD v7.6 to v8.1 keeps its registry to itself until TiKV bootstraps the cluster. Nothing is served
 * by TSO or scheduling before then, and servers of those releases have no transfer API: an upgrade
 * needs no primary moved, and an upgraded server counts once its Pod is Ready.
 */
function registryBeforeBootstrap(input: PlanInput, service: MsService): boolean {
  const pd = pdOf(input);
  const ms = typeof pd === 'string' ? undefined : pd.ms?.[service];
  return ms !== undefined && 'error' in ms && ms.notBootstrapped === true;
}

/** An upgraded Pod counts once its server has registered with PD again. */
export function checkUpgradedMs(input: PlanInput, service: MsService, pod: Pod): Step {
  const name = pod.metadata.name!;
  if (registryBeforeBootstrap(input, service)) return OK;
  const ms = msOf(input, service);
  if (typeof ms === 'string') return waitPd(ms);
  if (!ms.members.some((m) => podOfMsMember(m) === name)) return wait(`waiting for the ${service} server of ${name} to register with PD`);
  return OK;
}

/**
 * Before a Pod restarts: when its server is the primary, the primary moves to another registered
 * server, chosen as the operator chooses (the highest ordinal above, else the lowest below). A lone
 * server, or one older than v8.3.0 (no transfer API), restarts as the primary. The server may refuse
 * the one chosen (PD gives TSO's default keyspace group two servers only, and only those may lead it):
 * the executor then lets the server pick (`new_primary` empty).
 */
export function prepareMs(input: PlanInput, c: ComponentState & { kind: MsService }, pod: Pod): Step {
  const name = pod.metadata.name!;
  const service = c.kind;
  if (registryBeforeBootstrap(input, service)) return OK;
  const ms = msOf(input, service);
  if (typeof ms === 'string') return waitPd(ms);
  const primary = ms.members.find((m) => m.serviceAddr === ms.primary) ?? (ms.primary ? { name: '', serviceAddr: ms.primary } : undefined);
  if (!primary || podOfMsMember(primary) !== name) return OK;
  if (versionAtLeast(podImageTag(pod, service), MS_TRANSFER_SINCE) !== true) return OK;
  let others: readonly MsMember[] = ms.members.filter((m) => podOfMsMember(m) !== name);
  if (others.length === 0) return OK;
  const unfiltered = service === 'tso' && versionAtLeast(podImageTag(pod, service), TSO_GROUP_FILTER_SINCE) !== true;
  if (unfiltered) {
    const inGroup = tsoGroupTargets(ms, others);
    if (typeof inGroup === 'string') return wait(inGroup);
    // No other server of the group registered, or no group yet (each server then serves TSO alone):
    // nothing can take over, so it restarts as the primary, as a lone server does.
    if (inGroup.length === 0) return OK;
    others = inGroup;
  }
  // Servers before v8.3.0 register no name: then any other server will do (`new_primary` empty).
  const to = transferTarget(input, c, others, name)?.name ?? '';
  const target = to || 'another server';
  if (unfiltered && !to) return OK;
  const action = {
    type: 'transfer-primary' as const,
    service,
    pod: name,
    primary: ms.primary,
    to,
    ...(unfiltered && { exact: true as const }),
  };
  return act(`moving the ${service} primary from ${name} to ${target} before restarting ${name}`, action, {
    type: 'Normal',
    reason: 'PrimaryTransfer',
    message: `transferring the ${service} primary from ${name} to ${target}`,
    pod: name,
  });
}

/**
 * The other servers a TSO primary without the group filter may hand over to: those in TSO's default
 * keyspace group. Before TiKV bootstraps, and before PD gives the group members, there is none
 * (every server serves the group alone). A group PD could not tell is a reason to wait.
 */
function tsoGroupTargets(ms: Extract<MsState, { members: unknown }>, others: readonly MsMember[]): readonly MsMember[] | string {
  const group = ms.group;
  if (group === undefined) return "TSO's default keyspace group was not read";
  if (!Array.isArray(group)) {
    const failed = group as { readonly error: string; readonly notBootstrapped: boolean };
    return failed.notBootstrapped ? [] : `TSO's default keyspace group unavailable: ${failed.error}`;
  }
  return others.filter((m) => group.includes(m.serviceAddr));
}

/** TSO and scheduling in an upgrade. */
export const msUpgrade: UpgradeChecks = {
  upgraded: (input, c, pod) => checkUpgradedMs(input, c.kind as MsService, pod),
  prepare: (input, c, pod) => prepareMs(input, { ...c, kind: c.kind as MsService }, pod),
};

/** Among the other registered servers of this StatefulSet: the highest ordinal above `pod`, else the lowest below. */
function transferTarget(input: PlanInput, c: ComponentState, members: readonly MsMember[], pod: string): MsMember | undefined {
  const sts = names.statefulSet(input.cluster.name, c.kind);
  const self = ordinalOf(pod, sts)!;
  const live = podsByOrdinal(input.cluster.name, c.kind, c.pods);
  const byOrdinal = new Map<number, MsMember>();
  for (const m of members) {
    const p = podOfMsMember(m);
    const ord = p === undefined ? undefined : ordinalOf(p, sts);
    // A server whose Pod is going away is no target.
    if (ord === undefined || ord === self || !m.name || live.get(ord)?.metadata.deletionTimestamp) continue;
    byOrdinal.set(ord, m);
  }
  const above = [...byOrdinal.keys()].filter((o) => o > self).sort((a, b) => b - a);
  const below = [...byOrdinal.keys()].filter((o) => o < self).sort((a, b) => a - b);
  const ord = above[0] ?? below[0];
  return ord === undefined ? undefined : byOrdinal.get(ord);
}
