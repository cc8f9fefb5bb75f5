/**
 * Copies the Nodes' topology labels onto the cluster's stores (through PD) and TiDB servers (over
 * their HTTP API), for a cluster that may read Nodes; where that stands goes into the status
 * (`topology`). A side task of the pass.
 */
import type { ComponentKind, Labels } from '../../tidbcluster/names';
import type { ClientTls } from '../clients/http';
import type { PdClient, PdStore } from '../clients/pd';
import { setTidbServerLabels, tidbServerInfo, tidbStatusBase } from '../clients/tidb';
import type { ClusterInfo } from '../model/cluster';
import { isReady, type Pod } from '../model/objects';
import { labelsFromNode, storeHasLabels, tidbServerLabels, tidbTakesLabels, zoneKeyOf } from '../plan/topology';
import { storeOfPod } from '../view/lookups';
import { settingsOf } from '../model/settings';
import type { SidePass, SideTask } from './side-task';

/** What the status ConfigMap says about topology labels (`topology`). */
export interface TopologyStatus {
  /** PD's `replication.location-labels`, as last read. */
  readonly locationLabels: readonly string[];
  /** The labels each TiDB server was last seen or set with, by Pod. */
  readonly servers: Readonly<Record<string, Labels>>;
  /** Why labels are not applied now, in words; null when they are. */
  readonly problem: string | null;
}

export interface TopologyDeps {
  readonly cluster: ClusterInfo;
  readonly pd: PdClient;
  /** A Node's labels; undefined for a Node that is gone. */
  readonly nodeLabels: (name: string) => Promise<Labels | undefined>;
  readonly tls?: ClientTls;
  /** A Warning Event on a Pod. */
  readonly warn: (pod: string, reason: string, message: string) => Promise<void>;
  readonly info: (message: string, fields: Record<string, unknown>) => void;
  /** @default 10000 */
  readonly everyMs?: number;
  /** How long a Node's labels are taken as they were read. @default 60000 */
  readonly nodeTtlMs?: number;
  /** @default 5000 */
  readonly timeoutMs?: number;
}

export interface TopologyInput {
  readonly pods: readonly Pod[];
  /** PD's stores as this pass read them; undefined when they could not be read. */
  readonly stores?: readonly PdStore[];
  /** `spec.tikv.storeLabels`: more Node label keys for TiKV stores. */
  readonly storeLabels: readonly string[];
  /** `spec.tidb.serverLabels`. */
  readonly serverLabels: Readonly<Labels>;
  readonly now: number;
}

const componentOf = (pod: Pod): string | undefined => pod.metadata.labels?.['app.kubernetes.io/component'];

/** The start of a TiDB container: a new Pod or a restart forgets the labels set over HTTP. */
const tidbRunKey = (pod: Pod): string =>
  `${pod.metadata.uid}/${pod.status?.containerStatuses?.find((s) => s.name === 'tidb')?.restartCount ?? 0}/${pod.spec?.nodeName ?? ''}`;

export class TopologyLabeler implements SideTask {
  readonly name = 'topology labels';
  readonly readsOnly = false;
  private nextAt = 0;
  private readonly nodes = new Map<string, { labels: Labels | undefined; at: number }>();
  /** TiDB Pod -> the run and labels last confirmed on it. */
  private readonly servers = new Map<string, { key: string; labels: Labels | undefined }>();
  /** Warnings already sent, so a standing problem is reported once. */
  private readonly warned = new Set<string>();
  private status: TopologyStatus = { locationLabels: [], servers: {}, problem: null };

  constructor(private readonly d: TopologyDeps) {}

  current(): TopologyStatus {
    return this.status;
  }

  /** Topology labels from the Nodes onto stores and TiDB servers, with the settings Git gives TiKV and TiDB. */
  run({ view }: SidePass): Promise<void> {
    const { pd } = view;
    const settings = (kind: ComponentKind) => {
      const sts = view.components.find((x) => x.kind === kind)?.sts;
      return sts ? settingsOf(sts) : {};
    };
    const storeLabels = settings('tikv').storeLabels;
    const serverLabels = settings('tidb').serverLabels;
    return this.pass({
      pods: view.allPods,
      stores: pd && !('error' in pd) && pd.storesError === undefined && pd.bootstrapped !== false ? pd.stores : undefined,
      storeLabels: Array.isArray(storeLabels) ? storeLabels.filter((k): k is string => typeof k === 'string') : [],
      serverLabels:
        typeof serverLabels === 'object' && serverLabels !== null && !Array.isArray(serverLabels)
          ? (serverLabels as Record<string, string>)
          : {},
      now: view.now,
    });
  }

  /**
   * One look, at most every `everyMs` unless a TiDB Pod started since: reads PD's location-labels,
   * the Nodes of the Pods, and sets the labels that differ. Failures are reported, never thrown.
   */
  async pass(input: TopologyInput): Promise<void> {
    const tidbPods = input.pods.filter((p) => componentOf(p) === 'tidb' && isReady(p));
    const fresh = tidbPods.some((p) => this.servers.get(p.metadata.name!)?.key !== tidbRunKey(p));
    if (input.now < this.nextAt && !fresh) return;
    this.nextAt = input.now + (this.d.everyMs ?? 10_000);
    let locationLabels: string[];
    try {
      locationLabels = await this.d.pd.locationLabels();
    } catch (e) {
      this.status = { ...this.status, problem: `cannot read PD's location-labels: ${(e as Error).message}` };
      return;
    }
    const problems: string[] = [];
    await this.labelStores(input, locationLabels, problems);
    const servers = await this.labelServers(input, tidbPods, locationLabels, problems);
    this.status = { locationLabels, servers, problem: problems.length > 0 ? problems.join('; ') : null };
  }

