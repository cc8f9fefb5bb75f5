/**
 * The last look at every rendered object before it is written: the API server's own rules (the JSON
 * schema cannot see them) on names, labels, selectors, annotations and their size, ConfigMap keys and
 * size, containers (names, images, environment variable names, ports) and Services (type, ports).
 * The input is checked against the same rules where it is read, with lines; this catches what only
 * exists once values are combined, such as a cluster's and a component's annotations together.
 */
import { isIP } from 'node:net';
import {
  annotationProblems,
  configMapKeyProblem,
  configMapSizeProblem,
  dnsLabelProblem,
  envNameProblem,
  imageProblem,
  labelProblems,
  objectNameProblem,
  objectSizeProblem,
  portNameProblem,
  portProblem,
  serviceTypeProblem,
  targetPortProblem,
} from '../tidbcluster/api-rules';
import { DNS1123_SUBDOMAIN } from '../base/patterns';
import { joinKey } from '../tidbcluster/crd-schema';
import { claimSizeProblem, classNameProblem } from '../tidbcluster/pod-rules';

type Obj = Record<string, unknown>;

/** One thing the API server would refuse in a rendered object. */
export interface Refusal {
  readonly kind: string;
  readonly name: string;
  /** The field refused. @default none: the object as a whole (its size) */
  readonly field?: string;
  readonly problem: string;
  /** The path of the construct that made the object (`node.path`). @default not known */
  readonly construct?: string;
}

/** `<Kind> <name>: <field>: <why>`. */
export const refusalText = (r: Refusal): string => `${r.kind} ${r.name}: ${r.field !== undefined ? `${r.field}: ` : ''}${r.problem}`;

/** Rendered objects the API server would refuse; `problems` has one line each. */
export class ApiRefusalError extends Error {
  /** One line per refusal, `<Kind> <name>: <field>: <why>`. */
  readonly problems: readonly string[];

  constructor(readonly refusals: readonly Refusal[]) {
    const problems = refusals.map(refusalText);
    super(`the API server would refuse what this cluster renders:\n${problems.join('\n')}`);
    this.name = 'ApiRefusalError';
    this.problems = problems;
  }
}

/** What the API server would refuse in `objects`; empty when it would take every one. */
export function apiRefusals(objects: readonly Obj[], kubeMinor: number): Refusal[] {
  const out: Refusal[] = [];
  for (const o of objects) {
    const kind = String(o.kind);
    const name = String(asObj(o.metadata).name);
    const findings = objectFindings(o, kubeMinor);
    for (const [field, problem] of findings) out.push({ kind, name, field, problem });
    // The size only where nothing more specific (annotations, a ConfigMap's data) said it already.
    const size = findings.length === 0 ? objectSizeProblem(o) : undefined;
    if (size) out.push({ kind, name, problem: size });
  }
  return out;
}

const WORKLOADS = new Set(['StatefulSet', 'Deployment', 'DaemonSet', 'ReplicaSet', 'Job']);

/** Where an object of a workload kind keeps its Pod template (`spec.template`; a CronJob's is deeper), or undefined. */
export function podTemplatePath(kind: unknown): string | undefined {
  if (kind === 'CronJob') return 'spec.jobTemplate.spec.template';
  return typeof kind === 'string' && WORKLOADS.has(kind) ? 'spec.template' : undefined;
}

/**
 * The API server's rules on one object, as `[path in the object, why]` pairs: its name, namespace,
 * labels and annotations, a ConfigMap's keys and size, a Service, a workload's selector and Pod template.
 */
export function objectFindings(o: Obj, kubeMinor: number): [field: string, problem: string][] {
  const out: [string, string][] = [];
  const add = (field: string, problem: string | undefined) => {
    if (problem) out.push([field, problem]);
  };
  const meta = asObj(o.metadata);
  add('metadata.name', objectNameProblem(String(o.kind), meta.name));
  if (meta.namespace !== undefined) add('metadata.namespace', dnsLabelProblem(meta.namespace, 'namespace'));
  objectMeta(meta, 'metadata', add);
  const spec = asObj(o.spec);
  switch (o.kind) {
    case 'ConfigMap': {
      const data = asObj(o.data);
      for (const k of Object.keys(data)) add(joinKey('data', k), configMapKeyProblem(k));
      for (const k of Object.keys(asObj(o.binaryData)))
        add(joinKey('binaryData', k), configMapKeyProblem(k) ?? (k in data ? `key ${k} is in data too; give each key once` : undefined));
      add('data', configMapSizeProblem(data));
      break;
    }
    case 'Service':
      serviceSpec(spec, add);
      break;
    case 'CronJob': {
      const job = asObj(asObj(spec.jobTemplate).spec);
      podTemplate(asObj(job.template), 'spec.jobTemplate.spec.template', kubeMinor, add);
      break;
    }
    case 'DaemonSet':
    case 'ReplicaSet':
    case 'Job':
      labels(asObj(asObj(spec.selector).matchLabels), 'spec.selector.matchLabels', add);
      podTemplate(asObj(spec.template), 'spec.template', kubeMinor, add);
      break;
    case 'StatefulSet':
    case 'Deployment':
      labels(asObj(asObj(spec.selector).matchLabels), 'spec.selector.matchLabels', add);
      podTemplate(
        asObj(spec.template),
        'spec.template',
        kubeMinor,
        add,
        asList(spec.volumeClaimTemplates).map((t) => String(asObj(asObj(t).metadata).name)),
      );
      asList(spec.volumeClaimTemplates).forEach((t, i) => {
        objectMeta(asObj(asObj(t).metadata), `spec.volumeClaimTemplates[${i}].metadata`, add);
        const claim = asObj(asObj(t).spec);
        add(
          `spec.volumeClaimTemplates[${i}].spec.resources.requests.storage`,
          claimSizeProblem(asObj(asObj(claim.resources).requests).storage),
        );
        add(`spec.volumeClaimTemplates[${i}].spec.storageClassName`, classNameProblem(claim.storageClassName, 'StorageClass'));
      });
      break;
    default:
  }
  return out;
}

