/**
 * The parts every component's StatefulSet shares: labels, pod spec and main container from the
 * resolved settings, env and container merging, volume claim templates, and the StatefulSet itself.
 * Pure functions of the resolved spec; the component constructs (`component-construct.ts` and one
 * subclass per component) assemble them.
 */
import { KEEP_NULL } from './kube';
import type { Container, EnvVar, PersistentVolumeClaim, PodSpec, StatefulSet, Volume, VolumeMount } from '../../imports/k8s';
import type { ResolvedCluster, ResolvedComponent, ResolvedPod } from '../tidbcluster/resolve';
import { ANNOTATION, names, selectorLabels, type ComponentKind, type Labels } from '../tidbcluster/names';
import { encodeComponentSettings } from '../tidbcluster/contract';
import { drainWaitSeconds } from '../tidbcluster/guard-rails';
import { preStopScript } from './scripts/prestop';
import { SERVING_CONDITION } from '../tidbcluster/serving';

/** `metadata.namespace` when the cluster has one. */
export function namespaced(cluster: ResolvedCluster, name: string, labels?: Labels, annotations?: Record<string, string>) {
  return {
    name,
    ...(cluster.namespace !== undefined && { namespace: cluster.namespace }),
    ...(labels && { labels }),
    ...(annotations && Object.keys(annotations).length > 0 && { annotations }),
  };
}

/** Pod labels: the user's, with the four selector labels winning on a clash. */
export function podLabels(
  cluster: ResolvedCluster,
  comp: { readonly kind: ComponentKind | 'discovery'; readonly pod: ResolvedPod },
): Labels {
  return { ...comp.pod.labels, ...selectorLabels(cluster.instance, comp.kind) };
}

/** Pod annotations: Prometheus scrape hints under the user's (the user's win). */
export function podAnnotations(comp: ResolvedComponent, metricsPort: number, metricsPath = '/metrics'): Record<string, string> {
  return {
    'prometheus.io/scrape': 'true',
    'prometheus.io/path': metricsPath,
    'prometheus.io/port': String(metricsPort),
    ...comp.pod.annotations,
  };
}

const SYSCTL_INIT = 'tidb.pingcap.com/sysctl-init';

export interface BasePodSpecOptions {
  /**
   * Name of the privileged init container that sets sysctls with the `sysctl-init` annotation, or
   * false where the operator has none (TiCDC, Pump, TiProxy: their sysctls stay in the pod security
   * context). @default 'init'
   */
  readonly sysctlInit?: string | false;
  /**
   * The component: its Pods carry the readiness gate `tidb-gitops.io/serving` when the cluster gives
   * it one (`ResolvedCluster.servingGates`). @default none (no gate)
   */
  readonly kind?: ComponentKind;
}

/**
 * Pod-level fields from the resolved settings. With the `sysctl-init` annotation, sysctls move from the
 * pod security context into a privileged init container (unsafe sysctls need no kubelet allow-list then).
 */
export function basePodSpec(
  cluster: ResolvedCluster,
  comp: Pick<ResolvedComponent, 'pod' | 'initContainers' | 'resources'>,
  options: BasePodSpecOptions = {},
): Omit<PodSpec, 'containers'> & { initContainers: Container[] } {
  const p = comp.pod;
  const sysctlInit = options.sysctlInit ?? 'init';
  const initContainers: Container[] = [];
  let securityContext = p.securityContext;
  const sysctls = securityContext?.sysctls ?? [];
  if (sysctlInit && p.annotations[SYSCTL_INIT] === 'true' && sysctls.length > 0) {
    initContainers.push({
      name: sysctlInit,
      image: cluster.helper.image,
      imagePullPolicy: cluster.helper.imagePullPolicy as Container['imagePullPolicy'],
      command: ['sh', '-c', `sysctl -w ${sysctls.map((s) => `${s.name}=${s.value}`).join(' ')}`],
      securityContext: { privileged: true },
      ...(hasResources(comp) && { resources: comp.resources }),
    });
    securityContext = { ...securityContext, sysctls: [] };
  }
  initContainers.push(...comp.initContainers);
  return {
    ...(p.schedulerName && { schedulerName: p.schedulerName }),
    ...(p.affinity && { affinity: p.affinity }),
    ...(Object.keys(p.nodeSelector).length > 0 && { nodeSelector: p.nodeSelector }),
    ...(p.hostNetwork && { hostNetwork: true }),
    restartPolicy: 'Always',
    ...(p.tolerations.length > 0 && { tolerations: p.tolerations }),
    ...(securityContext && { securityContext }),
    ...(p.topologySpreadConstraints.length > 0 && { topologySpreadConstraints: p.topologySpreadConstraints }),
    dnsPolicy: p.dnsPolicy,
    ...(p.dnsConfig && { dnsConfig: p.dnsConfig }),
    ...(p.automountServiceAccountToken !== undefined && { automountServiceAccountToken: p.automountServiceAccountToken }),
    ...(p.priorityClassName && { priorityClassName: p.priorityClassName }),
    ...(p.imagePullSecrets.length > 0 && { imagePullSecrets: p.imagePullSecrets }),
    ...(p.terminationGracePeriodSeconds !== undefined && { terminationGracePeriodSeconds: p.terminationGracePeriodSeconds }),
    ...(p.serviceAccountName && { serviceAccountName: p.serviceAccountName }),
    ...(options.kind && cluster.servingGates.includes(options.kind) && { readinessGates: [{ conditionType: SERVING_CONDITION }] }),
    initContainers,
  };
}

