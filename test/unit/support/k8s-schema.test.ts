/**
 * The tests' strict validation against Kubernetes' definitions (test/support/k8s-schema.ts), and the
 * definitions themselves: one set for every supported minor, each read where it lives
 * (scripts/lib/upstream.js), and what the repository derives from them (the compact definitions the CLI
 * ships, the types in imports/) is what its script makes of them now.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConfigMap, Service, StatefulSet } from '../../../imports/k8s';
import { kubeDefinitionsFile, kubeMinors, kubeRelease, REPO_ROOT } from '../../../scripts/lib/upstream';
import { assertValidK8sObjects, fullSchema, K8sSchemaError, SCHEMA_MINORS, validateK8sObject } from '../../support/k8s-schema';

// Fixtures are typed with the generated imports so that these tests also prove
// the generated interfaces accept realistic manifests.
function service(): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'basic-tidb', namespace: 'tidb', labels: { 'app.kubernetes.io/name': 'tidb-cluster' } },
    spec: {
      type: 'ClusterIP',
      selector: { 'app.kubernetes.io/component': 'tidb' },
      ports: [
        { name: 'mysql-client', port: 4000, protocol: 'TCP', targetPort: 4000 },
        { name: 'status', port: 10080, targetPort: 'status' },
      ],
    },
  };
}

function configMap(): ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'basic-tidb-config' },
    data: { 'config-file': '[log]\nlevel = "info"\n', 'startup-script': '#!/bin/sh\n' },
  };
}

function statefulSet(): StatefulSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'basic-tikv', labels: { 'app.kubernetes.io/component': 'tikv' } },
    spec: {
      replicas: 3,
      serviceName: 'basic-tikv-peer',
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: { 'app.kubernetes.io/component': 'tikv' } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 3 } },
      template: {
        metadata: { labels: { 'app.kubernetes.io/component': 'tikv' }, annotations: { 'prometheus.io/port': '20180' } },
        spec: {
          containers: [
            {
              name: 'tikv',
              image: 'pingcap/tikv:v7.1.0',
              imagePullPolicy: 'IfNotPresent',
              command: ['/bin/sh', '/usr/local/bin/tikv_start_script.sh'],
              ports: [
                { name: 'server', containerPort: 20160, protocol: 'TCP' },
                { name: 'status', containerPort: 20180 },
              ],
              env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
              resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '2', memory: '4Gi' } },
              readinessProbe: { tcpSocket: { port: 20160 }, initialDelaySeconds: 10 },
              volumeMounts: [{ name: 'tikv', mountPath: '/var/lib/tikv' }],
            },
          ],
          tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'tikv', effect: 'NoSchedule' }],
          volumes: [{ name: 'config', configMap: { name: 'basic-tikv-config', items: [{ key: 'config-file', path: 'tikv.toml' }] } }],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: 'tikv' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '100Gi' } } },
        },
      ],
    },
  };
}

/** Deep copy of `obj` with the value at a dotted path (numeric segments index arrays) replaced or deleted. */
function patched(obj: object, dottedPath: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(obj) as Record<string, unknown>;
  const keys = dottedPath.split('.');
  const last = keys.pop() as string;
  let node = copy as Record<string, unknown>;
  for (const key of keys) node = node[key] as Record<string, unknown>;
  if (value === undefined) delete node[last];
  else node[last] = value;
  return copy;
}

const CONTAINER = 'spec.template.spec.containers.0';
const paths = (errors: K8sSchemaError[]): string[] => errors.map((e) => e.path);

