/**
 * Names a render generates fit Kubernetes' limits for every run (a log command Job's `-<n>` grows with
 * each retry), and every name is reserved: two objects of one kind, name and namespace, rendered or
 * made at run time, by a cluster, the documents beside it or an object kept beside it, are refused,
 * naming both inputs.
 */
import { stringify } from 'yaml';
import { DNS1123_LABEL } from '../../../src/base/patterns';
import { logCommandJobName } from '../../../src/tidbcluster/names';
import { planLogTask } from '../../../src/controller/plan/log-tasks';
import { cluster, find, type Obj } from '../../support/render';
import { renderFolders } from '../../support/render-dir';

const run = renderFolders('name-collisions');
const yaml = (...objects: Obj[]) => objects.map((o) => stringify(o)).join('---\n');

const S3 = { provider: 'ceph', endpoint: 'http://minio:9000', bucket: 'b', prefix: 'p', secretName: 's3' };
const backup = (name: string, clusterName: string, spec: Obj = {}, namespace = 'tidb'): Obj => ({
  apiVersion: 'pingcap.com/v1alpha1',
  kind: 'Backup',
  metadata: { name, namespace },
  spec: { br: { cluster: clusterName }, s3: S3, ...spec },
});
const restore = (name: string, clusterName: string): Obj => ({
  apiVersion: 'pingcap.com/v1alpha1',
  kind: 'Restore',
  metadata: { name, namespace: 'tidb' },
  spec: { br: { cluster: clusterName }, s3: S3 },
});
const schedule = (name: string, clusterName: string, spec: Obj = {}): Obj => ({
  apiVersion: 'pingcap.com/v1alpha1',
  kind: 'BackupSchedule',
  metadata: { name, namespace: 'tidb' },
  spec: { schedule: '0 2 * * *', backupTemplate: { br: { cluster: clusterName }, s3: S3 }, ...spec },
});
const tc = (name: string, annotations?: Record<string, string>) =>
  cluster({}, { name, namespace: 'tidb', ...(annotations && { annotations }) });
/** A label value Kubernetes takes (the Job controller labels a Job's Pods with its name). */
const fitsLabel = (name: string) => name.length <= 63 && DNS1123_LABEL.test(name);

describe('class 3: generated names fit for every run', () => {
  const longest = `backup-${'b'.repeat(56)}-log-truncate`;

  test('logCommandJobName keeps <template>-<n> while it fits, and shortens it with a hash, never past 63, when it does not', () => {
    expect(logCommandJobName('backup-pitr-log-start', 1)).toBe('backup-pitr-log-start-1');
    expect(logCommandJobName('backup-pitr-log-start', 12345)).toBe('backup-pitr-log-start-12345');
    const seen = new Set<string>();
    for (const template of [longest, `backup-${'b'.repeat(50)}-log-stop`, `backup-log-${'s'.repeat(45)}-log-resume`]) {
      for (const n of [1, 9, 10, 99, 100, 12345, 2 ** 31, Number.MAX_SAFE_INTEGER]) {
        const name = logCommandJobName(template, n);
        expect(fitsLabel(name)).toBe(true);
        expect(name.endsWith(`-${n}`)).toBe(true);
        expect(seen.has(name)).toBe(false);
        seen.add(name);
      }
    }
    // Templates that differ only past where they are cut get names of their own.
    expect(logCommandJobName(`${longest}x`, 1)).not.toBe(logCommandJobName(longest, 1));
  });

  test('the controller names its log command Jobs with it, for the longest name and many runs', () => {
    const template = (command: string) =>
      JSON.stringify({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: `backup-${'b'.repeat(56)}-log-${command}` }, spec: {} });
    const doc = { task: 'b'.repeat(56), state: 'running' as const, jobs: { start: template('start'), stop: template('stop') } };
    const record = { configMap: `backup-${'b'.repeat(56)}`, task: 'b'.repeat(56), want: 'running' as const, inGit: true, runs: 99999 };
    const step = planLogTask(
      { configMap: record.configMap, inGit: true, doc, record, jobs: [], pods: [] },
      { view: { tasks: [], at: 0 }, now: 1000 },
    )!;
    const name = (step.create!.body.metadata as Obj).name as string;
    expect(name).toBe(logCommandJobName(`backup-${'b'.repeat(56)}-log-start`, 100000));
    expect(fitsLabel(name)).toBe(true);
  });

  test('the monitoring Job of the longest cluster name fits a label value', () => {
    const name = 'm'.repeat(49);
    const longest = { ...cluster({}, { name, namespace: 'tidb', annotations: { 'tidb-gitops.io/monitoring': 'true' } }) };
    delete longest.spec.tikv;
    delete longest.spec.tidb;
    const r = run({ 'tc.yaml': stringify(longest) });
    expect(r.stderr).toBe('');
    const job = find(r.docs, 'Job', new RegExp(`^${name}-`));
    expect(fitsLabel(job.metadata.name)).toBe(true);
    // Its Role lets it read itself by that name.
    const role = find(r.docs, 'Role', `${name}-monitoring`);
    expect(role.rules[0].resourceNames).toEqual([job.metadata.name]);
  });

  test('a kept Job on a shortened log command Job name is refused as the run-time name it is', () => {
    const b = 'b'.repeat(56);
    const taken = logCommandJobName(`backup-${b}-log-truncate`, 123);
    const job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: taken },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
    };
    const r = run({
      'tc.yaml': stringify(tc('basic')),
      'b.yaml': stringify(backup(b, 'basic', { backupMode: 'log' })),
      'more.yaml': stringify(job),
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      `more.yaml: document 1: metadata.name (line 4): Job ${taken} (no namespace: it lands in the one it is applied to) takes the place of Job backup-${b}-log-truncate-<n> in namespace tidb`,
    );
  });
});

