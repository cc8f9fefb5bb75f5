/**
 * Rendered objects -> facts per cluster and component: which StatefulSet, how many replicas, which
 * images, which ConfigMaps. Clusters are told apart by namespace and the `app.kubernetes.io/instance`
 * label, components by the `app.kubernetes.io/component` label, so foreign manifests that follow the
 * operator's labels are understood too.
 */
import { ANNOTATION, BACKUP_LABEL, isConfigRevision, LABEL, names } from '../tidbcluster/names';
import type { ConfigStrategy } from './report';
import { isPlainObject } from './values';

/** A Kubernetes object as plain JSON. */
export type KubeObject = Record<string, unknown>;

/** Component order in reports (PD's micro-services after PD): the data path first, then the SQL layer, tools, and the controller. */
export const COMPONENT_ORDER = ['pd', 'tso', 'scheduling', 'tikv', 'tiflash', 'tidb', 'ticdc', 'pump', 'tiproxy', 'discovery'] as const;

/** What a report needs to know about one ConfigMap of a component. */
export interface ConfigMapFacts {
  readonly name: string;
  readonly strategy: ConfigStrategy;
  /** `data`, string values only. */
  readonly data: Readonly<Record<string, string>>;
}

export interface ComponentModel {
  readonly component: string;
  /** The component's StatefulSet, or the Deployment for discovery; absent when neither is there. */
  readonly workload?: KubeObject;
  /**
   * Desired replicas: the `tidb-gitops.io/replicas` annotation (rendered StatefulSets never carry
   * `spec.replicas`), else `spec.replicas`. Absent without a workload.
   * @default 1 for a workload with neither (the Kubernetes default)
   */
  readonly replicas?: number;
  /** Image per container name, init containers included. */
  readonly images: Readonly<Record<string, string>>;
  /** Image of the container named like the component (the server itself). */
  readonly mainImage?: string;
  /** ConfigMap name per workload volume that mounts one (`configMap` or `projected` volumes). */
  readonly configVolumes: Readonly<Record<string, string>>;
  /** The component's ConfigMaps (by label), by name. */
  readonly configMaps: ReadonlyMap<string, ConfigMapFacts>;
}

export interface ClusterModel {
  /** `namespace/name`, or `name`; "" for objects of no cluster. */
  readonly id: string;
  readonly namespace: string;
  /** The instance label; "" for objects of no cluster. */
  readonly name: string;
  readonly components: ReadonlyMap<string, ComponentModel>;
  /** Every object of the cluster, by {@link objectKey}. */
  readonly objects: ReadonlyMap<string, KubeObject>;
}

/** All clusters found in one set of manifests, by id. */
export interface Model {
  readonly clusters: ReadonlyMap<string, ClusterModel>;
}

export function metadataOf(o: KubeObject): Record<string, unknown> {
  return isPlainObject(o.metadata) ? o.metadata : {};
}

export function nameOf(o: KubeObject): string {
  const n = metadataOf(o).name;
  return typeof n === 'string' ? n : '';
}

export function namespaceOf(o: KubeObject): string {
  const n = metadataOf(o).namespace;
  return typeof n === 'string' ? n : '';
}

export function kindOf(o: KubeObject): string {
  return typeof o.kind === 'string' ? o.kind : '';
}

function stringMap(v: unknown): Record<string, string> {
  if (!isPlainObject(v)) return {};
  return Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

export function labelsOf(o: KubeObject): Record<string, string> {
  return stringMap(metadataOf(o).labels);
}

export function annotationsOf(o: KubeObject): Record<string, string> {
  return stringMap(metadataOf(o).annotations);
}

/** Identity of an object within one set of manifests: kind, namespace and name. */
export function objectKey(o: KubeObject): string {
  return `${kindOf(o)}/${namespaceOf(o)}/${nameOf(o)}`;
}

export function clusterIdOf(namespace: string, name: string): string {
  return namespace && name ? `${namespace}/${name}` : name;
}

/** Report order of components: the known ones in {@link COMPONENT_ORDER}, others after them by name. */
export function compareComponents(a: string, b: string): number {
  const rank = (c: string) => {
    const i = (COMPONENT_ORDER as readonly string[]).indexOf(c);
    return i < 0 ? COMPONENT_ORDER.length : i;
  };
  return rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0);
}

/** Groups objects into clusters and components. */
export function buildModel(objects: readonly KubeObject[]): Model {
  const groups = new Map<string, { namespace: string; name: string; objects: Map<string, KubeObject> }>();
  for (const o of objects) {
    const instance = labelsOf(o)[LABEL.instance] ?? '';
    // The cluster-scoped node reader names its cluster's namespace in its own name.
    const namespace = namespaceOf(o) || (kindOf(o).startsWith('ClusterRole') ? (names.nodeReaderNamespace(nameOf(o)) ?? '') : '');
    const id = clusterIdOf(namespace, instance);
    let g = groups.get(id);
    if (!g) groups.set(id, (g = { namespace: instance ? namespace : '', name: instance, objects: new Map() }));
    g.objects.set(objectKey(o), o);
  }
  const clusters = new Map<string, ClusterModel>();
  for (const [id, g] of groups) {
    clusters.set(id, {
      id,
      namespace: g.namespace,
      name: g.name,
      objects: g.objects,
      components: g.name ? componentsOf(g.name, g.objects) : new Map(),
    });
  }
  return { clusters };
}