type Add = (field: string, problem: string | undefined) => void;

function objectMeta(meta: Obj, path: string, add: Add): void {
  labels(asObj(meta.labels), `${path}.labels`, add);
  for (const [k, problem] of annotationProblems(asObj(meta.annotations)))
    add(k === undefined ? `${path}.annotations` : joinKey(`${path}.annotations`, k), problem);
}

function labels(map: Obj, path: string, add: Add): void {
  for (const [k, problem] of labelProblems(map)) add(joinKey(path, k), problem);
}

function podTemplate(template: Obj, path: string, kubeMinor: number, add: Add, claims: readonly string[] = []): void {
  objectMeta(asObj(template.metadata), `${path}.metadata`, add);
  const spec = asObj(template.spec);
  labels(asObj(spec.nodeSelector), `${path}.spec.nodeSelector`, add);
  // A Pod on the node's network namespace cannot set that namespace's sysctls (ValidateHostSysctl).
  if (spec.hostNetwork === true) {
    asList(asObj(spec.securityContext).sysctls).forEach((s, i) => {
      const name = String(asObj(s).name ?? '');
      if (/^net[./]/.test(name))
        add(
          `${path}.spec.securityContext.sysctls[${i}].name`,
          `${name} cannot be set with hostNetwork: the Pod shares the node's network namespace`,
        );
    });
  }
  // Names are unique across init and regular containers, and volumes by name (validateContainers,
  // validateVolumes): what the input adds never merges into what is rendered.
  const containerNames = new Set<string>();
  const volumes = new Set<string>(claims);
  asList(spec.volumes).forEach((v, i) => {
    const volume = asObj(v);
    const at = `${path}.spec.volumes[${i}]`;
    add(`${at}.name`, dnsLabelProblem(volume.name, 'volume name'));
    if (volumes.has(String(volume.name)))
      add(`${at}.name`, `two volumes are named ${String(volume.name)}; give the additional one another name`);
    volumes.add(String(volume.name));
    if (Object.keys(volume).filter((k) => k !== 'name').length !== 1)
      add(at, `volume ${String(volume.name)} needs exactly one source (emptyDir, configMap, secret, persistentVolumeClaim, ...)`);
  });
  for (const list of ['initContainers', 'containers']) {
    asList(spec[list]).forEach((c, i) => {
      const at = `${path}.spec.${list}[${i}]`;
      const ctr = asObj(c);
      if (containerNames.has(String(ctr.name)))
        add(`${at}.name`, `two containers are named ${String(ctr.name)} (init containers and containers share one set of names)`);
      containerNames.add(String(ctr.name));
      container(ctr, at, kubeMinor, add);
      mounts(ctr, at, volumes, add);
      if (spec.hostNetwork === true) {
        asList(ctr.ports).forEach((p, j) => {
          const port = asObj(p);
          if (port.hostPort !== undefined && port.hostPort !== 0 && port.hostPort !== port.containerPort)
            add(
              `${at}.ports[${j}].hostPort`,
              `with hostNetwork the host port is the container port: ${String(port.hostPort)} is not ${String(port.containerPort)}`,
            );
        });
      }
    });
  }
}

/** Each mount names a volume of the Pod, and no two mounts of a container share a path (validateVolumeMounts). */
function mounts(c: Obj, path: string, volumes: ReadonlySet<string>, add: Add): void {
  const paths = new Set<string>();
  asList(c.volumeMounts).forEach((m, i) => {
    const mount = asObj(m);
    const at = `${path}.volumeMounts[${i}]`;
    if (!volumes.has(String(mount.name))) add(`${at}.name`, `no volume of the Pod is named ${String(mount.name)}`);
    const mountPath = String(mount.mountPath ?? '');
    if (mountPath === '') add(`${at}.mountPath`, 'a mount needs a path');
    if (paths.has(mountPath)) add(`${at}.mountPath`, `two mounts of container ${String(c.name)} are at ${mountPath}`);
    paths.add(mountPath);
  });
}