describe('validateK8sObject', () => {
  it('accepts a valid Service, StatefulSet and ConfigMap', () => {
    expect(validateK8sObject(service())).toEqual([]);
    expect(validateK8sObject(statefulSet())).toEqual([]);
    expect(validateK8sObject(configMap())).toEqual([]);
  });

  describe('unknown fields fail, like kubectl --validate=strict', () => {
    it('reports spec.replica on a StatefulSet with a suggestion', () => {
      const errors = validateK8sObject(patched(statefulSet(), 'spec.replica', 3));
      expect(errors).toEqual([{ path: 'spec.replica', message: 'unknown field "replica" (did you mean "replicas"?)' }]);
    });

    it('reports a typo inside a container with its full path', () => {
      const errors = validateK8sObject(patched(statefulSet(), `${CONTAINER}.imagePulPolicy`, 'Always'));
      expect(paths(errors)).toEqual(['spec.template.spec.containers[0].imagePulPolicy']);
    });

    it('reports unknown fields inside nested lists', () => {
      const errors = validateK8sObject(patched(statefulSet(), `${CONTAINER}.ports.1.hostPorts`, 1));
      expect(paths(errors)).toEqual(['spec.template.spec.containers[0].ports[1].hostPorts']);
    });
  });

  describe('type checks', () => {
    it('rejects a string where an integer is expected', () => {
      const errors = validateK8sObject(patched(statefulSet(), 'spec.replicas', '3'));
      expect(errors).toEqual([{ path: 'spec.replicas', message: 'expected integer, got string "3"' }]);
    });

    it('rejects a fractional number where an integer is expected', () => {
      const errors = validateK8sObject(patched(statefulSet(), `${CONTAINER}.ports.1.containerPort`, 20180.5));
      expect(paths(errors)).toEqual(['spec.template.spec.containers[0].ports[1].containerPort']);
    });

    it('rejects an object where an array is expected and null values', () => {
      const notArray = validateK8sObject(patched(statefulSet(), `${CONTAINER}.command`, 'tikv-server'));
      expect(notArray).toEqual([{ path: 'spec.template.spec.containers[0].command', message: 'expected array, got string "tikv-server"' }]);
      const nulled = validateK8sObject(patched(statefulSet(), 'metadata.namespace', null));
      expect(nulled).toEqual([{ path: 'metadata.namespace', message: 'null is not allowed here' }]);
    });

    it('rejects a non-string value in ConfigMap data', () => {
      const errors = validateK8sObject(patched(configMap(), 'data', { key: 1 }));
      expect(paths(errors)).toEqual(['data.key']);
    });
  });

  it('reports a missing required field at the field path', () => {
    const errors = validateK8sObject(patched(statefulSet(), `${CONTAINER}.name`, undefined));
    expect(errors).toEqual([{ path: 'spec.template.spec.containers[0].name', message: 'missing required field' }]);
  });

  describe('int-or-string', () => {
    it.each([4000, 'mysql-client'])('accepts targetPort %p', (targetPort) => {
      expect(validateK8sObject(patched(service(), 'spec.ports.0.targetPort', targetPort))).toEqual([]);
    });

    it.each([true, 4000.5, { port: 4000 }])('rejects targetPort %p', (targetPort) => {
      expect(paths(validateK8sObject(patched(service(), 'spec.ports.0.targetPort', targetPort)))).toEqual(['spec.ports[0].targetPort']);
    });
  });

  describe('quantities', () => {
    it.each(['500m', '1Gi', '1.5', '.5', '1e3', '+2Ki', '100M', 2, 0.5])('accepts %p', (cpu) => {
      expect(validateK8sObject(patched(statefulSet(), `${CONTAINER}.resources.limits.cpu`, cpu))).toEqual([]);
    });

    it.each(['ten', '1GB', '1 Gi', '', 'Gi', true])('rejects %p', (cpu) => {
      const errors = validateK8sObject(patched(statefulSet(), `${CONTAINER}.resources.limits.cpu`, cpu));
      expect(paths(errors)).toEqual(['spec.template.spec.containers[0].resources.limits.cpu']);
    });
  });

  describe('apiVersion/kind lookup', () => {
    it('fails on an unknown kind', () => {
      const errors = validateK8sObject(patched(statefulSet(), 'kind', 'StatefullSet'));
      expect(errors).toEqual([{ path: 'kind', message: 'unknown apiVersion/kind apps/v1 StatefullSet' }]);
    });

    it('fails when the kind exists but not in that group (StatefulSet is not core v1)', () => {
      expect(paths(validateK8sObject(patched(statefulSet(), 'apiVersion', 'v1')))).toEqual(['kind']);
    });

    it('fails without apiVersion or on a non-object', () => {
      expect(paths(validateK8sObject(patched(service(), 'apiVersion', undefined)))).toEqual(['apiVersion']);
      expect(validateK8sObject('kind: Service')).toHaveLength(1);
    });
  });

  describe('maps declared with additionalProperties', () => {
    it('accept arbitrary keys in metadata.labels', () => {
      const labels = { 'app.kubernetes.io/name': 'tidb', 'pingcap.com/cluster': 'basic', plain: 'yes', '': 'odd' };
      expect(validateK8sObject(patched(configMap(), 'metadata.labels', labels))).toEqual([]);
    });

    it('still validate the values, quoting non-identifier keys in the path', () => {
      const errors = validateK8sObject(patched(configMap(), 'metadata.labels', { 'app.kubernetes.io/name': 42 }));
      expect(errors).toEqual([{ path: 'metadata.labels["app.kubernetes.io/name"]', message: 'expected string, got number 42' }]);
    });
  });
});

