/**
 * Two models (old and new manifests) -> the structured report: per cluster, per component, what
 * restarts, scales, changes config or image, which objects come and go, and the risks.
 */
import { ANNOTATION } from '../tidbcluster/names';
import { changedOnline } from '../tidbcluster/config-schema';
import { diffConfigData } from './config';
import {
  annotationsOf,
  compareComponents,
  kindOf,
  nameOf,
  namespaceOf,
  type ClusterModel,
  type ComponentModel,
  type ConfigMapFacts,
  type KubeObject,
  type Model,
} from './model';
import {
  RISK,
  type ChangeKind,
  type ClusterDiff,
  type ComponentDiff,
  type ConfigChange,
  type ConfigKeyChange,
  type DiffReport,
  type FieldChange,
  type ImageChange,
  type ObjectChange,
  type Restart,
  type Risk,
} from './report';
import type { Owner } from './live';
import { clusterRisks, ownerRisks } from './risks';
import { databaseChanges } from './database';
import { accountChanges } from './sql-accounts';
import { deepEqual, diffValues, formatPath, isPlainObject, shortValue, type PathStep, type ValueChange } from './values';

export interface CompareOptions {
  /**
   * The old side came from the API server: its objects by {@link objectKey}, with their owners. The new
   * side is then expected to be what applying makes of them (see `appliedOnto`).
   */
  readonly live?: ReadonlyMap<string, readonly Owner[]>;
}

