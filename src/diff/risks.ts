/**
 * The one place that detects risks (their ids are `RISK`, in report.ts). A risk is something that
 * fails on apply, stops Pods, moves data, or leaves the cluster weaker than a reviewer might assume.
 */
import { parseToml } from '../base/toml';
import {
  compareComponents,
  componentTitle,
  kindOf,
  mountedConfigMaps,
  nameOf,
  type ClusterModel,
  type ComponentModel,
  type KubeObject,
} from './model';
import type { Owner } from './live';
import { RISK, type ComponentDiff, type Risk, type RiskId } from './report';
import { deepEqual, diffValues, formatPath, isPlainObject, shortValue, type ValueChange } from './values';
import { compareVersions, formatVersion, imageVersion, type SemVer } from './version';
import { quantityToBytes } from '../base/quantity';
import { backupRisks, logBackupRisks, restoreRisks } from './backups';
import { disruptionBudgetRisks, networkPolicyRisks } from './guard-rails';
import { initializerRisks } from './initializer';
import { databaseRisks } from './database';
import { sqlAccountRisks } from './sql-accounts';
import { monitoringRisks } from './monitoring';
import { replaceRisks } from './replace';
import { downtimeRisks } from './downtime';

/** PD's `replication.max-replicas` when its config does not set it. */
export const DEFAULT_MAX_REPLICAS = 3;

/** The risks of one cluster's change, in component order; `components` is what compare found. */
export function clusterRisks(
  before: ClusterModel | undefined,
  after: ClusterModel | undefined,
  components: readonly ComponentDiff[],
): Risk[] {
  if (!after || after.components.size === 0) {
    return before && before.components.size > 0 ? [clusterRemoved(before)] : [];
  }
  const out: Risk[] = [];
  // Every component, not only those with a section of their own: a claim template change alone does not restart anything.
  const names = [...new Set([...(before?.components.keys() ?? []), ...after.components.keys()])].sort(compareComponents);
  for (const c of names) {
    const old = before?.components.get(c);
    const neu = after.components.get(c);
    if (old?.workload && neu?.workload) out.push(...immutableFieldRisks(c, old.workload, neu.workload));
    if (old?.workload && !neu?.workload) out.push(componentRemoved(c, old.workload));
    const diff = components.find((d) => d.component === c);
    if (!diff) continue;
    out.push(...replicaRisks(diff, old, neu, before, after));
    out.push(...downgradeRisks(diff));
  }
  const skew = versionSkew(before, after);
  if (skew) out.push(skew);
  const access = nodeAccessRisk(before, after);
  if (access) out.push(access);
  const mode = pdModeRisk(before, after, components.find((d) => d.component === 'pd')?.restart !== undefined);
  if (mode) out.push(mode);
  out.push(...backupRisks(before, after));
  out.push(...restoreRisks(before, after));
  out.push(...logBackupRisks(before, after));
  out.push(...disruptionBudgetRisks(before, after));
  out.push(...networkPolicyRisks(before, after));
  out.push(...initializerRisks(before, after));
  out.push(...sqlAccountRisks(before, after));
  out.push(...databaseRisks(before, after));
  out.push(...monitoringRisks(before, after));
  out.push(...replaceRisks(before, after));
  out.push(...downtimeRisks(before, after, components, pdMaxReplicas(after)));
  return out;
}

/** PD's micro-services this cluster runs (StatefulSets of component tso / scheduling). */
const pdmsOf = (cluster: ClusterModel | undefined): string[] =>
  ['tso', 'scheduling'].filter((c) => cluster?.components.get(c)?.workload !== undefined);

/**
 * A PD that runs before and after the change, switching between serving everything and serving as the
 * micro-services' API server: its start script changes, and TSO and scheduling move between PD and
 * their own servers. With an in-place ConfigMap nothing restarts PD, so the members switch only when
 * they next restart.
 */
function pdModeRisk(before: ClusterModel | undefined, after: ClusterModel, pdRestarts: boolean): Risk | undefined {
  if (!before?.components.get('pd')?.workload || !after.components.get('pd')?.workload) return undefined;
  const was = pdmsOf(before);
  const now = pdmsOf(after);
  if (was.length > 0 === now.length > 0) return undefined;
  const what =
    now.length > 0
      ? `PD switches to serving as the API server of its micro-services (${now.join(', ')}), which take TSO and scheduling over`
      : `PD's micro-services (${was.join(', ')}) are removed and PD goes back to serving TSO and scheduling itself`;
  const when = pdRestarts
    ? 'every PD member restarts in the new mode'
    : "PD's ConfigMap is updated in place, so each member switches only when it next restarts: restart PD's Pods yourself (or use configUpdateStrategy RollingUpdate)";
  return risk(RISK.pdMode, 'pd', `${what}; ${when}. Check that your PD version supports the switch on a running cluster before merging.`);
}

