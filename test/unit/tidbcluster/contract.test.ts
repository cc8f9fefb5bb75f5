/**
 * The contract between the renderer and the controller: what the render side encodes (the
 * controller's cluster JSON, each StatefulSet's settings annotation, the monitoring Job's env), the
 * controller side parses back equal; and what the controller makes of a payload it did not expect.
 */
import { parseClusterInfo } from '../../../src/controller/model/cluster';
import { settingsOf } from '../../../src/controller/model/settings';
import type { StatefulSet } from '../../../src/controller/model/objects';
import {
  CONTROLLER_ENV,
  encodeComponentSettings,
  encodeControllerClusterInfo,
  encodeMonitoringPublishInfo,
  MONITORING_ENV,
  parseComponentSettings,
  parseControllerClusterInfo,
  parseMonitoringPublishInfo,
  type ComponentSettings,
  type ControllerClusterInfo,
  type MonitoringPublishInfo,
} from '../../../src/tidbcluster/contract';
import { ANNOTATION } from '../../../src/tidbcluster/names';
import { cluster, container, find, render, type Obj } from '../../support/render';

const envValue = (c: Obj, name: string): string => c.env.find((e: Obj) => e.name === name).value;
const statefulSets = (objects: Obj[]) => objects.filter((o) => o.kind === 'StatefulSet');

/** Every field the renderer can write, each set. */
const FULL_INFO: ControllerClusterInfo = {
  name: 'demo',
  clusterDomain: 'cluster.local',
  acrossK8s: true,
  tls: true,
  discoveryMtls: true,
  pdAddresses: ['https://pd.other:2379'],
  cluster: { name: 'main', namespace: 'other', clusterDomain: 'cluster.local' },
  components: ['pd', 'tikv', 'tidb', 'ticdc'],
  readsNodes: true,
  patchesVolumes: true,
  backupSchedules: ['nightly', 'hourly'],
  backupRetention: {
    nightly: {
      maxBackups: 3,
      cleanPolicy: 'Delete',
      storageKind: 's3',
      bucket: 'b',
      prefix: 'p',
      endpoint: 'http://minio:9000',
      region: 'eu-west-1',
      provider: 'aws',
      forcePathStyle: false,
      secretName: 's3-keys',
    },
    hourly: {
      maxReservedSeconds: 86_400,
      cleanPolicy: 'OnFailure',
      storageKind: 'azblob',
      bucket: 'c',
      prefix: 'q',
      account: 'acct',
      sasToken: 'sig',
    },
  },
  operations: ['backup-once', 'restore-r'],
  logBackups: ['backup-pitr'],
  initializer: {
    name: 'init',
    digest: 'sha256:abc',
    passwordSecret: 'passwords',
    rootOnly: true,
    sql: { configMap: 'demo-tidb-initializer', key: 'init-sql' },
    permitHost: '%',
    timezone: 'UTC',
    tls: { secret: 'demo-tidb-client-secret', skipCA: true },
    existingCluster: 'skip',
  },
};

const FULL_SETTINGS: ComponentSettings = {
  paused: true,
  pvReclaimPolicy: 'Delete',
  enablePVReclaim: true,
  kubeVersion: '1.33',
  updateStrategy: 'OnDelete',
  forceUpgrade: true,
  evictLeaderTimeout: '10m',
  waitLeaderTransferBackTimeout: '1m',
  maxFailoverCount: 1,
  recoverFailover: true,
  recoverByUID: 'uid-1',
  spareVolReplaceReplicas: 2,
  scaleInParallelism: 2,
  scaleOutParallelism: 3,
  storeLabels: ['rack'],
  serverLabels: { zone: 'a' },
  gracefulShutdownTimeout: '5m',
  replace: ['demo-tikv-1'],
  minReadySeconds: 30,
  checkQuorumBeforeUpgrade: true,
  checkStoresUpBeforeUpgrade: true,
  flushLogBackup: false,
};

const PUBLISH_INFO: MonitoringPublishInfo = {
  cluster: 'demo',
  image: 'pingcap/tidb-monitor-initializer:v8.5.7',
  components: ['pd', 'tikv', 'tidb'],
  rules: true,
  dashboards: false,
  labels: { release: 'prom' },
  assets: '/assets',
};

