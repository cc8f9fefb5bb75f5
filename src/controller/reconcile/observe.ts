/**
 * What a pass reads, once, for the planner: the StatefulSets, Pods and claims in the informer caches,
 * the volume sizes Git asks for, PD's view (members, leader, stores, schedulers, its micro-services'
 * registry), the per-Pod probes the planner will ask about, and the records the status keeps. What
 * to read from PD and which Pods to probe is the planner's to say (`plan/probes.ts`); this does the I/O.
 */
import { randomUUID } from 'node:crypto';
import { LABEL, names } from '../../tidbcluster/names';
import type { ClientTls, ProbeResult } from '../clients/http';
import type { KubeAccess } from '../clients/kube';
import { PdError, type PdClient } from '../clients/pd';
import { tiflashStatusUrl, tiflashStoreStatus } from '../clients/tiflash';
import { tikvLeaderCount, tikvMetricsUrl } from '../clients/tikv';
import { tidbServing, tidbStatusBase } from '../clients/tidb';
import type { ClusterInfo } from '../model/cluster';
import type { Pod } from '../model/objects';
import type { MsService } from '../plan/pdms';
import { pdReadsWanted, probesWanted, type PdReads } from '../plan/probes';
import type { StatusRecords } from '../records/store';
import { memberOfPod } from '../view/lookups';
import type { ComponentState, LeaderProbe, MsState, PdState, PlanInput, PlanOptions, Probes } from '../view/view';
import type { VolumeSizesReader } from './volume-sizes';

/** The view of one pass (its failure records aside, which the pass brings up to date first), and every Pod of the cluster. */
export interface PassView extends Omit<PlanInput, 'failover'> {
  readonly allPods: readonly Pod[];
}

export interface ObserveDeps {
  readonly cluster: ClusterInfo;
  readonly kube: KubeAccess;
  readonly pd: PdClient;
  readonly tls?: ClientTls;
  readonly options: Omit<PlanOptions, 'newFailoverUid'>;
}

/** Builds the view of a pass. */
export async function observe(d: ObserveDeps, records: StatusRecords, volumeSizesReader: VolumeSizesReader): Promise<PassView> {
  const { cluster: c, kube } = d;
  const volumeSizes = await volumeSizesReader.read();
  const allPods = kube.pods();
  const components: ComponentState[] = [];
  for (const kind of c.components) {
    const sts = kube.statefulSets().find((s) => s.metadata.name === names.statefulSet(c.name, kind));
    if (!sts) continue;
    const pods = allPods.filter((p) => p.metadata.labels?.[LABEL.component] === kind);
    components.push({ kind, sts, pods });
  }
  const reads = pdReadsWanted(components, records.failover);
  const pd = reads ? await readPd(d.pd, reads) : undefined;
  const probes = await probe(d, components, pd);
  const { autoFailover, failoverPeriodMs, resyncMs } = d.options;
  return {
    cluster: c,
    components,
    pd,
    now: Date.now(),
    volumes: kube.volumes(),
    options: { autoFailover, failoverPeriodMs, resyncMs, newFailoverUid: randomUUID() },
    probes,
    evictions: records.evictions,
    replacements: records.replacements,
    volumeSizes,
    volumeRefusals: volumeSizesReader.refusals,
    ddlPause: records.ddlPause,
    allPods,
  };
}

/** PD's view (`readPdCore`), with its micro-services' registry when the cluster runs them. */
async function readPd(pd: PdClient, reads: PdReads): Promise<PdState | { error: string }> {
  const [core, ms] = await Promise.all([readPdCore(pd, reads), reads.msServices.length > 0 ? readMs(pd, reads.msServices) : undefined]);
  return 'error' in core || ms === undefined ? core : { ...core, ms };
}

/** PD's registry of its micro-services: each one's servers and primary, or why they could not be read. */
async function readMs(pd: PdClient, services: readonly MsService[]): Promise<NonNullable<PdState['ms']>> {
  const out: Partial<Record<MsService, MsState>> = {};
  await Promise.all(
    services.map(async (service) => {
      const group =
        service === 'tso'
          ? pd.tsoDefaultGroup().catch((e: Error) => ({ error: e.message, notBootstrapped: e instanceof PdError && e.notBootstrapped }))
          : Promise.resolve(undefined);
      out[service] = await Promise.all([pd.msMembers(service), pd.msPrimary(service), group])
        .then(([members, primary, g]) => ({ members, primary, ...(g !== undefined && { group: g }) }))
        .catch((e: Error) => ({ error: e.message, ...(e instanceof PdError && e.notBootstrapped && { notBootstrapped: true }) }));
    }),
  );
  return out;
}

/**
 * PD's view. Members, health and leader answer as soon as PD runs; stores and schedulers only once
 * TiKV has bootstrapped the cluster (until then PD answers 500 ErrNotBootstrapped, which means no
 * stores yet), so the two are read and judged apart: PD upgrades and failover need not wait on TiKV.
 */
async function readPdCore(pd: PdClient, reads: PdReads): Promise<PdState | { error: string }> {
  const removals = reads.storeRemovals;
  const storesPart = reads.stores
    ? Promise.all([
        pd.stores(),
        pd.evictingStores(),
        removals ? pd.tombstones() : Promise.resolve(undefined),
        removals ? pd.maxReplicas() : Promise.resolve(undefined),
      ])
    : Promise.resolve([[], new Set<number>(), undefined, undefined] as const);
  const [membersPart, storesRead] = await Promise.allSettled([Promise.all([pd.health(), pd.leader()]), storesPart]);
  if (membersPart.status === 'rejected') return { error: (membersPart.reason as Error).message };
  const [members, leader] = membersPart.value;
  if (storesRead.status === 'fulfilled') {
    const [storeList, evicting, tombstones, maxReplicas] = storesRead.value;
    return { members, leader, stores: storeList, evicting, tombstones, maxReplicas };
  }
  const err = storesRead.reason as Error;
  if (err instanceof PdError && err.notBootstrapped)
    return { members, leader, stores: [], evicting: new Set(), tombstones: [], bootstrapped: false };
  return { members, leader, stores: [], evicting: new Set(), storesError: err.message };
}