/**
 * The component's main container as its resolved settings give it (named after the component; `envFrom`,
 * resources and security context only where set); the construct adds command, ports, env and mounts.
 */
export function componentContainer(comp: ResolvedComponent): Container {
  return {
    name: comp.kind,
    image: comp.image,
    imagePullPolicy: comp.imagePullPolicy as Container['imagePullPolicy'],
    ...(comp.envFrom.length > 0 && { envFrom: comp.envFrom }),
    ...(hasResources(comp) && { resources: comp.resources }),
    ...(comp.securityContext && { securityContext: comp.securityContext }),
  };
}

export function hasResources(comp: { resources: object }): boolean {
  return Object.keys(comp.resources).length > 0;
}

export function fieldRefEnv(name: string, fieldPath: string): EnvVar {
  return { name, valueFrom: { fieldRef: { fieldPath } } };
}

/** User env goes after the renderer's; a name the renderer sets cannot be overridden. */
export function mergeEnv(own: EnvVar[], user: EnvVar[]): EnvVar[] {
  const taken = new Set(own.map((e) => e.name));
  return [...own, ...user.filter((e) => !taken.has(e.name))];
}

/** Merge keys of the container lists a strategic merge patch merges item by item. */
const MERGE_KEYS: Record<string, string> = { env: 'name', volumeMounts: 'mountPath', ports: 'containerPort', volumeDevices: 'devicePath' };

/**
 * `additionalContainers`: one named like a rendered container is merged into it (strategic merge
 * patch semantics), the others are appended in order.
 */
export function mergeContainers(own: Container[], additional: Container[]): Container[] {
  const out = own.map((c) => ({ ...c }));
  for (const extra of additional) {
    const i = out.findIndex((c) => c.name === extra.name);
    if (i >= 0)
      out[i] = mergeObject(
        out[i] as unknown as Record<string, unknown>,
        extra as unknown as Record<string, unknown>,
      ) as unknown as Container;
    else out.push(extra);
  }
  return out;
}

function mergeObject(base: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    const cur = out[key];
    if (Array.isArray(value) && Array.isArray(cur) && MERGE_KEYS[key]) {
      out[key] = mergeList(cur as Record<string, unknown>[], value as Record<string, unknown>[], MERGE_KEYS[key]);
    } else if (isPlainObject(value) && isPlainObject(cur)) {
      out[key] = mergeObject(cur, value);
    } else {
      out[key] = value;
    }
  }
  return out;
}