/** Compares the manifests before and after a change. */
export function compareModels(before: Model, after: Model, options: CompareOptions = {}): DiffReport {
  const ids = [...new Set([...before.clusters.keys(), ...after.clusters.keys()])];
  const clusterOf = (id: string) => (after.clusters.get(id) ?? before.clusters.get(id))!;
  ids.sort((a, b) => {
    const x = clusterOf(a);
    const y = clusterOf(b);
    return Number(x.name === '') - Number(y.name === '') || cmp(x.namespace, y.namespace) || cmp(x.name, y.name);
  });
  const clusters: ClusterDiff[] = [];
  const live = options.live !== undefined && options.live.size > 0 ? options.live : undefined;
  for (const id of ids) {
    const diff = compareCluster(before.clusters.get(id), after.clusters.get(id), live);
    if (diff) clusters.push(diff);
  }
  return {
    clusters,
    changed: clusters.length > 0,
    riskCount: clusters.reduce((n, c) => n + c.risks.length, 0),
    ...(live && { live: true }),
  };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The exit status for `--exit-code`: 0 no change, 3 changes without risks, 4 changes with a risk. */
export function exitCodeFor(report: DiffReport): 0 | 3 | 4 {
  if (!report.changed) return 0;
  return report.riskCount > 0 ? 4 : 3;
}

function compareCluster(
  before: ClusterModel | undefined,
  after: ClusterModel | undefined,
  live: ReadonlyMap<string, readonly Owner[]> | undefined,
): ClusterDiff | undefined {
  const base = (after ?? before)!;
  const names = [...new Set([...(before?.components.keys() ?? []), ...(after?.components.keys() ?? [])])].sort(compareComponents);
  const components: ComponentDiff[] = [];
  for (const c of names) {
    const d = compareComponent(c, before?.components.get(c), after?.components.get(c));
    if (d) components.push(d);
  }
  const objects = objectChanges(before, after, components, live);
  const owned = before && live ? ownerRisks(before, live) : [];
  if (objects.length === 0 && components.length === 0 && owned.length === 0) return undefined;
  const change: ChangeKind = !before ? 'added' : !after ? 'removed' : 'changed';
  // Applying never deletes a live object the new manifests leave out: nothing is removed.
  const removes = (r: Risk) => r.id === RISK.clusterRemoved || r.id === RISK.componentRemoved;
  const risks = [...owned, ...clusterRisks(before, after, components).filter((r) => !(live && removes(r)))];
  const keepsPods = live && before && after ? steadyComponents(before, after, components) : undefined;
  const accounts = accountChanges(before, after);
  const database = databaseChanges(before, after);
  return {
    id: base.id,
    namespace: base.namespace,
    name: base.name,
    change,
    components,
    objects,
    ...(accounts.length > 0 && { accounts }),
    ...(database.length > 0 && { database }),
    risks,
    ...(keepsPods && { keepsPods }),
  };
}

/** Components whose workload is on both sides and whose Pods this change does not restart. */
function steadyComponents(before: ClusterModel, after: ClusterModel, components: readonly ComponentDiff[]): string[] {
  return [...after.components.keys()]
    .filter((c) => before.components.get(c)?.workload && after.components.get(c)?.workload)
    .filter((c) => !components.find((d) => d.component === c)?.restart)
    .sort(compareComponents);
}

// ---------------------------------------------------------------------------
// Components
// ---------------------------------------------------------------------------

function compareComponent(component: string, old: ComponentModel | undefined, neu: ComponentModel | undefined): ComponentDiff | undefined {
  const a = old?.workload;
  const b = neu?.workload;
  const change: ChangeKind = a && !b ? 'removed' : !a && b ? 'added' : 'changed';
  const workload = b ?? a;
  const restart = a && b && kindOf(a) === kindOf(b) ? restartOf(a, b) : undefined;
  const from = a ? old!.replicas : undefined;
  const to = b ? neu!.replicas : undefined;
  const replicas = from !== to ? { ...(from !== undefined && { from }), ...(to !== undefined && { to }) } : undefined;
  const images = change === 'removed' ? [] : imageChanges(old?.images ?? {}, neu?.images ?? {});
  const appliedBy = change === 'added' ? 'new-pods' : restart ? 'rolling-restart' : 'next-restart';
  const config = change === 'removed' ? [] : configChanges(old, neu, appliedBy);
  const settings = change === 'changed' && a && b ? settingsChanges(a, b) : [];
  if (change === 'changed' && !restart && !replicas && images.length === 0 && config.length === 0 && settings.length === 0)
    return undefined;
  return {
    component,
    change,
    ...(workload && { workload: `${kindOf(workload)} ${nameOf(workload)}` }),
    ...(restart && { restart }),
    ...(replicas && { replicas }),
    images,
    config,
    settings,
  };
}

function fieldChange(c: ValueChange, path: string): FieldChange {
  const change: ChangeKind = c.from === undefined ? 'added' : c.to === undefined ? 'removed' : 'changed';
  const from = shortValue(c.from);
  const to = shortValue(c.to);
  return { path, change, ...(from !== undefined && { from }), ...(to !== undefined && { to }) };
}

function templateOf(workload: KubeObject): unknown {
  return isPlainObject(workload.spec) ? workload.spec.template : undefined;
}

function restartOf(a: KubeObject, b: KubeObject): Restart | undefined {
  const changes = diffValues(templateOf(a), templateOf(b));
  if (changes.length === 0) return undefined;
  // Paths read relative to the Pod spec (`containers[pd].image`); template metadata keeps its prefix.
  const causes = changes.flatMap((c) => {
    const path = formatPath(c.path[0]?.kind === 'key' && c.path[0].name === 'spec' ? c.path.slice(1) : c.path);
    const a = jsonObject(c.from);
    const b = jsonObject(c.to);
    // A JSON document in an env var (the controller's cluster info) reads better key by key.
    if (a && b) return diffValues(a, b).map((x) => fieldChange(x, `${path} > ${formatPath(x.path)}`));
    return [fieldChange(c, path)];
  });
  return { by: restartedBy(b), causes };
}

/** Who restarts a workload's Pods for a new template (see `Restart.by`). */
function restartedBy(o: KubeObject): Restart['by'] {
  if (kindOf(o) === 'Deployment') return 'deployment';
  const annotations = annotationsOf(o);
  if (annotations[ANNOTATION.replicas] === undefined) return 'statefulset';
  const settings = parseJson(annotations[ANNOTATION.settings] ?? '');
  return isPlainObject(settings) && settings.updateStrategy === 'OnDelete' ? 'on-delete' : 'controller';
}

function jsonObject(v: unknown): Record<string, unknown> | undefined {
  if (typeof v !== 'string' || !v.startsWith('{')) return undefined;
  const parsed = parseJson(v);
  return isPlainObject(parsed) ? parsed : undefined;
}

function imageChanges(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): ImageChange[] {
  const out: ImageChange[] = [];
  for (const container of [...Object.keys(b), ...Object.keys(a).filter((k) => !(k in b))]) {
    if (a[container] === b[container]) continue;
    out.push({
      container,
      ...(a[container] !== undefined && { from: a[container] }),
      ...(b[container] !== undefined && { to: b[container] }),
    });
  }
  return out;
}

function settingsChanges(a: KubeObject, b: KubeObject): FieldChange[] {
  const sa = annotationsOf(a)[ANNOTATION.settings];
  const sb = annotationsOf(b)[ANNOTATION.settings];
  if (sa === sb) return [];
  const ja = parseJson(sa);
  const jb = parseJson(sb);
  if (ja === undefined || jb === undefined) return [fieldChange({ path: [], from: sa, to: sb }, ANNOTATION.settings)];
  return diffValues(ja, jb).map((c) => fieldChange(c, formatPath(c.path)));
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------
// ConfigMaps
// ---------------------------------------------------------------------------

type Pair = readonly [ConfigMapFacts | undefined, ConfigMapFacts | undefined];

/**
 * Old and new ConfigMap of a component, matched through the workload volume that mounts them (with
 * RollingUpdate their names differ), then by name without the hash for ConfigMaps no volume mounts.
 */
export function configPairs(old: ComponentModel | undefined, neu: ComponentModel | undefined): Pair[] {
  const pairs: Pair[] = [];
  const seen = new Set<string>();
  const usedOld = new Set<string>();
  const usedNew = new Set<string>();
  const add = (a: ConfigMapFacts | undefined, b: ConfigMapFacts | undefined) => {
    const key = `${a?.name ?? ''}\n${b?.name ?? ''}`;
    if (seen.has(key)) return;
    seen.add(key);
    pairs.push([a, b]);
    if (a) usedOld.add(a.name);
    if (b) usedNew.add(b.name);
  };
  const va = old?.configVolumes ?? {};
  const vb = neu?.configVolumes ?? {};
  for (const volume of [...Object.keys(vb), ...Object.keys(va).filter((v) => !(v in vb))]) {
    const a = va[volume] === undefined ? undefined : old?.configMaps.get(va[volume]);
    const b = vb[volume] === undefined ? undefined : neu?.configMaps.get(vb[volume]);
    if (a || b) add(a, b);
  }
  const restOld = [...(old?.configMaps.values() ?? [])].filter((c) => !usedOld.has(c.name));
  const restNew = [...(neu?.configMaps.values() ?? [])].filter((c) => !usedNew.has(c.name));
  for (const b of restNew) {
    const a = restOld.find((x) => !usedOld.has(x.name) && baseName(x) === baseName(b));
    add(a, b);
  }
  for (const a of restOld) if (!usedOld.has(a.name)) add(a, undefined);
  return pairs;
}

function baseName(c: ConfigMapFacts): string {
  return c.strategy === 'RollingUpdate' ? c.name.replace(/-[0-9a-f]+$/, '') : c.name;
}

/** The ending of `<cluster>-volume-sizes` (`NAMES.volumeSizes`). */
const VOLUME_SIZES_SUFFIX = '-volume-sizes';

/** Whether the controller applies a key online: a PD or TiKV key its release changes without a restart. */
function keyChangedOnline(component: string | undefined, image: string | undefined, key: string): boolean {
  if (component !== 'pd' && component !== 'tikv') return false;
  if (image === undefined || key.includes('"')) return false;
  return changedOnline(component, image, key.split('.'));
}

function configChanges(
  old: ComponentModel | undefined,
  neu: ComponentModel | undefined,
  appliedBy: ConfigChange['appliedBy'],
): ConfigChange[] {
  const out: ConfigChange[] = [];
  for (const [a, b] of configPairs(old, neu)) {
    if (a && b && a.name === b.name && deepEqual(a.data, b.data)) continue;
    const data = diffConfigData(a?.data ?? {}, b?.data ?? {});
    const strategy = (b ?? a)!.strategy;
    // InPlace: the controller applies the keys the new release changes online to the running servers.
    const online = (k: ConfigKeyChange) =>
      strategy === 'InPlace' &&
      k.file === 'config-file' &&
      k.change !== 'removed' &&
      keyChangedOnline(neu?.component, neu?.mainImage, k.key);
    out.push({
      ...(a && { from: a.name }),
      ...(b && { to: b.name }),
      strategy,
      // The volume sizes are the controller's to act on, not a process's to read at its next start.
      appliedBy: (b ?? a)!.name.endsWith(VOLUME_SIZES_SUFFIX) ? 'controller' : appliedBy,
      keys: data.keys.map((k) => (online(k) ? { ...k, online: true as const } : k)),
      scripts: data.scripts,
      otherData: data.otherData,
    });
  }
  return out;
}

// ---------------------------------------------------------------------------
// Objects
// ---------------------------------------------------------------------------

/** Fields of a component's workload that the component sections already cover. */
function coveredByComponent(path: readonly PathStep[]): boolean {
  const [first, second, third] = path;
  if (first?.name === 'spec' && second?.name === 'template') return true;
  if (first?.name === 'metadata' && second?.name === 'annotations')
    return third?.name === ANNOTATION.replicas || third?.name === ANNOTATION.settings;
  return false;
}

function objectChanges(
  before: ClusterModel | undefined,
  after: ClusterModel | undefined,
  components: readonly ComponentDiff[],
  live: ReadonlyMap<string, readonly Owner[]> | undefined,
): ObjectChange[] {
  const a = before?.objects ?? new Map<string, KubeObject>();
  const b = after?.objects ?? new Map<string, KubeObject>();
  const workloads = new Set(components.map((c) => c.workload).filter((w): w is string => w !== undefined));
  const replaced = new Map<string, string>();
  for (const c of components) {
    for (const cfg of c.config) if (cfg.from && cfg.to && cfg.from !== cfg.to) replaced.set(cfg.from, cfg.to);
  }
  const out: ObjectChange[] = [];
  for (const key of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(key);
    const y = b.get(key);
    const o = (y ?? x)!;
    const ref = { kind: kindOf(o), name: nameOf(o), namespace: namespaceOf(o) };
    if (x && y) {
      if (deepEqual(x, y)) continue;
      const covered = workloads.has(`${ref.kind} ${ref.name}`);
      const changes = diffValues(x, y).filter((c) => !covered || !coveredByComponent(c.path));
      const paths = changes.map((c) => formatPath(c.path.slice(0, 2)));
      const values = shownValues(changes);
      if (paths.length > 0) out.push({ ...ref, change: 'changed', fields: [...new Set(paths)], ...(values && { values }) });
    } else if (x) {
      const by = ref.kind === 'ConfigMap' ? replaced.get(ref.name) : undefined;
      if (by !== undefined && !a.has(`ConfigMap/${ref.namespace}/${by}`) && b.has(`ConfigMap/${ref.namespace}/${by}`)) {
        out.push({ ...ref, change: 'replaced', replacedBy: by });
      } else {
        out.push({ ...ref, change: live?.has(key) ? 'kept' : 'removed' });
      }
    } else {
      out.push({ ...ref, change: 'added' });
    }
  }
  const replacements = new Set(out.filter((o) => o.change === 'replaced').map((o) => o.replacedBy));
  return out
    .filter((o) => !(o.change === 'added' && o.kind === 'ConfigMap' && replacements.has(o.name)))
    .sort((p, q) => cmp(p.kind, q.kind) || cmp(p.name, q.name));
}

/** The most changed fields of an object shown with their values. */
const MAX_SHOWN_VALUES = 4;

/**
 * Each changed field with its old and new values, when there are few and every value is short enough
 * to read in a line; undefined otherwise (the report then names the fields only).
 */
function shownValues(changes: readonly ValueChange[]): FieldChange[] | undefined {
  if (changes.length === 0 || changes.length > MAX_SHOWN_VALUES) return undefined;
  const out: FieldChange[] = [];
  for (const c of changes) {
    const from = shortValue(c.from);
    const to = shortValue(c.to);
    if ((c.from !== undefined && from === undefined) || (c.to !== undefined && to === undefined)) return undefined;
    out.push({
      path: formatPath(c.path),
      change: c.from === undefined ? 'added' : c.to === undefined ? 'removed' : 'changed',
      ...(from !== undefined && { from }),
      ...(to !== undefined && { to }),
    });
  }
  return out;
}