describe('round trips: what the renderer encodes, the controller parses back equal', () => {
  test('the cluster JSON, with every field set', () => {
    const text = encodeControllerClusterInfo(FULL_INFO);
    expect(text).not.toMatch(/\s/);
    expect(parseControllerClusterInfo(text)).toEqual(FULL_INFO);
    expect(parseClusterInfo(text, 'ns')).toEqual({ ...FULL_INFO, namespace: 'ns' });
  });

  test("the cluster JSON of a rendered cluster's controller", () => {
    const objects = render(cluster({ ticdc: { replicas: 1 } }));
    const text = envValue(container(find(objects, 'Deployment', 'demo-discovery'), 'discovery'), CONTROLLER_ENV.cluster);
    expect(parseControllerClusterInfo(text)).toEqual(JSON.parse(text));
    // The namespace comes right after the name, as the controller has always kept it.
    expect(Object.keys(parseClusterInfo(text, 'ns')).slice(0, 2)).toEqual(['name', 'namespace']);
  });

  test('the settings annotation, with every field set', () => {
    const text = encodeComponentSettings(FULL_SETTINGS);
    expect(parseComponentSettings(text)).toEqual(FULL_SETTINGS);
  });

  test("the settings annotation of every rendered StatefulSet, through the controller's settingsOf", () => {
    const objects = render(
      cluster(
        {
          tikv: { replicas: 3, requests: { storage: '1Gi' }, storeLabels: ['rack'], failover: { recoverByUID: 'u' } },
          tidb: { replicas: 2, serverLabels: { zone: 'a' } },
          ticdc: { replicas: 1, gracefulShutdownTimeout: '5m' },
        },
        { annotations: { 'tidb-gitops.io/replace': 'demo-tikv-1', 'tidb.pingcap.com/pd-check-quorum-before-upgrade': 'true' } },
      ),
    );
    for (const sts of statefulSets(objects)) {
      const text = sts.metadata.annotations[ANNOTATION.settings];
      expect(settingsOf(sts as StatefulSet)).toEqual(JSON.parse(text));
      expect(encodeComponentSettings(settingsOf(sts as StatefulSet))).toBe(text);
    }
    expect(settingsOf(find(objects, 'StatefulSet', 'demo-tikv') as StatefulSet)).toMatchObject({
      replace: ['demo-tikv-1'],
      storeLabels: ['rack'],
      recoverByUID: 'u',
    });
  });

  test('the monitoring Job env, hand-made and rendered', () => {
    expect(parseMonitoringPublishInfo(encodeMonitoringPublishInfo(PUBLISH_INFO))).toEqual(PUBLISH_INFO);
    const objects = render(cluster({}, { annotations: { 'tidb-gitops.io/monitoring': 'true' } }));
    const text = envValue(find(objects, 'Job', /^demo-monitoring-/).spec.template.spec.containers[0], MONITORING_ENV);
    expect(parseMonitoringPublishInfo(text)).toEqual(JSON.parse(text));
  });
});

describe('the settings annotation: a bad one counts as none, its fields are taken unchecked', () => {
  test.each([
    ['absent', undefined],
    ['empty', ''],
    ['not JSON', '{paused: true'],
    ['a list', '[{"paused":true}]'],
    ['null', 'null'],
    ['a string', '"paused"'],
    ['a number', '3'],
  ])('%s reads as {}', (_what, text) => {
    expect(parseComponentSettings(text)).toEqual({});
    const sts = {
      metadata: { name: 'demo-tikv', ...(text !== undefined && { annotations: { [ANNOTATION.settings]: text } }) },
    } as StatefulSet;
    expect(settingsOf(sts)).toEqual({});
  });

  test('fields of the wrong type and unknown fields are kept as they are', () => {
    const text = '{"paused":"yes","maxFailoverCount":"3","replace":"demo-tikv-0","future":1}';
    expect(parseComponentSettings(text)).toEqual({ paused: 'yes', maxFailoverCount: '3', replace: 'demo-tikv-0', future: 1 });
  });
});

