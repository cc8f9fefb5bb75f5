/**
 * The tidb-operator v1 fixture (test/kube/operator-basic.ts): what the operator creates for the
 * `basic` example, checked against facts taken from the operator's source (pingcap/tidb-operator,
 * branch release-1.x) and against the Kubernetes schema. No API server here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as yaml from 'js-yaml';
import {
  CONFIG_MAP_DATA,
  configMapDigestSuffix,
  goJson,
  operatorConfigMapName,
  operatorObjects,
  operatorTidbCluster,
  tidbClusterCrd,
  type Obj,
} from '../kube/operator-basic';
import { validateK8sObject } from '../support/k8s-schema';
import { operatorExample } from '../../scripts/lib/upstream';
import { TEST_DIR } from '../support/paths';

const NS = 'tidb-basic';
const UID = '6f1b3c9e-2a4d-4c1e-9b7a-0d5e8f2a1c33';
const objects = operatorObjects(NS, UID);
const find = (kind: string, name: string): Obj => {
  const obj = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!obj) throw new Error(`no ${kind} ${name}`);
  return obj;
};

/** label.New().Instance("basic").<Component>() (pkg/apis/label/label.go). */
const labelsOf = (component: string) => ({
  'app.kubernetes.io/component': component,
  'app.kubernetes.io/instance': 'basic',
  'app.kubernetes.io/managed-by': 'tidb-operator',
  'app.kubernetes.io/name': 'tidb-cluster',
});