describe('assertValidK8sObjects', () => {
  it('does not throw for valid objects', () => {
    expect(() => assertValidK8sObjects([service(), statefulSet(), configMap()])).not.toThrow();
  });

  it('lists every problem with kind/name and path', () => {
    const bad = [service(), patched(statefulSet(), 'spec.replica', 3), patched(configMap(), 'data', 'x')];
    expect(() => assertValidK8sObjects(bad)).toThrow(
      [
        '2 Kubernetes 1.31 schema violation(s):',
        '  #1 StatefulSet basic-tikv: spec.replica: unknown field "replica" (did you mean "replicas"?)',
        '  #2 ConfigMap basic-tidb-config: data: expected object, got string "x"',
      ].join('\n'),
    );
  });

  it('validates a few hundred objects in one call', () => {
    const objects = Array.from({ length: 100 }, () => [service(), statefulSet(), configMap()]).flat();
    expect(() => assertValidK8sObjects(objects)).not.toThrow();
  });
});

describe('the Kubernetes definitions', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tidb-gitops-k8s-schema-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** What `script` writes to the file it is given, and the committed `file` it stands for. */
  function regenerated(script: string, file: string): { now: string; committed: string } {
    const out = join(dir, file.replace(/\//g, '_'));
    execFileSync(process.execPath, [join(REPO_ROOT, 'scripts', script), out], { stdio: ['ignore', 'ignore', 'pipe'] });
    return { now: readFileSync(out, 'utf8'), committed: readFileSync(join(REPO_ROOT, file), 'utf8') };
  }

  it('exist for exactly the minors the release renders for', () => {
    expect(kubeMinors()).toEqual(SCHEMA_MINORS);
  });

  it('of the newest minor are the OpenAPI document of the release the real-API suites run (test/kube/harness/go.mod)', () => {
    const release = kubeRelease();
    expect(release.minor).toBe(SCHEMA_MINORS[SCHEMA_MINORS.length - 1]);
    expect(kubeDefinitionsFile(release.minor).endsWith(join(`k8s.io/kubernetes@${release.version}`, 'api/openapi-spec/swagger.json'))).toBe(
      true,
    );
  });

  it.each(SCHEMA_MINORS)("of 1.%s know what every render makes, and Prometheus Operator's kinds", (minor) => {
    for (const [apiVersion, kind] of [
      ['apps/v1', 'StatefulSet'],
      ['v1', 'Service'],
      ['v1', 'ConfigMap'],
      ['policy/v1', 'PodDisruptionBudget'],
      ['monitoring.coreos.com/v1', 'PodMonitor'],
      ['monitoring.coreos.com/v1', 'PrometheusRule'],
    ]) {
      expect(fullSchema(minor).knows(apiVersion, kind)).toBe(true);
    }
  });

  it('are, in src/base/kube-schema-data.json, what scripts/generate/kube-schemas.mjs makes of them now', () => {
    const { now, committed } = regenerated('generate/kube-schemas.mjs', 'src/base/kube-schema-data.json');
    // Not toBe: a diff of two half-megabyte lines helps no one. Run the script and review git's diff.
    expect(now === committed).toBe(true);
    expect(JSON.parse(committed).minors).toEqual(SCHEMA_MINORS);
  });

  it("are, in imports/k8s.ts, what scripts/generate/k8s-imports.mjs makes of the newest minor's now", () => {
    const { now, committed } = regenerated('generate/k8s-imports.mjs', 'imports/k8s.ts');
    expect(committed).toBe(now);
  });
});
