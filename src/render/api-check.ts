/**
 * The last look at every rendered object before it is written: the API server's own rules (the JSON
 * schema cannot see them) on names, labels, selectors, annotations and their size, ConfigMap keys and
 * size, containers (names, images, environment variable names, ports) and Services (type, ports).
 * The input is checked against the same rules where it is read, with lines; this catches what only
 * exists once values are combined, such as a cluster's and a component's annotations together.
 */
import {
  annotationProblems,
  configMapKeyProblem,
  configMapSizeProblem,
  dnsLabelProblem,
  envNameProblem,
  imageProblem,
  labelProblems,
  objectNameProblem,
  portNameProblem,
  portProblem,
  serviceTypeProblem,
  targetPortProblem,
} from '../tidbcluster/api-rules';
import { joinKey } from '../tidbcluster/crd-schema';

type Obj = Record<string, unknown>;

/** Rendered objects the API server would refuse; `problems` has one line each. */
export class ApiRefusalError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`the API server would refuse what this cluster renders:\n${problems.join('\n')}`);
    this.name = 'ApiRefusalError';
  }
}


/** One line per problem: `<Kind> <name>: <field>: <why>`. Empty when the API server would take every object. */
export function apiProblems(objects: readonly Obj[], kubeMinor: number): string[] {
  const out: string[] = [];
  for (const o of objects) {
    const meta = asObj(o.metadata);
    const who = `${String(o.kind)} ${String(meta.name)}`;
    const add = (field: string, problem: string | undefined) => {
      if (problem) out.push(`${who}: ${field}: ${problem}`);
    };
    add('metadata.name', objectNameProblem(String(o.kind), meta.name));
    if (meta.namespace !== undefined) add('metadata.namespace', dnsLabelProblem(meta.namespace, 'namespace'));
    objectMeta(meta, 'metadata', add);
    const spec = asObj(o.spec);
    switch (o.kind) {
      case 'ConfigMap': {
        const data = asObj(o.data);
        for (const k of Object.keys(data)) add(joinKey('data', k), configMapKeyProblem(k));
        add('data', configMapSizeProblem(data));
        break;
      }
      case 'Service':
        serviceSpec(spec, add);
        break;
      case 'StatefulSet':
      case 'Deployment':
        labels(asObj(asObj(spec.selector).matchLabels), 'spec.selector.matchLabels', add);
        podTemplate(asObj(spec.template), 'spec.template', kubeMinor, add);
        asList(spec.volumeClaimTemplates).forEach((t, i) => objectMeta(asObj(asObj(t).metadata), `spec.volumeClaimTemplates[${i}].metadata`, add));
        break;
      default:
    }
  }
  return out;
}

type Add = (field: string, problem: string | undefined) => void;

function objectMeta(meta: Obj, path: string, add: Add): void {
  labels(asObj(meta.labels), `${path}.labels`, add);
  for (const [k, problem] of annotationProblems(asObj(meta.annotations))) add(k === undefined ? `${path}.annotations` : joinKey(`${path}.annotations`, k), problem);
}

function labels(map: Obj, path: string, add: Add): void {
  for (const [k, problem] of labelProblems(map)) add(joinKey(path, k), problem);
}

function podTemplate(template: Obj, path: string, kubeMinor: number, add: Add): void {
  objectMeta(asObj(template.metadata), `${path}.metadata`, add);
  const spec = asObj(template.spec);
  labels(asObj(spec.nodeSelector), `${path}.spec.nodeSelector`, add);
  for (const list of ['initContainers', 'containers']) {
    asList(spec[list]).forEach((c, i) => container(asObj(c), `${path}.spec.${list}[${i}]`, kubeMinor, add));
  }
  asList(spec.volumes).forEach((v, i) => add(`${path}.spec.volumes[${i}].name`, dnsLabelProblem(asObj(v).name, 'volume name')));
}

function container(c: Obj, path: string, kubeMinor: number, add: Add): void {
  add(`${path}.name`, dnsLabelProblem(c.name, 'container name'));
  if (c.image !== undefined) add(`${path}.image`, imageProblem(c.image));
  asList(c.env).forEach((e, i) => add(`${path}.env[${i}].name`, envNameProblem(asObj(e).name, kubeMinor)));
  asList(c.ports).forEach((p, i) => {
    const port = asObj(p);
    add(`${path}.ports[${i}].containerPort`, portProblem(port.containerPort));
    if (port.hostPort !== undefined) add(`${path}.ports[${i}].hostPort`, portProblem(port.hostPort, true));
    if (port.name !== undefined) add(`${path}.ports[${i}].name`, portNameProblem(port.name));
  });
}

function serviceSpec(spec: Obj, add: Add): void {
  if (spec.type !== undefined) add('spec.type', serviceTypeProblem(spec.type));
  labels(asObj(spec.selector), 'spec.selector', add);
  asList(spec.ports).forEach((p, i) => {
    const port = asObj(p);
    add(`spec.ports[${i}].port`, portProblem(port.port));
    if (port.nodePort !== undefined) add(`spec.ports[${i}].nodePort`, portProblem(port.nodePort, true));
    if (port.targetPort !== undefined) add(`spec.ports[${i}].targetPort`, targetPortProblem(port.targetPort));
    if (port.name !== undefined) add(`spec.ports[${i}].name`, portNameProblem(port.name));
  });
}

function asObj(v: unknown): Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {};
}

function asList(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}