describe('class 6: rendered names that collide', () => {
  test('a Backup pd beside a cluster backup renders ConfigMap backup-pd twice: refused, naming both inputs', () => {
    const r = run({ 'tc.yaml': stringify(tc('backup')), 'b.yaml': stringify(backup('pd', 'backup')) });
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([
      `${r.dir}/b.yaml: document 1: metadata.name (line 4): Backup pd renders ConfigMap backup-pd in namespace tidb, which TidbCluster backup at ${r.dir}/tc.yaml: document 1 (metadata.name, line 4) renders too; rename the Backup`,
      '1 problem found; nothing was rendered',
    ]);
  });

  test('names the controller takes at run time, and every other rendered name of the cluster, are reserved', () => {
    const cases: [Obj[], RegExp][] = [
      [
        [tc('backup'), backup('status', 'backup')],
        /b\.yaml: document 1: metadata\.name \(line 4\): Backup status renders ConfigMap backup-status in namespace tidb, where the controller of cluster backup \(TidbCluster backup at .*tc\.yaml: document 1 \(metadata\.name, line 4\)\) keeps its state at run time; rename the Backup/,
      ],
      [
        [tc('backup'), backup('volume-sizes', 'backup')],
        /Backup volume-sizes renders ConfigMap backup-volume-sizes in namespace tidb, which TidbCluster backup at .* renders too/,
      ],
      [
        [tc('restore'), restore('tikv', 'restore')],
        /Restore tikv renders ConfigMap restore-tikv in namespace tidb, which TidbCluster restore at .* renders too/,
      ],
      [
        [tc('backup-x'), backup('x-pd', 'backup-x')],
        /Backup x-pd renders ConfigMap backup-x-pd in namespace tidb, which TidbCluster backup-x at .* renders too/,
      ],
      [
        [tc('backup', { 'tidb-gitops.io/monitoring': 'true' }), backup('dashboard-pd', 'backup')],
        /Backup dashboard-pd renders ConfigMap backup-dashboard-pd in namespace tidb, a dashboard which the monitoring Job backup-monitoring-[0-9a-f]+ of TidbCluster backup at .* publishes at run time; rename the Backup/,
      ],
    ];
    for (const [docs, expected] of cases) {
      const r = run({ 'tc.yaml': stringify(docs[0]), 'b.yaml': stringify(docs[1]) });
      expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 1, stderr: expect.stringMatching(expected) });
    }
    // The initializer's ConfigMap, with its TidbInitializer beside it.
    const init = {
      apiVersion: 'pingcap.com/v1alpha1',
      kind: 'TidbInitializer',
      metadata: { name: 'init', namespace: 'tidb' },
      spec: { image: 'tnir/mysqlclient', cluster: { name: 'backup' }, initSql: 'select 1' },
    };
    const r = run({ 'tc.yaml': stringify(tc('backup')), 'b.yaml': yaml(backup('tidb-initializer', 'backup'), init) });
    expect(r.status).toBe(1);
    // The TidbInitializer's ConfigMap is named after its cluster: the Backup is the one to rename.
    expect(r.stderr).toMatch(
      /b\.yaml: document 1: metadata\.name \(line 4\): Backup tidb-initializer renders ConfigMap backup-tidb-initializer in namespace tidb, which TidbInitializer init at .*b\.yaml: document 2 \(metadata\.name, line \d+\) renders too; rename the Backup/,
    );
  });

  test('Jobs the controller and the CronJobs make at run time are reserved too', () => {
    // The schedule's CronJob backup-x-log-start makes Jobs backup-x-log-start-<minutes>, the log backup x's start Jobs backup-x-log-start-<n>.
    const r = run({
      'tc.yaml': stringify(tc('basic')),
      'b.yaml': yaml(backup('x', 'basic', { backupMode: 'log' }), schedule('x-log-start', 'basic')),
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /b\.yaml: document 2: metadata\.name \(line 20\): BackupSchedule x-log-start makes Job backup-x-log-start-<minutes> in namespace tidb at run time, where the controller of cluster basic \(Backup x at .*b\.yaml: document 1 \(metadata\.name, line 4\)\) creates Job backup-x-log-start-<n> at run time; rename the BackupSchedule/,
    );
  });

  test('documents that render names of their own pass', () => {
    const r = run({
      'tc.yaml': stringify(tc('basic')),
      'b.yaml': yaml(backup('pd', 'basic'), restore('pd', 'basic'), schedule('nightly', 'basic')),
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});

describe('class 7: a kept object without a namespace', () => {
  test('lands on the rendered and run-time names of a cluster in tidb, and is refused', () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'basic-pd' }, data: {} };
    const cron = {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'backup-nightly' },
      spec: {
        schedule: '* * * * *',
        jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } },
      },
    };
    const status = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'basic-status' }, data: {} };
    // Kubernetes writes the Endpoints of a Service that selects Pods.
    const endpoints = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'basic-pd' }, subsets: [] };
    const r = run({
      'tc.yaml': stringify(tc('basic')),
      'b.yaml': stringify(schedule('nightly', 'basic')),
      'more.yaml': yaml(cm, cron, status, endpoints),
    });
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toMatch(
      /more\.yaml: document 1: metadata\.name \(line 4\): ConfigMap basic-pd \(no namespace: it lands in the one it is applied to\) takes the place of ConfigMap basic-pd in namespace tidb, rendered from .*tc\.yaml: document 1; rename it/,
    );
    expect(lines[1]).toMatch(
      /more\.yaml: document 2: metadata\.name \(line \d+\): CronJob backup-nightly \(no namespace: it lands in the one it is applied to\) takes the place of CronJob backup-nightly in namespace tidb, rendered from .*b\.yaml: document 1; rename it/,
    );
    expect(lines[2]).toMatch(
      /more\.yaml: document 3: metadata\.name \(line \d+\): ConfigMap basic-status \(no namespace: it lands in the one it is applied to\) takes the place of ConfigMap basic-status in namespace tidb, where the controller of cluster basic/,
    );
    expect(lines[3]).toMatch(
      /more\.yaml: document 4: metadata\.name \(line \d+\): Endpoints basic-pd \(no namespace: it lands in the one it is applied to\) takes the place of Endpoints basic-pd in namespace tidb, which Kubernetes writes at run time for Service basic-pd \(rendered from .*tc\.yaml: document 1\); rename it/,
    );
    expect(lines[4]).toBe('4 problems found; nothing was rendered');
  });
});