  private async node(name: string, now: number): Promise<Labels | undefined> {
    const hit = this.nodes.get(name);
    if (hit && now - hit.at < (this.d.nodeTtlMs ?? 60_000)) return hit.labels;
    const labels = await this.d.nodeLabels(name);
    this.nodes.set(name, { labels, at: now });
    return labels;
  }

  /** The Node labels of a Pod's Node, or a problem in words. */
  private async podNode(pod: Pod, now: number): Promise<Labels | string> {
    const nodeName = pod.spec?.nodeName;
    if (!nodeName) return `Pod ${pod.metadata.name} is not on a Node yet`;
    try {
      return (await this.node(nodeName, now)) ?? `Node ${nodeName} of Pod ${pod.metadata.name} is gone`;
    } catch (e) {
      return `cannot read Node ${nodeName}: ${(e as Error).message}`;
    }
  }

  private async warnOnce(pod: string, reason: string, message: string): Promise<void> {
    const key = `${pod}\n${reason}\n${message}`;
    if (this.warned.has(key)) return;
    this.warned.add(key);
    await this.d.warn(pod, reason, message);
  }

  private async labelStores(input: TopologyInput, locationLabels: readonly string[], problems: string[]): Promise<void> {
    if (!input.stores) return;
    const c = this.d.cluster;
    for (const kind of ['tikv', 'tiflash'] as const satisfies readonly ComponentKind[]) {
      // TiKV also takes spec.tikv.storeLabels; TiFlash only PD's location-labels (as the operator does).
      const keys = kind === 'tikv' ? [...new Set([...locationLabels, ...input.storeLabels])] : locationLabels;
      if (keys.length === 0) continue;
      for (const pod of input.pods.filter((p) => componentOf(p) === kind)) {
        const name = pod.metadata.name!;
        const store = storeOfPod(input.stores, c.name, kind, name);
        if (!store) continue;
        const node = await this.podNode(pod, input.now);
        if (typeof node === 'string') {
          problems.push(node);
          continue;
        }
        const wanted = labelsFromNode(node, keys);
        if (Object.keys(wanted).length === 0) {
          await this.warnOnce(
            name,
            'NodeLabelsMissing',
            `Node ${pod.spec?.nodeName} has none of the labels ${keys.join(', ')}; store ${store.id} gets no topology labels`,
          );
          continue;
        }
        if (storeHasLabels(store.labels, wanted)) continue;
        try {
          await this.d.pd.setStoreLabels(store.id, wanted);
          this.d.info('set store labels', { pod: name, store: store.id, labels: wanted });
        } catch (e) {
          const message = `failed to set labels ${JSON.stringify(wanted)} on store ${store.id}: ${(e as Error).message}`;
          problems.push(message);
          await this.warnOnce(name, 'FailedSetStoreLabels', message);
        }
      }
    }
  }

  private async labelServers(
    input: TopologyInput,
    pods: readonly Pod[],
    locationLabels: readonly string[],
    problems: string[],
  ): Promise<Record<string, Labels>> {
    const out: Record<string, Labels> = {};
    const zoneKey = zoneKeyOf(locationLabels);
    for (const name of [...this.servers.keys()]) if (!pods.some((p) => p.metadata.name === name)) this.servers.delete(name);
    for (const pod of pods) {
      const name = pod.metadata.name!;
      const key = tidbRunKey(pod);
      const known = this.servers.get(name);
      // Looked at in this run already: nothing to set (no zone, or a TiDB too old), or set and unchanged.
      this.servers.set(name, { key, labels: known?.key === key ? known.labels : undefined });
      if (zoneKey === undefined) continue;
      const node = await this.podNode(pod, input.now);
      if (typeof node === 'string') {
        problems.push(node);
        continue;
      }
      const wanted = tidbServerLabels(input.serverLabels, node, locationLabels, zoneKey);
      if (known?.key === key && known.labels && storeHasLabels(known.labels, wanted)) {
        out[name] = known.labels;
        continue;
      }
      const result = await this.labelServer(name, wanted);
      if (typeof result === 'string') problems.push(result);
      else if (result) {
        this.servers.set(name, { key, labels: result });
        out[name] = result;
      }
    }
    return out;
  }

  /** Reads a TiDB's labels (`GET /info`) and sets the missing ones (`POST /labels`); the labels, false when too old, or a problem. */
  private async labelServer(pod: string, wanted: Labels): Promise<Labels | false | string> {
    const base = tidbStatusBase(this.d.cluster, pod);
    const opts = { tls: this.d.tls, timeoutMs: this.d.timeoutMs ?? 5000 };
    try {
      const info = await tidbServerInfo(base, opts);
      if (typeof info === 'string') return info;
      const takes = tidbTakesLabels(String(info.version ?? ''));
      if (takes !== true) {
        await this.warnOnce(
          pod,
          'ServerLabelsUnsupported',
          `TiDB ${String(info.version)} ${takes === false ? 'is older than v6.3.0 and takes no labels over HTTP' : 'names no release version'}; its server labels are not set`,
        );
        return false;
      }
      if (storeHasLabels(info.labels, wanted)) return info.labels;
      const set = await setTidbServerLabels(base, wanted, opts);
      if (typeof set === 'string') {
        await this.warnOnce(pod, 'FailedSetServerLabels', set);
        return set;
      }
      this.d.info('set server labels', { pod, labels: wanted });
      return set;
    } catch (e) {
      return `${base}: ${(e as Error).message}`;
    }
  }
}