/** The ClusterRole that lets the controller read Nodes or patch PVs, if the cluster renders one. */
function nodeReader(cluster: ClusterModel | undefined): KubeObject | undefined {
  return [...(cluster?.objects.values() ?? [])].find((o) => kindOf(o) === 'ClusterRole');
}

/** Which cluster-scoped resources a rendered ClusterRole grants: nodes (topology), persistentvolumes (reclaim policy). */
function grants(role: KubeObject): { nodes: boolean; volumes: boolean } {
  const resources = ((role as { rules?: { resources?: string[] }[] }).rules ?? []).flatMap((r) => r.resources ?? []);
  return { nodes: resources.includes('nodes'), volumes: resources.includes('persistentvolumes') };
}

const CLUSTER_SCOPED_NOTE =
  'It is cluster-scoped: the tool that applies it needs rights on ClusterRoles and ClusterRoleBindings (an Argo CD project must list both in clusterResourceWhitelist).';

function nodeAccessRisk(before: ClusterModel | undefined, after: ClusterModel): Risk | undefined {
  const had = nodeReader(before);
  const has = nodeReader(after);
  if (has && !had) {
    const g = grants(has);
    const parts = [
      g.nodes &&
        `read access to Nodes (get nodes) to copy their topology labels onto TiKV and TiFlash stores and TiDB servers, because the cluster asks for them (PD's replication.location-labels or spec.tikv.storeLabels)`,
      g.volumes &&
        `get and patch on PersistentVolumes to set spec.pvReclaimPolicy on those bound to the cluster's claims (tidb-gitops.io/pv-reclaim-policy: "true"); it patches no other PV`,
    ].filter((p): p is string => typeof p === 'string');
    if (g.nodes && !g.volumes) {
      return risk(
        RISK.nodeAccess,
        'discovery',
        `The companion controller gets read access to Nodes (ClusterRole ${nameOf(has)}: get nodes, nothing else) to copy their topology labels onto ` +
          `TiKV and TiFlash stores and TiDB servers, because the cluster asks for them (PD's replication.location-labels or spec.tikv.storeLabels). ` +
          CLUSTER_SCOPED_NOTE,
      );
    }
    return risk(
      RISK.nodeAccess,
      'discovery',
      `The companion controller gets, through ClusterRole ${nameOf(has)}, ${parts.join('; and ')}. ${CLUSTER_SCOPED_NOTE}`,
    );
  }
  if (had && !has) {
    const g = grants(had);
    const lost = [
      g.nodes &&
        'it stops setting topology labels. The labels stores and running TiDB servers have stay; a TiDB server that restarts comes back without them.',
      g.volumes && "it stops setting the PVs' reclaim policy; the PVs keep the policy they have.",
    ].filter((p): p is string => typeof p === 'string');
    const what =
      g.nodes && !g.volumes
        ? 'read access to Nodes'
        : g.volumes && !g.nodes
          ? 'access to PersistentVolumes'
          : 'access to Nodes and PersistentVolumes';
    return risk(
      RISK.nodeAccess,
      'discovery',
      `The companion controller loses ${what} (ClusterRole ${nameOf(had)} is deleted): ${lost.join(' And ')}`,
    );
  }
  return undefined;
}

/** Live objects of the cluster that still name an owner, grouped by owner. */
export function ownerRisks(before: ClusterModel, live: ReadonlyMap<string, readonly Owner[]>): Risk[] {
  const byOwner = new Map<string, string[]>();
  for (const [key, o] of before.objects) {
    for (const owner of live.get(key) ?? []) {
      // Pods name their StatefulSet, which is what keeps them: only owners outside the manifests matter.
      if (before.objects.has(`${owner.kind}/${before.namespace}/${owner.name}`)) continue;
      const id = `${owner.kind} ${owner.name}`;
      byOwner.set(id, [...(byOwner.get(id) ?? []), `${kindOf(o)} ${nameOf(o)}`]);
    }
  }
  return [...byOwner].map(([owner, objects]) =>
    risk(
      RISK.ownerReference,
      undefined,
      `${objects.length === 1 ? '1 object is' : `${objects.length} objects are`} owned by ${owner} (${objects.join(', ')}): ` +
        `while that owner exists, deleting it deletes them, and its operator keeps rewriting them. Stop the operator and orphan them first ` +
        `(\`kubectl delete ${owner.split(' ')[0].toLowerCase()} ${owner.split(' ')[1]} --cascade=orphan\`; see "Migrating from tidb-operator" in docs/operations.md).`,
    ),
  );
}