describe('the cluster JSON: checked, each error naming its key', () => {
  const parse = (value: unknown) => () => parseControllerClusterInfo(JSON.stringify(value));

  test('unset fields take their defaults; lists come back in reconcile order, empty ones left out', () => {
    expect(
      parseControllerClusterInfo(
        '{"name":"c","components":["tidb","pd"],"backupSchedules":[],"operations":[],"logBackups":[],"cluster":{"name":"main"}}',
      ),
    ).toEqual({
      name: 'c',
      clusterDomain: '',
      acrossK8s: false,
      tls: false,
      discoveryMtls: false,
      pdAddresses: [],
      cluster: { name: 'main', namespace: '', clusterDomain: '' },
      components: ['pd', 'tidb'],
    });
    expect(parseClusterInfo('{"name":"c","readsNodes":false}', 'ns')).toEqual({
      name: 'c',
      namespace: 'ns',
      clusterDomain: '',
      acrossK8s: false,
      tls: false,
      discoveryMtls: false,
      pdAddresses: [],
      cluster: null,
      components: [],
    });
  });

  test('fails on text that is not a JSON object', () => {
    expect(() => parseControllerClusterInfo('{name')).toThrow(/^TIDB_GITOPS_CLUSTER is not JSON: /);
    expect(() => parseControllerClusterInfo('[]')).toThrow('TIDB_GITOPS_CLUSTER must be a JSON object');
    expect(() => parseControllerClusterInfo('null')).toThrow('TIDB_GITOPS_CLUSTER must be a JSON object');
  });

  test.each([
    [{}, 'TIDB_GITOPS_CLUSTER.name: expected a string'],
    [{ name: 'c', clusterDomain: 1 }, 'TIDB_GITOPS_CLUSTER.clusterDomain: expected a string'],
    [{ name: 'c', tls: 'true' }, 'TIDB_GITOPS_CLUSTER.tls: expected true or false'],
    [{ name: 'c', patchesVolumes: 1 }, 'TIDB_GITOPS_CLUSTER.patchesVolumes: expected true or false'],
    [
      { name: 'c', components: ['pd', 'tiflash2'] },
      'TIDB_GITOPS_CLUSTER.components: expected a list of tso, scheduling, pd, tiproxy, tiflash, tikv, pump, tidb, ticdc',
    ],
    [{ name: 'c', pdAddresses: 'http://pd:2379' }, 'TIDB_GITOPS_CLUSTER.pdAddresses: expected a list of URLs'],
    [{ name: 'c', cluster: { namespace: 'x' } }, 'TIDB_GITOPS_CLUSTER.cluster: expected null or {name, namespace, clusterDomain}'],
    [{ name: 'c', backupSchedules: ['Nightly'] }, 'TIDB_GITOPS_CLUSTER.backupSchedules: expected a list of BackupSchedule names'],
    [{ name: 'c', operations: ['once'] }, 'TIDB_GITOPS_CLUSTER.operations: expected a list of Job names, backup-<name> or restore-<name>'],
    [{ name: 'c', logBackups: ['restore-x'] }, 'TIDB_GITOPS_CLUSTER.logBackups: expected a list of ConfigMap names, backup-<name>'],
    [{ name: 'c', backupRetention: [] }, 'TIDB_GITOPS_CLUSTER.backupRetention: expected an object of schedules'],
  ])('fails on %j', (value, message) => {
    expect(parse(value)).toThrow(message);
  });

  test('fails on a retention without its limit, or that removes data without saying where', () => {
    const why =
      'expected one of maxBackups and maxReservedSeconds, a cleanPolicy of Retain, Delete or OnFailure, a storageKind of s3, gcs or azblob, and bucket, prefix and secretName where it removes data (on Azure, sasToken and account may stand for secretName)';
    expect(parse({ name: 'c', backupRetention: { nightly: {} } })).toThrow(`TIDB_GITOPS_CLUSTER.backupRetention: nightly: ${why}`);
    expect(parse({ name: 'c', backupRetention: { nightly: { maxBackups: 1, maxReservedSeconds: 60 } } })).toThrow(why);
    expect(parse({ name: 'c', backupRetention: { nightly: { maxBackups: 0 } } })).toThrow(why);
    expect(parse({ name: 'c', backupRetention: { nightly: { maxBackups: 1, cleanPolicy: 'Delete', bucket: 'b', prefix: 'p' } } })).toThrow(
      why,
    );
    // Retain removes nothing, so it needs no bucket.
    expect(parse({ name: 'c', backupRetention: { nightly: { maxBackups: 1 } } })().backupRetention).toEqual({ nightly: { maxBackups: 1 } });
  });

  test('fails on an initializer without its name, digest or host, or with a field of the wrong kind', () => {
    const message =
      'TIDB_GITOPS_CLUSTER.initializer: expected {name, digest, permitHost} and optionally passwordSecret, rootOnly, sql {configMap, key}, timezone, tls {secret, skipCA}, existingCluster (run or skip)';
    const ok = { name: 'init', digest: 'sha256:a', permitHost: '%' };
    expect(parse({ name: 'c', initializer: ok })().initializer).toEqual(ok);
    for (const bad of [
      null,
      { ...ok, name: '' },
      { ...ok, rootOnly: false },
      { ...ok, existingCluster: 'yes' },
      { ...ok, sql: { configMap: 'm' } },
      { ...ok, tls: { secret: 's', skipCA: 'true' } },
    ]) {
      expect(parse({ name: 'c', initializer: bad })).toThrow(message);
    }
  });
});

describe('the monitoring Job env: refused unless it is what the renderer writes', () => {
  test('fails on JSON without a cluster, components and assets', () => {
    expect(() => parseMonitoringPublishInfo('{"cluster":"demo","components":[]}')).toThrow(
      `${MONITORING_ENV} is not what the renderer writes`,
    );
    expect(() => parseMonitoringPublishInfo('{"cluster":"demo","components":"pd","assets":"/a"}')).toThrow(
      `${MONITORING_ENV} is not what the renderer writes`,
    );
  });

  test('fails on text that is not JSON', () => {
    expect(() => parseMonitoringPublishInfo('{cluster')).toThrow(SyntaxError);
  });
});