describe('tidb-operator v1 fixture for examples/basic', () => {
  it('lists every object in the order the operator creates them', () => {
    // tidb_discovery_manager.go (Role, SA, RoleBinding, Deployment, Service), then pd/tikv/tidb
    // member managers: Services first, ConfigMap and StatefulSet in sync*StatefulSetForTidbCluster.
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Role/basic-discovery',
      'ServiceAccount/basic-discovery',
      'RoleBinding/basic-discovery',
      'Deployment/basic-discovery',
      'Service/basic-discovery',
      'Service/basic-pd',
      'Service/basic-pd-peer',
      'ConfigMap/basic-pd-a0767f1',
      'StatefulSet/basic-pd',
      'Service/basic-tikv-peer',
      'ConfigMap/basic-tikv-ee17551',
      'StatefulSet/basic-tikv',
      'Service/basic-tidb-peer',
      'Service/basic-tidb',
      'ConfigMap/basic-tidb-db6fbfc',
      'StatefulSet/basic-tidb',
    ]);
    for (const o of objects) {
      expect(o.metadata.namespace).toBe(NS);
      expect(o.status).toBeUndefined();
    }
  });

  it('validates against the Kubernetes 1.32 schema', () => {
    for (const obj of [tidbClusterCrd(), ...objects]) {
      expect({ kind: obj.kind, name: obj.metadata.name, errors: validateK8sObject(obj, '1.32') }).toEqual({
        kind: obj.kind,
        name: obj.metadata.name,
        errors: [],
      });
    }
  });

  it('gives every object exactly the owner reference of controller.GetOwnerRef', () => {
    // pkg/controller/controller_utils.go GetOwnerRef
    for (const o of objects) {
      expect(o.metadata.ownerReferences).toEqual([
        { apiVersion: 'pingcap.com/v1alpha1', kind: 'TidbCluster', name: 'basic', uid: UID, controller: true, blockOwnerDeletion: true },
      ]);
    }
  });

  it('labels every object with the four operator labels (+ used-by on component Services)', () => {
    for (const o of objects) {
      const component = o.metadata.labels['app.kubernetes.io/component'];
      const usedBy = o.metadata.labels['app.kubernetes.io/used-by'];
      expect(o.metadata.labels).toEqual({ ...labelsOf(component), ...(usedBy ? { 'app.kubernetes.io/used-by': usedBy } : {}) });
    }
    // getNewPDServiceForTidbCluster / getNewPDHeadlessServiceForTidbCluster (pd_member_manager.go),
    // getNewServiceForTidbCluster (tikv_member_manager.go), getNewTiDB*Service* (tidb_member_manager.go);
    // the discovery Service has none (tidb_discovery_manager.go getDiscoveryMeta).
    const usedBy = Object.fromEntries(
      objects.filter((o) => o.kind === 'Service').map((o) => [o.metadata.name, o.metadata.labels['app.kubernetes.io/used-by']]),
    );
    expect(usedBy).toEqual({
      'basic-discovery': undefined,
      'basic-pd': 'end-user',
      'basic-pd-peer': 'peer',
      'basic-tikv-peer': 'peer',
      'basic-tidb-peer': 'peer',
      'basic-tidb': 'end-user',
    });
  });

  describe('StatefulSets', () => {
    // pd_member_manager.go getNewPDSetForTidbCluster, tikv_member_manager.go getNewTiKVSetForTidbCluster,
    // tidb_member_manager.go getNewTiDBSetForTidbCluster; util.VolumeClaimTemplate (pkg/util/util.go).
    const cases: [string, string, string, Obj[] | undefined][] = [
      [
        'basic-pd',
        'pd',
        'basic-pd-peer',
        [
          {
            metadata: { name: 'pd', creationTimestamp: null },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
            status: {},
          },
        ],
      ],
      [
        'basic-tikv',
        'tikv',
        'basic-tikv-peer',
        [
          {
            metadata: { name: 'tikv', creationTimestamp: null },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
            status: {},
          },
        ],
      ],
      ['basic-tidb', 'tidb', 'basic-tidb-peer', undefined],
    ];
    it.each(cases)('%s: selector, serviceName, claim templates, replicas and partition', (name, component, serviceName, claims) => {
      const sts = find('StatefulSet', name);
      expect(sts.spec.selector).toEqual({ matchLabels: labelsOf(component) });
      expect(sts.spec.template.metadata.labels).toEqual(labelsOf(component));
      expect(sts.spec.serviceName).toBe(serviceName);
      expect(sts.spec.volumeClaimTemplates).toEqual(claims);
      expect(sts.spec.replicas).toBe(1);
      // partition = desired replicas + delete slots (0): the operator's idle state.
      expect(sts.spec.updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { partition: 1 } });
      expect(sts.spec.podManagementPolicy).toBe('Parallel');
      expect(Object.keys(sts.metadata.annotations)).toEqual(['pingcap.com/last-applied-configuration']);
    });

    it('mount the digest-named ConfigMaps and the data volumes where the operator does', () => {
      const pd = find('StatefulSet', 'basic-pd').spec.template.spec;
      expect(pd.volumes.map((v: Obj) => v.configMap?.name ?? v.name)).toEqual(['annotations', 'basic-pd-a0767f1', 'basic-pd-a0767f1']);
      expect(pd.containers[0].volumeMounts.map((m: Obj) => `${m.name}:${m.mountPath}`)).toEqual([
        'annotations:/etc/podinfo',
        'config:/etc/pd',
        'startup-script:/usr/local/bin',
        'pd:/var/lib/pd',
      ]);
      const tikv = find('StatefulSet', 'basic-tikv').spec.template.spec;
      expect(tikv.volumes[1].configMap).toEqual({ name: 'basic-tikv-ee17551', items: [{ key: 'config-file', path: 'tikv.toml' }] });
      expect(tikv.containers[0].volumeMounts.map((m: Obj) => `${m.name}:${m.mountPath}`)).toEqual([
        'annotations:/etc/podinfo',
        'tikv:/var/lib/tikv',
        'config:/etc/tikv',
        'startup-script:/usr/local/bin',
      ]);
      expect(tikv.containers[0].securityContext).toEqual({ privileged: false });
      const tidb = find('StatefulSet', 'basic-tidb').spec.template.spec;
      expect(tidb.containers.map((c: Obj) => c.name)).toEqual(['slowlog', 'tidb']);
      expect(tidb.containers[0].image).toBe('alpine:3.16.0');
      expect(tidb.volumes[2].configMap.items).toEqual([{ key: 'startup-script', path: 'tidb_start_script.sh' }]);
    });
  });

  describe('ConfigMap digest suffix (pkg/manager/utils/configmap.go)', () => {
    it("hashes Go's JSON of the data, HTML-escaped, like the hand-derived vector", () => {
      // Serialised by hand the way Go's json.Marshal writes map[string]string (sorted keys,
      // <>& escaped), hashed with coreutils sha256sum: 4f7dce1d48d6dbca7de28b22e6abc7bed366ad949f3109d3fa76aa7d1f922a46.
      const data = { 'startup-script': 'echo "x" >&2 && true\n', 'config-file': 'lease = "45s"\n' };
      expect(goJson({ 'config-file': data['config-file'], 'startup-script': data['startup-script'] })).toBe(
        '{"config-file":"lease = \\"45s\\"\\n","startup-script":"echo \\"x\\" \\u003e\\u00262 \\u0026\\u0026 true\\n"}',
      );
      expect(configMapDigestSuffix(data)).toBe('4f7dce1');
    });

    it('names the three ConfigMaps with the digest of their data', () => {
      // Expected suffixes computed independently (Python json.dumps + hashlib over the same data).
      expect(operatorConfigMapName('pd')).toBe('basic-pd-a0767f1');
      expect(operatorConfigMapName('tikv')).toBe('basic-tikv-ee17551');
      expect(operatorConfigMapName('tidb')).toBe('basic-tidb-db6fbfc');
      for (const c of ['pd', 'tikv', 'tidb'] as const) {
        const cm = find('ConfigMap', operatorConfigMapName(c));
        expect(cm.metadata.name).toBe(`basic-${c}-${configMapDigestSuffix(cm.data)}`);
        expect(Object.keys(cm.data).sort()).toEqual(['config-file', 'startup-script']);
        expect(cm.data).toEqual(CONFIG_MAP_DATA[c]);
        expect(cm.metadata.labels).toEqual(labelsOf(c));
      }
      // The scripts contain `>&2` / `2>/dev/null`, so the HTML escaping changes the digest.
      expect(CONFIG_MAP_DATA.pd['startup-script']).toContain('>&2');
    });

    it('carries the TOML the operator writes', () => {
      expect(CONFIG_MAP_DATA.pd['config-file']).toBe('');
      expect(CONFIG_MAP_DATA.tikv['config-file']).toBe(
        '[raftdb]\n  max-open-files = 256\n\n[rocksdb]\n  max-open-files = 256\n\n[storage]\n  reserve-space = "0MB"\n',
      );
      expect(CONFIG_MAP_DATA.tidb['config-file']).toBe('[log]\n  [log.file]\n    max-backups = 3\n');
    });
  });

  it("keeps the last-applied annotations equal to Go's JSON of the spec", () => {
    const isSortedStringMap = (v: unknown): boolean => {
      if (!v || typeof v !== 'object' || Array.isArray(v)) return true;
      const values = Object.values(v as Obj);
      if (values.length === 0 || !values.every((x) => typeof x === 'string')) return true;
      const keys = Object.keys(v as Obj);
      return keys.join('\n') === [...keys].sort().join('\n');
    };
    const walk = (v: unknown, at: string): void => {
      // Go marshals every map[string]string with sorted keys.
      if (['labels', 'annotations', 'matchLabels', 'selector', 'requests'].some((k) => at.endsWith(`.${k}`))) {
        expect({ at, sorted: isSortedStringMap(v) }).toEqual({ at, sorted: true });
      }
      if (v && typeof v === 'object') for (const [k, x] of Object.entries(v as Obj)) walk(x, `${at}.${k}`);
    };
    for (const o of objects) {
      const anns = o.metadata.annotations ?? {};
      const spec = o.kind === 'Deployment' ? o.spec.template.spec : o.spec;
      const key = o.kind === 'Deployment' ? 'pingcap.com/last-applied-podtemplate' : 'pingcap.com/last-applied-configuration';
      if (['Service', 'StatefulSet', 'Deployment'].includes(o.kind)) {
        expect(anns[key]).toBe(goJson(spec));
        expect(JSON.parse(anns[key])).toEqual(spec);
        walk(JSON.parse(anns[key]), 'spec');
      } else {
        expect(anns).toEqual({});
      }
    }
    // Spot check of Go's field order (k8s.io/api ServicePort: name, protocol, port, targetPort).
    expect(find('Service', 'basic-pd').metadata.annotations['pingcap.com/last-applied-configuration']).toBe(
      '{"ports":[{"name":"client","protocol":"TCP","port":2379,"targetPort":2379}],"selector":{"app.kubernetes.io/component":"pd","app.kubernetes.io/instance":"basic","app.kubernetes.io/managed-by":"tidb-operator","app.kubernetes.io/name":"tidb-cluster"},"type":"ClusterIP"}',
    );
  });

  it('builds the discovery objects of tidb_discovery_manager.go', () => {
    expect(find('Role', 'basic-discovery').rules).toEqual([
      { apiGroups: ['pingcap.com'], resources: ['tidbclusters'], resourceNames: ['basic'], verbs: ['get'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] },
    ]);
    const deploy = find('Deployment', 'basic-discovery');
    expect(deploy.spec.strategy).toEqual({ type: 'Recreate' });
    expect(deploy.spec.template.spec.serviceAccountName).toBe('basic-discovery');
    expect(deploy.spec.template.spec.containers[0].image).toBe('pingcap/tidb-operator:v1.6.1');
    expect(find('Service', 'basic-discovery').spec.selector).toEqual(labelsOf('discovery'));
  });

  it('keeps the TidbCluster equal to the example file', () => {
    const file = yaml.load(readFileSync(operatorExample('basic'), 'utf8')) as Obj;
    expect(operatorTidbCluster(NS)).toEqual({ ...file, metadata: { ...file.metadata, namespace: NS } });
    const crd = tidbClusterCrd();
    expect(crd.spec.names).toMatchObject({ plural: 'tidbclusters', shortNames: ['tc'], kind: 'TidbCluster' });
    expect(crd.spec.versions[0].subresources).toEqual({ status: {} });
  });

  it("is built from the operator's facts, not from this project's renderer", () => {
    const source = readFileSync(join(TEST_DIR, 'kube/operator-basic.ts'), 'utf8');
    expect(source).not.toMatch(/from\s+['"][^'"]*src\//);
    expect(source).not.toMatch(/require\(/);
  });
});