function risk(id: RiskId, component: string | undefined, message: string): Risk {
  return component === undefined ? { id, message } : { id, component, message };
}

function clusterRemoved(before: ClusterModel): Risk {
  const sets = [...before.components.values()]
    .filter((c) => c.workload && kindOf(c.workload) === 'StatefulSet')
    .map((c) => nameOf(c.workload!));
  return risk(
    RISK.clusterRemoved,
    undefined,
    `The cluster ${before.id} is removed: its StatefulSets (${sets.join(', ') || 'none'}) are deleted and all its Pods stop. ` +
      'PersistentVolumeClaims are kept, with their data, until someone deletes them.',
  );
}

function componentRemoved(component: string, workload: KubeObject): Risk {
  const title = componentTitle(component);
  const what = `${kindOf(workload)} ${nameOf(workload)}`;
  if (component === 'discovery') {
    return risk(
      RISK.componentRemoved,
      component,
      `${what} is removed: the companion controller stops, so nothing performs rolling upgrades, scaling or failover, and new PD Pods find no discovery service.`,
    );
  }
  return risk(
    RISK.componentRemoved,
    component,
    `${title} is removed: ${what} is deleted and its Pods stop. Its PersistentVolumeClaims are kept, with their data, until someone deletes them.`,
  );
}

// ---------------------------------------------------------------------------
// Fields Kubernetes does not let change
// ---------------------------------------------------------------------------

function specOf(o: KubeObject): Record<string, unknown> {
  return isPlainObject(o.spec) ? o.spec : {};
}

/**
 * Claim templates as the API server compares them, decoded: a `creationTimestamp: null` and none are
 * both Go's empty time. Servers before 1.34 write the null back, later ones leave it out; neither differs.
 */
function claimTemplatesAsCompared(templates: unknown): unknown {
  if (!Array.isArray(templates)) return templates;
  return templates.map((t) => {
    if (!isPlainObject(t) || !isPlainObject(t.metadata) || t.metadata.creationTimestamp !== null) return t;
    const { creationTimestamp: _empty, ...metadata } = t.metadata;
    return { ...t, metadata };
  });
}

function immutableFieldRisks(component: string, old: KubeObject, neu: KubeObject): Risk[] {
  if (kindOf(old) !== kindOf(neu)) return [];
  const what = `${kindOf(neu)} ${nameOf(neu)}`;
  const a = specOf(old);
  const b = specOf(neu);
  const recreate =
    `Kubernetes refuses to update this field, so applying fails until the ${kindOf(neu)} is deleted with ` +
    `\`kubectl delete ${kindOf(neu).toLowerCase()} ${nameOf(neu)} --cascade=orphan\` (its Pods and PersistentVolumeClaims stay) and applied again.`;
  const out: Risk[] = [];
  if (!deepEqual(a.selector, b.selector)) {
    out.push(
      risk(RISK.selector, component, `${what}: spec.selector changes. ${recreate} Pods the new selector does not match are left behind.`),
    );
  }
  if (kindOf(neu) !== 'StatefulSet') return out;
  if (!deepEqual(a.serviceName, b.serviceName)) {
    out.push(
      risk(
        RISK.serviceName,
        component,
        `${what}: spec.serviceName changes (${show(a.serviceName)} -> ${show(b.serviceName)}). ${recreate}`,
      ),
    );
  }
  const claims = { old: claimTemplatesAsCompared(a.volumeClaimTemplates), neu: claimTemplatesAsCompared(b.volumeClaimTemplates) };
  if (!deepEqual(claims.old, claims.neu)) {
    const changes = diffValues(claims.old ?? [], claims.neu ?? []);
    const sizes = sizeChanges(changes);
    const shrinks = sizes?.filter((s) => s.to < s.from) ?? [];
    const message =
      sizes === undefined
        ? `${recreate} The templates only shape PersistentVolumeClaims created later: to grow existing volumes, resize each PVC ` +
          '(its StorageClass must allow volume expansion).'
        : shrinks.length > 0
          ? 'Refused: volumes cannot shrink. The API server refuses this StatefulSet and the companion controller refuses the ' +
            'size (event VolumeShrinkRefused); keep each size at least what it was.'
          : 'Volumes grow: the API server refuses this StatefulSet until the companion controller has grown each claim ' +
            '(its StorageClass must allow volume expansion) and re-created the StatefulSet with its Pods kept; ' +
            'meanwhile Argo CD fails this object\'s sync and Flux holds the Kustomization back (see "Growing volumes").';
    out.push(risk(RISK.pvcTemplate, component, `${what}: volumeClaimTemplates change (${describeClaimChanges(changes)}). ${message}`));
  }
  if (!deepEqual(a.podManagementPolicy, b.podManagementPolicy)) {
    out.push(
      risk(
        RISK.immutableField,
        component,
        `${what}: spec.podManagementPolicy changes (${show(a.podManagementPolicy)} -> ${show(b.podManagementPolicy)}). ${recreate}`,
      ),
    );
  }
  return out;
}

