/**
 * Topology labels: the controller copies each Node's topology labels onto the TiKV and TiFlash stores
 * of the Pods on it (PD `POST /pd/api/v1/store/{id}/label`) and onto TiDB servers (`POST
 * <pod>:10080/labels`), as tidb-operator's member managers do, so that PD can keep a region's replicas
 * in different zones and hosts (`replication.location-labels`) and TiDB can read from its own zone.
 *
 * The decisions are pure functions; `TopologyLabeler` does the requests, at most once per
 * `everyMs`, and writes only what differs.
 */

type Labels = Record<string, string>;

/**
 * Short keys PD users write in location-labels and the well-known Node labels that carry them, the
 * stable one first (tidb-operator `pkg/manager/member/node.go` shortLabelNameToK8sLabel).
 */
export const WELL_KNOWN_NODE_LABELS: Readonly<Record<string, readonly string[]>> = {
  region: ['topology.kubernetes.io/region', 'failure-domain.beta.kubernetes.io/region'],
  zone: ['topology.kubernetes.io/zone', 'failure-domain.beta.kubernetes.io/zone'],
  host: ['kubernetes.io/hostname'],
};

/** PD reserves this store label for TiFlash (tikv/pd `server/api/store.go`: "label key is reserved"). */
const ENGINE_KEY = 'engine';

/**
 * The labels a store or server gets from its Node: each wanted key the Node has, else the well-known
 * label a short key stands for (tidb-operator `getLabelsFromNode`).
 */
export function labelsFromNode(nodeLabels: Readonly<Labels>, keys: readonly string[]): Labels {
  const out: Labels = {};
  for (const key of keys) {
    if (key === ENGINE_KEY) continue;
    const value = nodeLabels[key] ?? (WELL_KNOWN_NODE_LABELS[key] ?? []).map((k) => nodeLabels[k]).find((v) => v !== undefined);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * Whether a store already carries these labels. Only the wanted keys count: PD keeps the labels TiKV
 * starts with (its `--labels`, its config's `server.labels`) beside them. PD matches keys without case
 * (`core.MergeLabels`).
 */
export function storeHasLabels(store: Readonly<Labels>, wanted: Readonly<Labels>): boolean {
  const have = new Map(Object.entries(store).map(([k, v]) => [k.toLowerCase(), v]));
  return Object.entries(wanted).every(([k, v]) => have.get(k.toLowerCase()) === v);
}

/** Location-label keys that name the zone, in the order tidb-operator looks for them (`topologyZoneLabels`). */
export const ZONE_KEYS = ['zone', 'topology.kubernetes.io/zone', 'failure-domain.beta.kubernetes.io/zone'] as const;

/** The location-label key that names the zone, or undefined when PD spreads replicas over no zone. */
export function zoneKeyOf(locationLabels: readonly string[]): string | undefined {
  return ZONE_KEYS.find((k) => locationLabels.includes(k));
}

/**
 * A TiDB server's labels: `spec.tidb.serverLabels`, the Node's location labels over them, and `zone`
 * (what TiDB reads for closest-replica reads) set to the zone's value (tidb-operator `setServerLabels`).
 */
export function tidbServerLabels(
  serverLabels: Readonly<Labels>,
  nodeLabels: Readonly<Labels>,
  locationLabels: readonly string[],
  zoneKey: string,
): Labels {
  const labels: Labels = { ...serverLabels, ...labelsFromNode(nodeLabels, locationLabels) };
  if (labels[zoneKey] !== undefined) labels.zone = labels[zoneKey];
  return labels;
}

/** TiDB takes labels over HTTP from v6.3.0 (tidb-operator `tidbSupportLabelsMinVersin`). */
const TIDB_LABELS_SINCE = [6, 3, 0];

/**
 * Whether a TiDB of this `/info` version (`8.0.11-TiDB-v8.5.0`) takes `POST /labels`; undefined when
 * the version says no release (a custom build), which tidb-operator skips as well.
 */
export function tidbTakesLabels(version: string): boolean | undefined {
  const m = /-TiDB-v(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!m) return undefined;
  const v = [Number(m[1]), Number(m[2]), Number(m[3])];
  for (let i = 0; i < 3; i++) if (v[i] !== TIDB_LABELS_SINCE[i]) return v[i] > TIDB_LABELS_SINCE[i];
  return true;
}