/**
 * A follower whose `/pd/api/v2/ready` answers 500. With `pd-server.use-region-storage = false` a
 * follower never loads regions (tikv/pd server/server.go `leaderLoop` starts the region syncer only
 * with region storage): it would answer 500 until it leads, and an upgrade waiting for it would wait
 * for ever. There is nothing to wait for then; a member that becomes leader loads them from etcd
 * before it serves (`LoadClusterInfo`), so it counts as ready once healthy.
 */
function followerNotReady(regionStorage: boolean | Error): ProbeResult {
  if (regionStorage === false) {
    return {
      ok: true,
      detail: 'a follower without region storage (pd-server.use-region-storage = false) loads no regions until it leads; healthy is enough',
    };
  }
  if (regionStorage instanceof Error)
    return { ok: false, detail: `regions not loaded yet (HTTP 500); whether PD keeps region storage is unknown: ${regionStorage.message}` };
  return { ok: false, detail: 'regions not loaded yet (HTTP 500)' };
}

/**
 * A 500 from `/pd/api/v2/ready` while PD says TiKV has not bootstrapped the cluster. PD v8.5.2 to
 * v8.5.7 answer 200 only once the member loaded its regions (tikv/pd server/apiv2/handlers/ready.go
 * `Ready` at those tags: `storage.AreRegionsLoaded`), and the leader loads them only in
 * `LoadClusterInfo` (server/cluster/cluster.go), which returns early while the cluster is not
 * bootstrapped: a lone member, or a leader that was never a follower in this run, answers 500 until
 * TiKV comes. There are no regions to load then; PD itself says so from commit a1d89da952 ("api:
 * distinguish bootstrap state in ready api", in v26.3.0 and the v8.5.6-20260422 hotfix, not in
 * v8.5.7): `checkLeaderPromotion` counts a cluster that is not bootstrapped as ready.
 */
const NOT_BOOTSTRAPPED_READY: ProbeResult = {
  ok: true,
  detail: 'TiKV has not bootstrapped the cluster: no regions to load (PD v8.5.2 to v8.5.7 answer 500 until it has)',
};

/**
 * Asks the servers the planner will ask about (see `probesWanted`): each upgraded PD member's
 * `/pd/api/v2/ready` at its own client URL, each upgraded TiFlash's `/tiflash/store-status`, the own
 * leader count of each TiKV being evicted.
 */
async function probe(
  d: { readonly cluster: ClusterInfo; readonly pd: PdClient; readonly tls?: ClientTls },
  components: readonly ComponentState[],
  pd: PdState | { error: string } | undefined,
): Promise<Probes> {
  const wanted = probesWanted(components);
  if (wanted.pdReady.length === 0 && wanted.tiflashStatus.length === 0 && wanted.tikvLeaders.length === 0 && wanted.tidbStatus.length === 0)
    return {};
  const c = d.cluster;
  const members = pd && !('error' in pd) ? pd.members : [];
  const pdReady: Record<string, ProbeResult> = {};
  const tiflashStatus: Record<string, ProbeResult> = {};
  const tikvLeaders: Record<string, LeaderProbe> = {};
  const tidbStatus: Record<string, ProbeResult> = {};
  // Asked once per pass, only when a member is not ready: whether followers can load regions at all.
  let regionStorage: Promise<boolean | Error> | undefined;
  const leader = pd && !('error' in pd) ? pd.leader : undefined;
  const notBootstrapped = pd !== undefined && !('error' in pd) && pd.bootstrapped === false;
  await Promise.all([
    ...wanted.pdReady.map(async (pod) => {
      const member = memberOfPod(members, pod);
      const url = member?.clientUrls[0];
      if (!url) return;
      const ok = await d.pd
        .forMember(url)
        .ready()
        .catch((e: Error) => e);
      if (ok instanceof Error) pdReady[pod] = { ok: false, detail: ok.message };
      else if (ok) pdReady[pod] = { ok: true, detail: 'ready' };
      else if (notBootstrapped) pdReady[pod] = NOT_BOOTSTRAPPED_READY;
      else if (member.name === leader) pdReady[pod] = { ok: false, detail: 'regions not loaded yet (HTTP 500)' };
      else {
        regionStorage ??= d.pd.useRegionStorage().catch((e: Error) => e);
        pdReady[pod] = followerNotReady(await regionStorage);
      }
    }),
    ...wanted.tiflashStatus.map(async (pod) => {
      tiflashStatus[pod] = await tiflashStoreStatus(tiflashStatusUrl(c, pod), d.tls);
    }),
    ...wanted.tikvLeaders.map(async (pod) => {
      tikvLeaders[pod] = await tikvLeaderCount(tikvMetricsUrl(c, pod), d.tls)
        .then((count) => ({ count, detail: `${count} leaders` }))
        .catch((e: Error) => ({ detail: e.message }));
    }),
    ...wanted.tidbStatus.map(async (pod) => {
      tidbStatus[pod] = await tidbServing(tidbStatusBase(c, pod), d.tls);
    }),
  ]);
  return { pdReady, tiflashStatus, tikvLeaders, tidbStatus };
}
