/**
 * What the planner needs from the servers, read once per pass: PD's view (members, leader, stores,
 * schedulers, its micro-services' registry) and the per-Pod probes it will ask about.
 */
import type { ClientTls, ProbeResult } from '../clients/http';
import { PdError, type PdClient } from '../clients/pd';
import { tiflashStatusUrl, tiflashStoreStatus } from '../clients/tiflash';
import { tikvLeaderCount, tikvMetricsUrl } from '../clients/tikv';
import type { ClusterInfo } from '../model/cluster';
import type { MsService } from '../plan/pdms';
import { probesWanted } from '../plan/probes';
import { memberOfPod } from '../view/lookups';
import type { ComponentState, LeaderProbe, MsState, PdState, Probes } from '../view/view';

/** PD's view (`readPdCore`), with its micro-services' registry when the cluster runs them. */
export async function readPd(pd: PdClient, stores: boolean, scalingIn: boolean, msServices: readonly MsService[]): Promise<PdState | { error: string }> {
  const [core, ms] = await Promise.all([readPdCore(pd, stores, scalingIn), msServices.length > 0 ? readMs(pd, msServices) : undefined]);
  return 'error' in core || ms === undefined ? core : { ...core, ms };
}

/** PD's registry of its micro-services: each one's servers and primary, or why they could not be read. */
async function readMs(pd: PdClient, services: readonly MsService[]): Promise<NonNullable<PdState['ms']>> {
  const out: Partial<Record<MsService, MsState>> = {};
  await Promise.all(
    services.map(async (service) => {
      out[service] = await Promise.all([pd.msMembers(service), pd.msPrimary(service)])
        .then(([members, primary]) => ({ members, primary }))
        .catch((e: Error) => ({ error: e.message }));
    }),
  );
  return out;
}

/**
 * PD's view. Members, health and leader answer as soon as PD runs; stores and schedulers only once
 * TiKV has bootstrapped the cluster (until then PD answers 500 ErrNotBootstrapped, which means no
 * stores yet), so the two are read and judged apart: PD upgrades and failover need not wait on TiKV.
 */
async function readPdCore(pd: PdClient, stores: boolean, scalingIn: boolean): Promise<PdState | { error: string }> {
  const storesPart = stores
    ? Promise.all([pd.stores(), pd.evictingStores(), scalingIn ? pd.tombstones() : Promise.resolve(undefined), scalingIn ? pd.maxReplicas() : Promise.resolve(undefined)])
    : Promise.resolve([[], new Set<number>(), undefined, undefined] as const);
  const [membersPart, storesRead] = await Promise.allSettled([Promise.all([pd.health(), pd.leader()]), storesPart]);
  if (membersPart.status === 'rejected') return { error: (membersPart.reason as Error).message };
  const [members, leader] = membersPart.value;
  if (storesRead.status === 'fulfilled') {
    const [storeList, evicting, tombstones, maxReplicas] = storesRead.value;
    return { members, leader, stores: storeList, evicting, tombstones, maxReplicas };
  }
  const err = storesRead.reason as Error;
  if (err instanceof PdError && err.notBootstrapped) return { members, leader, stores: [], evicting: new Set(), tombstones: [], bootstrapped: false };
  return { members, leader, stores: [], evicting: new Set(), storesError: err.message };
}

/**
 * Asks the servers the planner will ask about (see `probesWanted`): each upgraded PD member's
 * `/pd/api/v2/ready` at its own client URL, each upgraded TiFlash's `/tiflash/store-status`, the own
 * leader count of each TiKV being evicted.
 */
export async function probe(
  d: { readonly cluster: ClusterInfo; readonly pd: PdClient; readonly tls?: ClientTls },
  components: readonly ComponentState[],
  pd: PdState | { error: string } | undefined,
): Promise<Probes> {
  const wanted = probesWanted(components);
  if (wanted.pdReady.length === 0 && wanted.tiflashStatus.length === 0 && wanted.tikvLeaders.length === 0) return {};
  const c = d.cluster;
  const members = pd && !('error' in pd) ? pd.members : [];
  const pdReady: Record<string, ProbeResult> = {};
  const tiflashStatus: Record<string, ProbeResult> = {};
  const tikvLeaders: Record<string, LeaderProbe> = {};
  await Promise.all([
    ...wanted.pdReady.map(async (pod) => {
      const url = memberOfPod(members, pod)?.clientUrls[0];
      if (!url) return;
      pdReady[pod] = await d.pd
        .forMember(url)
        .ready()
        .then((ok) => ({ ok, detail: ok ? 'ready' : 'regions not loaded yet (HTTP 500)' }))
        .catch((e: Error) => ({ ok: false, detail: e.message }));
    }),
    ...wanted.tiflashStatus.map(async (pod) => {
      tiflashStatus[pod] = await tiflashStoreStatus(tiflashStatusUrl(c, pod), d.tls);
    }),
    ...wanted.tikvLeaders.map(async (pod) => {
      tikvLeaders[pod] = await tikvLeaderCount(tikvMetricsUrl(c, pod), d.tls)
        .then((count) => ({ count, detail: `${count} leaders` }))
        .catch((e: Error) => ({ detail: e.message }));
    }),
  ]);
  return { pdReady, tiflashStatus, tikvLeaders };
}