function componentsOf(instance: string, objects: ReadonlyMap<string, KubeObject>): Map<string, ComponentModel> {
  const byComponent = new Map<string, KubeObject[]>();
  for (const o of objects.values()) {
    const c = labelsOf(o)[LABEL.component];
    // A one-shot Backup's or Restore's ConfigMap holds a Job, not a component's config (see backups.ts).
    if (!c || labelsOf(o)[BACKUP_LABEL.operation] !== undefined) continue;
    const list = byComponent.get(c) ?? [];
    list.push(o);
    byComponent.set(c, list);
  }
  const out = new Map<string, ComponentModel>();
  for (const c of [...byComponent.keys()].sort(compareComponents)) {
    const model = componentModel(instance, c, byComponent.get(c)!);
    if (model) out.set(c, model);
  }
  return out;
}

function componentModel(instance: string, component: string, objects: readonly KubeObject[]): ComponentModel | undefined {
  const sorted = [...objects].sort((a, b) => (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0));
  const workload = sorted.find((o) => kindOf(o) === 'StatefulSet') ?? sorted.find((o) => kindOf(o) === 'Deployment');
  const configMaps = new Map<string, ConfigMapFacts>();
  for (const o of sorted) {
    if (kindOf(o) !== 'ConfigMap') continue;
    configMaps.set(nameOf(o), { name: nameOf(o), strategy: configStrategy(instance, component, nameOf(o)), data: stringMap(o.data) });
  }
  if (!workload && configMaps.size === 0) return undefined;
  const pod = podSpecOf(workload);
  const images: Record<string, string> = {};
  for (const c of [...list(pod.initContainers), ...list(pod.containers)]) {
    if (isPlainObject(c) && typeof c.name === 'string' && typeof c.image === 'string') images[c.name] = c.image;
  }
  return {
    component,
    workload,
    replicas: workload ? replicasOf(workload) : undefined,
    images,
    mainImage: images[component],
    configVolumes: configVolumesOf(pod),
    configMaps,
  };
}

/** What a ConfigMap's name says about its update strategy (see `componentConfigMap`). */
export function configStrategy(instance: string, component: string, name: string): ConfigStrategy {
  if (name === `${instance}-${component}`) return 'InPlace';
  return isConfigRevision(instance, component, name) ? 'RollingUpdate' : 'other';
}

function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

export function podSpecOf(workload: KubeObject | undefined): Record<string, unknown> {
  const spec = workload && isPlainObject(workload.spec) ? workload.spec : {};
  const template = isPlainObject(spec.template) ? spec.template : {};
  return isPlainObject(template.spec) ? template.spec : {};
}

export function replicasOf(workload: KubeObject): number {
  const annotated = annotationsOf(workload)[ANNOTATION.replicas];
  if (annotated !== undefined && /^\d+$/.test(annotated.trim())) return Number(annotated);
  const spec = isPlainObject(workload.spec) ? workload.spec : {};
  return typeof spec.replicas === 'number' ? spec.replicas : 1;
}

function configVolumesOf(pod: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of list(pod.volumes)) {
    if (!isPlainObject(v) || typeof v.name !== 'string') continue;
    const direct = isPlainObject(v.configMap) ? v.configMap.name : undefined;
    const projected = isPlainObject(v.projected)
      ? list(v.projected.sources)
          .map((s) => (isPlainObject(s) && isPlainObject(s.configMap) ? s.configMap.name : undefined))
          .find((n) => typeof n === 'string')
      : undefined;
    const name = direct ?? projected;
    if (typeof name === 'string') out[v.name] = name;
  }
  return out;
}

const TITLES: Record<string, string> = {
  pd: 'PD',
  tso: 'PD TSO',
  scheduling: 'PD scheduling',
  tikv: 'TiKV',
  tiflash: 'TiFlash',
  tidb: 'TiDB',
  ticdc: 'TiCDC',
  pump: 'Pump',
  tiproxy: 'TiProxy',
  discovery: 'Discovery',
};

/** The product name of a component (`tikv` -> `TiKV`); unknown components keep their label value. */
export function componentTitle(component: string): string {
  return TITLES[component] ?? component;
}

/** The ConfigMaps the workload mounts, in volume order; all of the component's when it mounts none it has. */
export function mountedConfigMaps(c: ComponentModel): ConfigMapFacts[] {
  const names = [...new Set(Object.values(c.configVolumes))].filter((n) => c.configMaps.has(n));
  return names.length > 0 ? names.map((n) => c.configMaps.get(n)!) : [...c.configMaps.values()];
}