function container(c: Obj, path: string, kubeMinor: number, add: Add): void {
  add(`${path}.name`, dnsLabelProblem(c.name, 'container name'));
  // Required when the Pod is created, though a StatefulSet's template may omit it (validateContainers).
  add(`${path}.image`, c.image === undefined || c.image === '' ? `container ${String(c.name)} needs an image` : imageProblem(c.image));
  asList(c.env).forEach((e, i) => add(`${path}.env[${i}].name`, envNameProblem(asObj(e).name, kubeMinor)));
  const portNames = new Set<string>();
  asList(c.ports).forEach((p, i) => {
    const port = asObj(p);
    if (typeof port.name === 'string' && port.name !== '') {
      if (portNames.has(port.name)) add(`${path}.ports[${i}].name`, `two ports of container ${String(c.name)} are named ${port.name}`);
      portNames.add(port.name);
    }
    add(`${path}.ports[${i}].containerPort`, portProblem(port.containerPort));
    if (port.hostPort !== undefined) add(`${path}.ports[${i}].hostPort`, portProblem(port.hostPort, true));
    if (port.name !== undefined) add(`${path}.ports[${i}].name`, portNameProblem(port.name));
  });
}

function serviceSpec(spec: Obj, add: Add): void {
  if (spec.type !== undefined) add('spec.type', serviceTypeProblem(spec.type));
  labels(asObj(spec.selector), 'spec.selector', add);
  const type = spec.type ?? 'ClusterIP';
  const external = type === 'NodePort' || type === 'LoadBalancer';
  const ports = asList(spec.ports).map(asObj);
  const names = new Set<string>();
  const numbers = new Set<string>();
  const nodePorts = new Set<string>();
  ports.forEach((port, i) => {
    add(`spec.ports[${i}].port`, portProblem(port.port));
    if (port.nodePort !== undefined) add(`spec.ports[${i}].nodePort`, portProblem(port.nodePort, true));
    if (port.targetPort !== undefined) add(`spec.ports[${i}].targetPort`, targetPortProblem(port.targetPort));
    if (port.name !== undefined) add(`spec.ports[${i}].name`, portNameProblem(port.name));
    // ValidateService: names are required once there are two ports, and unique; so is each port with its protocol.
    const name = String(port.name ?? '');
    if (ports.length > 1 && name === '') add(`spec.ports[${i}].name`, 'a Service with more than one port needs a name for each');
    if (name !== '' && names.has(name)) add(`spec.ports[${i}].name`, `two ports of the Service are named ${name}`);
    names.add(name);
    const number = `${String(port.port)}/${String(port.protocol ?? 'TCP')}`;
    if (numbers.has(number)) add(`spec.ports[${i}].port`, `two ports of the Service are ${number}`);
    numbers.add(number);
    if (port.nodePort !== undefined && port.nodePort !== 0) {
      if (!external) add(`spec.ports[${i}].nodePort`, `a node port needs type NodePort or LoadBalancer, not ${String(type)}`);
      const nodePort = `${String(port.nodePort)}/${String(port.protocol ?? 'TCP')}`;
      if (nodePorts.has(nodePort)) add(`spec.ports[${i}].nodePort`, `two ports of the Service ask for node port ${nodePort}`);
      nodePorts.add(nodePort);
    }
  });
  if (spec.externalTrafficPolicy !== undefined && !external)
    add(
      'spec.externalTrafficPolicy',
      `only a Service of type NodePort or LoadBalancer has an external traffic policy, not ${String(type)}`,
    );
  add('spec.clusterIP', clusterIPProblem(spec.clusterIP, String(type)));
  if (type === 'ExternalName') {
    const name = typeof spec.externalName === 'string' ? spec.externalName.replace(/\.$/, '') : '';
    if (name === '') add('spec.externalName', 'a Service of type ExternalName needs externalName');
    else if (name.length > 253 || !DNS1123_SUBDOMAIN.test(name))
      add('spec.externalName', `${JSON.stringify(spec.externalName)} is not a DNS name`);
  }
  asList(spec.loadBalancerSourceRanges).forEach((r, i) => add(`spec.loadBalancerSourceRanges[${i}]`, cidrProblem(r)));
}

/** Why `ip` cannot be the Service's clusterIP (an IP, "None" for headless, or empty), or undefined. */
function clusterIPProblem(ip: unknown, type: string): string | undefined {
  if (ip === undefined || ip === '') return undefined;
  if (ip === 'None') return type === 'ClusterIP' ? undefined : `clusterIP None (headless) is for type ClusterIP, not ${type}`;
  if (type === 'ExternalName') return 'a Service of type ExternalName has no clusterIP';
  return typeof ip === 'string' && isIP(ip) !== 0
    ? undefined
    : `${JSON.stringify(ip)} is not an IP address (or None for a headless Service)`;
}

function cidrProblem(r: unknown): string | undefined {
  const [ip, bits, more] = String(r).trim().split('/');
  const family = isIP(ip ?? '');
  const max = family === 6 ? 128 : 32;
  if (family !== 0 && more === undefined && /^\d+$/.test(bits ?? '') && Number(bits) <= max) return undefined;
  return `${JSON.stringify(r)} is not a CIDR (as 10.0.0.0/8)`;
}

function asObj(v: unknown): Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {};
}

function asList(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}