function show(v: unknown): string {
  return v === undefined ? '(none)' : (shortValue(v) ?? '(long value)');
}

/** The changes when each is a claim template's storage request between two quantities, else undefined. */
function sizeChanges(changes: readonly ValueChange[]): { from: number; to: number }[] | undefined {
  const out: { from: number; to: number }[] = [];
  for (const c of changes) {
    const rest = c.path.slice(1).map((p) => (typeof p === 'object' && p !== null && 'name' in p ? p.name : p));
    if (rest.join('.') !== 'spec.resources.requests.storage') return undefined;
    const from = typeof c.from === 'string' || typeof c.from === 'number' ? quantityToBytes(c.from) : undefined;
    const to = typeof c.to === 'string' || typeof c.to === 'number' ? quantityToBytes(c.to) : undefined;
    if (from === undefined || to === undefined) return undefined;
    out.push({ from, to });
  }
  return out;
}

/** `tikv: spec.resources.requests.storage 100Gi -> 200Gi`, at most three of them. */
function describeClaimChanges(changes: readonly ValueChange[]): string {
  const parts = changes.slice(0, 3).map((c) => {
    const [first, ...rest] = c.path;
    const claim = first ? first.name : 'templates';
    if (rest.length === 0) return `${claim} ${c.from === undefined ? 'added' : c.to === undefined ? 'removed' : 'changed'}`;
    return `${claim}: ${formatPath(rest)} ${show(c.from)} -> ${show(c.to)}`;
  });
  if (changes.length > 3) parts.push(`${changes.length - 3} more`);
  return parts.join('; ');
}

// ---------------------------------------------------------------------------
// Replica counts
// ---------------------------------------------------------------------------

function replicaRisks(
  diff: ComponentDiff,
  old: ComponentModel | undefined,
  neu: ComponentModel | undefined,
  before: ClusterModel | undefined,
  after: ClusterModel,
): Risk[] {
  const out: Risk[] = [];
  const from = old?.workload ? old.replicas : undefined;
  const to = neu?.workload ? neu.replicas : undefined;
  const c = diff.component;
  const change = from === undefined ? `${to}` : `${from} -> ${to}`;
  if (c === 'pd' && to !== undefined && to !== from) {
    if (to === 0) out.push(risk(RISK.pdFew, c, `PD ${change}: with no PD member nothing in the cluster works.`));
    else if (to % 2 === 0) {
      out.push(
        risk(
          RISK.pdEven,
          c,
          `PD ${change}: an even number of PD members tolerates no more failures than one member fewer ` +
            `(${to} members survive ${(to - 1) >> 1} failure${(to - 1) >> 1 === 1 ? '' : 's'}, as ${to - 1} do${to - 1 === 1 ? 'es' : ''}); prefer an odd count.`,
        ),
      );
    } else if (to < 3) {
      out.push(risk(RISK.pdFew, c, `PD ${change}: fewer than 3 PD members; losing the one PD Pod stops the whole cluster.`));
    }
  }
  if (from !== undefined && to !== undefined && to < from) {
    if (c === 'pd') {
      out.push(
        risk(
          RISK.scaleIn,
          c,
          `PD scales in ${change}: the controller removes one member at a time, highest ordinal first ` +
            '(leadership moves away first, then the member is deleted through PD, then its Pod).',
        ),
      );
    } else if (c === 'tikv' || c === 'tiflash') {
      out.push(
        risk(
          RISK.scaleIn,
          c,
          `${componentTitle(c)} scales in ${change}: each removed store is taken offline first and PD moves its regions to the ` +
            'remaining stores; the controller does this one store at a time, highest ordinal first. With much data this takes ' +
            'hours, and the remaining stores need room for it.',
        ),
      );
    }
  }
  if (c === 'tikv' && to !== undefined) {
    const maxAfter = pdMaxReplicas(after);
    const maxBefore = before ? pdMaxReplicas(before) : undefined;
    if (maxAfter !== undefined && to < maxAfter && (to !== from || maxAfter !== maxBefore)) {
      out.push(
        from !== undefined && to < from
          ? risk(
              RISK.tikvMaxReplicas,
              c,
              `TiKV ${change} is below PD's replication.max-replicas (${maxAfter}): the controller refuses this scale-in ` +
                `(event FailedScaleIn) while it would leave fewer stores than copies of each region, so TiKV stays at ${Math.min(from, maxAfter)}.`,
            )
          : risk(
              RISK.tikvMaxReplicas,
              c,
              `TiKV ${change} is below PD's replication.max-replicas (${maxAfter}): regions cannot get all ${maxAfter} copies, ` +
                'so PD keeps reporting them as under-replicated and one lost store can lose data.',
            ),
      );
    }
  }
  return out;
}