function mergeList(base: Record<string, unknown>[], patch: Record<string, unknown>[], key: string): Record<string, unknown>[] {
  const out = base.map((x) => ({ ...x }));
  for (const item of patch) {
    const i = out.findIndex((x) => x[key] === item[key]);
    if (i >= 0) out[i] = mergeObject(out[i], item);
    else out.push(item);
  }
  return out;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The downward-API volume the start scripts read (`/etc/podinfo/annotations`). */
export const ANNOTATIONS_VOLUME: Volume = {
  name: 'annotations',
  // The items are an atomic list: the `apiVersion` the server would default is given, so a
  // client-side apply finds nothing to change.
  downwardAPI: { items: [{ path: 'annotations', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.annotations' } }] },
};
export const ANNOTATIONS_MOUNT: VolumeMount = { name: 'annotations', mountPath: '/etc/podinfo', readOnly: true };

/** `config` and `startup-script` volumes: two projections of the component's ConfigMap. */
export function configVolumes(configMapName: string, configFile: string, scriptFile: string): Volume[] {
  return [
    { name: 'config', configMap: { name: configMapName, items: [{ key: 'config-file', path: configFile }] } },
    { name: 'startup-script', configMap: { name: configMapName, items: [{ key: 'startup-script', path: scriptFile }] } },
  ];
}

/**
 * A ReadWriteOnce claim template; an explicit `storageClassName: ""` is kept (it asks for no class).
 * It carries what the API server fills in and stores (`volumeMode`, `status.phase`; and the
 * `creationTimestamp: null` of Go's empty time where the target stores it, see
 * {@link storedClaimTemplates}): claim templates are one atomic list, so without them every
 * client-side apply would see a difference and send the list again.
 */
export function volumeClaimTemplate(
  name: string,
  storage: string | undefined,
  storageClassName: string | undefined,
  volumeAttributesClassName?: string,
): PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name },
    spec: {
      accessModes: ['ReadWriteOnce'],
      ...(storageClassName !== undefined && { storageClassName }),
      ...(storage !== undefined && { resources: { requests: { storage } } }),
      ...(volumeAttributesClassName !== undefined && { volumeAttributesClassName }),
      volumeMode: 'Filesystem',
    },
    status: { phase: 'Pending' },
  };
}

/**
 * Claim templates as the target's API server stores them: before 1.34 it writes Go's empty time back
 * as `creationTimestamp: null`; from 1.34 `metav1.ObjectMeta.CreationTimestamp` is `omitzero`
 * (k8s.io/apimachinery `pkg/apis/meta/v1/types.go`) and the server leaves it out.
 */
export function storedClaimTemplates(claims: PersistentVolumeClaim[], kubeMinor: number): PersistentVolumeClaim[] {
  if (kubeMinor >= 34) return claims;
  return claims.map((c) => ({ ...c, metadata: { ...c.metadata, creationTimestamp: KEEP_NULL as unknown as string } }));
}

/** PVC templates and mounts for `storageVolumes` (`<component>-<name>`). */
export function storageVolumeClaims(comp: ResolvedComponent): { claims: PersistentVolumeClaim[]; mounts: VolumeMount[] } {
  const claims: PersistentVolumeClaim[] = [];
  const mounts: VolumeMount[] = [];
  for (const v of comp.storageVolumes) {
    const name = names.storageVolume(comp.kind, v.name);
    claims.push(volumeClaimTemplate(name, v.storageSize, v.storageClassName, v.volumeAttributesClassName));
    if (v.mountPath) mounts.push({ name, mountPath: v.mountPath });
  }
  return { claims, mounts };
}

/**
 * The component StatefulSet. By the ownership contract it carries neither `spec.replicas` nor
 * `spec.updateStrategy`: the desired count and strategy travel in annotations, and the controller
 * owns those fields, writing the strategy together with its partition.
 */
export function statefulSet(
  cluster: ResolvedCluster,
  comp: ResolvedComponent,
  podSpec: PodSpec,
  claims: PersistentVolumeClaim[],
  annotations: Record<string, string>,
): StatefulSet {
  const labels = selectorLabels(cluster.instance, comp.kind);
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: namespaced(cluster, names.statefulSet(cluster.name, comp.kind), labels, {
      [ANNOTATION.replicas]: String(comp.replicas),
      [ANNOTATION.settings]: encodeComponentSettings(comp.settings),
    }),
    spec: {
      selector: { matchLabels: labels },
      serviceName: names.peerService(cluster.name, comp.kind),
      podManagementPolicy: comp.podManagementPolicy,
      template: {
        metadata: { labels: podLabels(cluster, comp), annotations },
        spec: podSpec,
      },
      ...(claims.length > 0 && { volumeClaimTemplates: storedClaimTemplates(claims, cluster.kubeMinor) }),
    },
  };
}

/** Drops empty `initContainers` so the pod spec stays minimal. */
export function finishPodSpec(base: ReturnType<typeof basePodSpec>, containers: Container[], volumes: Volume[]): PodSpec {
  const { initContainers, ...rest } = base;
  return {
    ...rest,
    ...(initContainers.length > 0 && { initContainers: initContainers.map(storedEnv) }),
    containers: containers.map(storedEnv),
    volumes,
  };
}

/**
 * The container's env as the API server stores it: an empty `value` is dropped (EnvVar.value is
 * `omitempty`), which means the same empty variable; rendered as stored, a client-side apply finds
 * nothing to change.
 */
function storedEnv(c: Container): Container {
  if (!c.env?.some((e) => e.value === '')) return c;
  return { ...c, env: c.env.map(({ value, ...rest }) => (value === '' ? rest : { ...rest, value })) };
}

/**
 * The preStop hook of a PD, TiKV or TiCDC container: it holds a deleted Pod until the controller says
 * what it had to hand over is gone (see `scripts/prestop.ts`), bounded by the Pod's grace period less
 * the time the server needs to stop. None when the cluster turns drain hooks off or the grace period
 * leaves no time for it.
 */
export function preStopHook(cluster: ResolvedCluster, comp: Pick<ResolvedComponent, 'pod'>, certDir: string): Pick<Container, 'lifecycle'> {
  const seconds = drainWaitSeconds(comp.pod.terminationGracePeriodSeconds);
  if (!cluster.drainHooks || seconds === 0) return {};
  const script = preStopScript({
    clusterName: cluster.name,
    namespace: cluster.namespace,
    discoveryMtls: cluster.discoveryMtls,
    certDir,
    seconds,
  });
  return { lifecycle: { preStop: { exec: { command: ['/bin/sh', '-c', script] } } } };
}