/** PD's `replication.max-replicas` from its config file; undefined when the cluster renders no PD. */
export function pdMaxReplicas(cluster: ClusterModel): number | undefined {
  const pd = cluster.components.get('pd');
  if (!pd?.workload) return undefined;
  for (const cm of mountedConfigMaps(pd)) {
    const text = cm.data['config-file'];
    if (text === undefined) continue;
    try {
      const replication = parseToml(text).replication;
      const max = isPlainObject(replication) ? Number(replication['max-replicas']) : NaN;
      if (Number.isInteger(max) && max > 0) return max;
    } catch {
      // A config PD cannot read fails at PD's start; this report only falls back to the default.
    }
  }
  return DEFAULT_MAX_REPLICAS;
}

// ---------------------------------------------------------------------------
// Versions
// ---------------------------------------------------------------------------

function downgradeRisks(diff: ComponentDiff): Risk[] {
  const out: Risk[] = [];
  for (const img of diff.images) {
    if (!img.from || !img.to) continue;
    // Versions of different images (the operator's discovery and this controller) do not compare.
    if (imageRepository(img.from) !== imageRepository(img.to)) continue;
    const a = imageVersion(img.from);
    const b = imageVersion(img.to);
    if (a && b && compareVersions(b, a) < 0) {
      out.push(
        risk(
          RISK.downgrade,
          diff.component,
          `${componentTitle(diff.component)} container ${img.container} goes down from ${formatVersion(a)} to ${formatVersion(b)} ` +
            `(${img.from} -> ${img.to}). TiDB does not support downgrades in general: data written by the newer version may not be readable; check the release notes.`,
        ),
      );
    }
  }
  return out;
}

/** `registry/name` of an image reference, without its tag or digest. */
function imageRepository(image: string): string {
  const name = image.split('@')[0];
  const colon = name.lastIndexOf(':');
  return colon > name.lastIndexOf('/') ? name.slice(0, colon) : name;
}

const SKEW_COMPONENTS = ['pd', 'tso', 'scheduling', 'tikv', 'tidb'] as const;

function coreVersions(cluster: ClusterModel | undefined): Map<string, SemVer> {
  const out = new Map<string, SemVer>();
  for (const c of SKEW_COMPONENTS) {
    const image = cluster?.components.get(c)?.mainImage;
    const v = image === undefined ? undefined : imageVersion(image);
    if (v) out.set(c, v);
  }
  return out;
}

function versionSkew(before: ClusterModel | undefined, after: ClusterModel): Risk | undefined {
  const now = coreVersions(after);
  const distinct = new Set([...now.values()].map(formatVersion));
  if (distinct.size < 2) return undefined;
  const was = coreVersions(before);
  const unchanged = [...now].every(([c, v]) => was.has(c) && formatVersion(was.get(c)!) === formatVersion(v)) && was.size === now.size;
  if (unchanged) return undefined;
  const list = [...now].map(([c, v]) => `${componentTitle(c)} ${formatVersion(v)}`).join(', ');
  return risk(
    RISK.versionSkew,
    undefined,
    `After this change the versions differ (${list}). PD (and its micro-services), TiKV and TiDB are meant to run the same version; ` +
      'a difference is expected only while an upgrade is under way.',
  );
}
