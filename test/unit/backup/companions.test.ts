/**
 * Backup, BackupSchedule and Restore documents read beside their TidbCluster: validated against their
 * CRDs and this project's rules with file, document, path and line, tied to their cluster, and a
 * BackupSchedule rendered as a CronJob whose BR command line is the operator's.
 */
import { stringify } from 'yaml';
import { loadInputs } from '../../../src/backup/companions';
import { linkOperations } from '../../../src/backup/link';
import { cronProblem } from '../../../src/backup/cron';
import { renderClusters } from '../../../src/render/render';
import { assertValidK8sObjects, SCHEMA_MINORS } from '../../support/k8s-schema';
import { cluster, find, type Obj } from '../../support/render';

function schedule(spec: Obj = {}, metadata: Obj = {}): Obj {
  return {
    apiVersion: 'pingcap.com/v1alpha1',
    kind: 'BackupSchedule',
    metadata: { name: 'nightly', namespace: 'ns', ...metadata },
    spec: {
      schedule: '0 2 * * *',
      backupTemplate: {
        br: { cluster: 'demo' },
        s3: { provider: 'aws', region: 'us-west-2', bucket: 'backups', prefix: 'demo', secretName: 's3-secret' },
      },
      ...spec,
    },
  };
}

/** Loads and links the documents; the error lines when any. */
function load(docs: Obj[] | string, options: { namespace?: string } = {}) {
  const text = typeof docs === 'string' ? docs : docs.map((d) => stringify(d)).join('---\n');
  const loaded = loadInputs(text, 'in.yaml', options);
  const linked = linkOperations(loaded.clusters, loaded.documents);
  return { loaded, linked, errors: [...loaded.errors.map((e) => e.message), ...linked.errors].join('\n') };
}

function renderAll(docs: Obj[], kubeMinor = 31): Obj[] {
  const { loaded, linked, errors } = load(docs);
  if (errors) throw new Error(errors);
  const rendered = renderClusters(
    loaded.clusters.map((c) => c.resolved),
    linked.operations,
  );
  const objects = rendered.flatMap((r) => r.objects);
  assertValidK8sObjects(objects, `1.${kubeMinor}`);
  return objects;
}

const brContainer = (cronJob: Obj) => cronJob.spec.jobTemplate.spec.template.spec.containers[0];

describe('a BackupSchedule renders as a CronJob', () => {
  test("runs BR's snapshot backup with the operator's arguments, never two at once", () => {
    const cj = find(
      renderAll([
        cluster(),
        schedule({
          backupTemplate: {
            ...schedule().spec.backupTemplate,
            br: { cluster: 'demo', sendCredToTikv: true, concurrency: 8, rateLimit: 4, checksum: false, options: ['--lastbackupts=42'] },
          },
        }),
      ]),
      'CronJob',
      'backup-nightly',
    );
    expect(cj.metadata.namespace).toBe('ns');
    expect(cj.spec).toMatchObject({ schedule: '0 2 * * *', concurrencyPolicy: 'Forbid', suspend: false, timeZone: 'Etc/UTC' });
    expect(cj.spec.jobTemplate.spec.backoffLimit).toBe(0);
    const c = brContainer(cj);
    expect(c.image).toBe('pingcap/br:v8.5.7');
    expect(c.command.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    expect(c.args).toEqual([
      'backup',
      'full',
      '--pd=demo-pd.$(NAMESPACE):2379',
      '--send-credentials-to-tikv=true',
      '--storage=@STORAGE@',
      '--s3.region=us-west-2',
      '--s3.provider=aws',
      '--concurrency=8',
      '--ratelimit=4',
      '--checksum=false',
      '--lastbackupts=42',
    ]);
    const env = Object.fromEntries(c.env.map((e: Obj) => [e.name, e.value ?? e.valueFrom]));
    expect(env.BR_STORAGE).toBe('s3://backups/demo/nightly/{run}');
    expect(env.AWS_ACCESS_KEY_ID).toEqual({ secretKeyRef: { name: 's3-secret', key: 'access_key' } });
    expect(env.JOB_NAME).toEqual({ fieldRef: { fieldPath: "metadata.labels['batch.kubernetes.io/job-name']" } });
    expect(cj.spec.jobTemplate.spec.template.metadata.labels['tidb.pingcap.com/backup-schedule']).toBe('nightly');
  });

  test('is valid for every supported Kubernetes version', () => {
    for (const minor of SCHEMA_MINORS) expect(() => renderAll([cluster(), schedule()], minor)).not.toThrow();
  });

  test('pause suspends it; a db backup names the database; TLS clusters mount the client certificate', () => {
    const cj = find(
      renderAll([
        cluster({ tlsCluster: { enabled: true } }),
        schedule({
          pause: true,
          backupTemplate: {
            backupType: 'db',
            br: { cluster: 'demo', db: 'shop' },
            s3: { provider: 'ceph', bucket: 'backups/team', prefix: '/a/', endpoint: 'http://minio:9000', forcePathStyle: false },
          },
        }),
      ]),
      'CronJob',
      'backup-nightly',
    );
    expect(cj.spec.suspend).toBe(true);
    const c = brContainer(cj);
    expect(c.args).toEqual(
      expect.arrayContaining(['backup', 'db', '--db=shop', '--ca=/var/lib/cluster-client-tls/ca.crt', '--s3.endpoint=http://minio:9000']),
    );
    expect(c.env.find((e: Obj) => e.name === 'BR_STORAGE').value).toBe('s3://backups/team/a/nightly/{run}?force-path-style=false');
    expect(c.env.some((e: Obj) => e.name === 'AWS_ACCESS_KEY_ID')).toBe(false);
    expect(cj.spec.jobTemplate.spec.template.spec.volumes).toEqual([
      { name: 'cluster-client-tls', secret: { secretName: 'demo-cluster-client-secret' } },
    ]);
  });

  test('GCS, Azure Blob and a local volume', () => {
    const gcs = brContainer(
      find(
        renderAll([
          cluster(),
          schedule({
            backupTemplate: {
              br: { cluster: 'demo' },
              gcs: { projectId: 'proj', bucket: 'b', prefix: 'p', secretName: 'gcs', storageClass: 'COLDLINE', objectAcl: 'private' },
            },
          }),
        ]),
        'CronJob',
        'backup-nightly',
      ),
    );
    expect(gcs.args).toEqual(
      expect.arrayContaining([
        '--gcs.storage-class=COLDLINE',
        '--gcs.predefined-acl=private',
        '--gcs.credentials-file=/var/lib/gcs-credentials/credentials',
      ]),
    );
    expect(gcs.env.find((e: Obj) => e.name === 'BR_STORAGE').value).toBe('gcs://b/p/nightly/{run}/');
    const az = brContainer(
      find(
        renderAll([
          cluster(),
          schedule({
            backupTemplate: {
              br: { cluster: 'demo' },
              azblob: { container: 'c', prefix: 'p', secretName: 'az', storageAccount: 'acct', accessTier: 'Cool' },
            },
          }),
        ]),
        'CronJob',
        'backup-nightly',
      ),
    );
    expect(az.envFrom).toEqual([{ secretRef: { name: 'az' } }]);
    expect(az.env.find((e: Obj) => e.name === 'BR_STORAGE').value).toBe('azure://c/p/nightly/{run}/?account-name=acct');
    const local = find(
      renderAll([
        cluster(),
        schedule({
          backupTemplate: {
            br: { cluster: 'demo' },
            local: {
              prefix: 'bk',
              volume: { name: 'nfs', nfs: { server: 'nfs.example', path: '/exports' } },
              volumeMount: { name: 'nfs', mountPath: '/nfs' },
            },
          },
        }),
      ]),
      'CronJob',
      'backup-nightly',
    );
    expect(brContainer(local).env.find((e: Obj) => e.name === 'BR_STORAGE').value).toBe('local:///nfs/bk/nightly/{run}');
    expect(local.spec.jobTemplate.spec.template.spec.volumes).toEqual([{ name: 'nfs', nfs: { server: 'nfs.example', path: '/exports' } }]);
  });

  test("toolImage replaces the BR image, taking TiKV's version when it has no tag", () => {
    const image = (toolImage: string) =>
      brContainer(
        find(
          renderAll([cluster(), schedule({ backupTemplate: { ...schedule().spec.backupTemplate, toolImage } })]),
          'CronJob',
          'backup-nightly',
        ),
      ).image;
    expect(image('registry.local/br')).toBe('registry.local/br:v8.5.7');
    expect(image('registry.local:5000/br:v8.5.6')).toBe('registry.local:5000/br:v8.5.6');
    // A digest pins the image: nothing is added to it.
    const digest = `sha256:${'a'.repeat(64)}`;
    expect(image(`registry.local:5000/br@${digest}`)).toBe(`registry.local:5000/br@${digest}`);
    expect(image(`pingcap/br:v8.5.6@${digest}`)).toBe(`pingcap/br:v8.5.6@${digest}`);
  });

  test('a TiKV image pinned by tag and digest gives BR its tag, not the digest', () => {
    const digest = `sha256:${'b'.repeat(64)}`;
    const objects = renderAll([cluster({ tikv: { ...cluster().spec.tikv, version: `v8.5.2@${digest}` } }), schedule()]);
    expect(brContainer(find(objects, 'CronJob', 'backup-nightly')).image).toBe('pingcap/br:v8.5.2');
  });

  test('an S3 endpoint without its scheme or host is refused where it is written, as the operator refuses it', () => {
    const errs = (endpoint: string) =>
      load([cluster(), schedule({ backupTemplate: { br: { cluster: 'demo' }, s3: { provider: 'ceph', bucket: 'b', endpoint } } })]).errors;
    for (const endpoint of ['minio:9000', 'minio.svc', '//minio:9000', 'http://']) {
      expect(errs(endpoint)).toMatch(
        new RegExp(
          `spec\\.backupTemplate\\.s3\\.endpoint \\(line \\d+\\): expected a URL with its scheme and host, such as http://minio:9000 or https://s3\\.example\\.com, got "${endpoint.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}"`,
        ),
      );
    }
    expect(errs('http://minio:9000')).toBe('');
    expect(errs('https://s3.example.com/')).toBe('');
  });

  test("s3.options are rclone's: an operator user's schedule that has them runs, and BR never sees them", () => {
    const s3 = { ...schedule().spec.backupTemplate.s3, options: ['--s3-no-check-bucket', '--checksum'] };
    const c = brContainer(
      find(renderAll([cluster(), schedule({ backupTemplate: { br: { cluster: 'demo' }, s3 } })]), 'CronJob', 'backup-nightly'),
    );
    expect(c.args).toEqual([
      'backup',
      'full',
      '--pd=demo-pd.$(NAMESPACE):2379',
      '--storage=@STORAGE@',
      '--s3.region=us-west-2',
      '--s3.provider=aws',
    ]);
  });

  test('a schedule takes the namespace of its cluster when it has none', () => {
    const cj = find(renderAll([cluster(), schedule({}, { namespace: undefined })]), 'CronJob', 'backup-nightly');
    expect(cj.metadata.namespace).toBe('ns');
  });
});

describe('bad input', () => {
  test('an unknown field gets a did-you-mean with file, document, path and line; every problem at once', () => {
    const text = `${stringify(cluster())}---
apiVersion: pingcap.com/v1alpha1
kind: BackupSchedule
metadata:
  name: nightly
  namespace: ns
spec:
  schedule: "0 25 * * *"
  maxBakups: 3
  backupTemplate:
    br:
      cluster: demo
    s3:
      provider: aws
`;
    const line = (needle: string) => text.split('\n').findIndex((l) => l.includes(needle)) + 1;
    const { errors } = load(text);
    expect(errors).toContain(`in.yaml: document 2: spec.maxBakups (line ${line('maxBakups')}): unknown field; did you mean maxBackups?`);
    // The schema's words come first; the rest is found once the document has the right shape.
    expect(errors.split('\n')).toHaveLength(1);
    const fixed = load(text.replace('  maxBakups: 3\n', '  pause: false\n'));
    expect(fixed.errors).toContain(`in.yaml: document 2: spec.schedule (line ${line('schedule:')}): hour "25": 25 is out of range 0-23`);
    expect(fixed.errors).toContain(
      `in.yaml: document 2: spec.backupTemplate.s3.bucket (line ${line('provider: aws')}): no bucket: the storage needs one (or path: bucket/prefix)`,
    );
  });

  test('a cluster that is not in the input, or another namespace than its cluster', () => {
    expect(
      load([cluster(), schedule({ backupTemplate: { br: { cluster: 'other' }, s3: { provider: 'ceph', bucket: 'b' } } })]).errors,
    ).toMatch(
      /^in\.yaml: document 2: spec\.backupTemplate\.br\.cluster \(line \d+\): no TidbCluster "other" in namespace ns in the input \(have: ns\/demo\); a BackupSchedule renders with its cluster$/,
    );
    expect(
      load([
        cluster(),
        schedule(
          { backupTemplate: { br: { cluster: 'demo', clusterNamespace: 'ns' }, s3: { provider: 'ceph', bucket: 'b' } } },
          { namespace: 'other' },
        ),
      ]).errors,
    ).toContain('metadata.namespace (line 23): a BackupSchedule must be in its cluster\'s namespace "ns"');
  });

  test('what is not carried out is refused by name, never dropped', () => {
    const { errors } = load([
      cluster(),
      schedule({
        maxBackups: 3,
        logBackupTemplate: { backupMode: 'log', br: { cluster: 'demo' }, s3: { provider: 'ceph', bucket: 'b' } },
        backupTemplate: {
          br: { cluster: 'demo' },
          s3: { provider: 'ceph', bucket: 'b' },
          dumpling: { options: [] },
          cleanPolicy: 'Delete',
        },
      }),
      {
        apiVersion: 'pingcap.com/v1alpha1',
        kind: 'Restore',
        metadata: { name: 'r', namespace: 'ns' },
        spec: {
          restoreMode: 'pitr',
          pitrRestoredTs: '2026-11-27 00:00:00',
          br: { cluster: 'demo', timeAgo: '1h' },
          s3: { provider: 'ceph', bucket: 'b' },
        },
      },
      {
        apiVersion: 'pingcap.com/v1alpha1',
        kind: 'Backup',
        metadata: { name: 'once', namespace: 'ns' },
        spec: { backupMode: 'log', br: { cluster: 'demo' }, s3: { provider: 'ceph', bucket: 'b' }, useKMS: false, calcSizeLevel: 'all' },
      },
      {
        apiVersion: 'pingcap.com/v1alpha1',
        kind: 'Backup',
        metadata: { name: 'kept', namespace: 'ns' },
        spec: { cleanPolicy: 'Delete', br: { cluster: 'demo' }, s3: { provider: 'ceph', bucket: 'b' } },
      },
    ]);
    expect(errors).toContain('spec.backupTemplate.dumpling (line');
    expect(errors).toMatch(/spec\.backupTemplate\.dumpling \(line \d+\): not supported: Dumpling/);
    expect(errors).not.toContain('spec.logBackupTemplate');
    // A schedule's cleanPolicy is carried out by its retention; on this S3 storage without keys it cannot be.
    expect(errors).toMatch(/spec\.backupTemplate\.s3\.secretName \(line \d+\): required with cleanPolicy Delete/);
    expect(errors).toMatch(/document 3: spec\.pitrFullBackupStorageProvider \(line \d+\): required with restoreMode: pitr/);
    expect(errors).toMatch(/document 3: spec\.pitrRestoredTs \(line \d+\): expected a TSO \(digits\) or a time with its zone/);
    expect(errors).toMatch(/document 3: spec\.br\.timeAgo \(line \d+\): not supported: is a backup setting/);
    expect(errors).not.toMatch(/document 4:/);
    expect(errors).toMatch(
      /document 5: spec\.cleanPolicy \(line \d+\): removing a backup's data when its document leaves Git is not carried out yet; the data stays \(Retain\), remove cleanPolicy/,
    );
    // The CRD's own defaults ask for nothing and pass.
    expect(errors).not.toContain('useKMS');
    expect(errors).not.toContain('calcSizeLevel');
  });

  test('retention: one of maxBackups and maxReservedTime; removing data from S3 needs keys the controller can use', () => {
    const s3 = { provider: 'aws', bucket: 'b', secretName: 's3-secret' };
    const errs = (spec: Obj) => load([cluster(), schedule({ backupTemplate: { br: { cluster: 'demo' }, s3 }, ...spec })]).errors;
    expect(errs({ maxBackups: 3 })).toBe('');
    expect(errs({ maxReservedTime: '72h' })).toBe('');
    expect(errs({ maxBackups: 3, maxReservedTime: '72h' })).toMatch(
      /spec\.maxReservedTime \(line \d+\): give one of maxBackups and maxReservedTime/,
    );
    expect(errs({ maxBackups: 0 })).toMatch(/spec\.maxBackups \(line \d+\): expected a whole number of backups to keep, at least 1, got 0/);
    expect(errs({ maxReservedTime: '7d' })).toMatch(
      /spec\.maxReservedTime \(line \d+\): expected a duration such as 72h or 90m \(Go's units: h, m, s\), got "7d"/,
    );
    // The operator's default, Retain, keeps the data of expired runs: no keys needed, on any storage.
    const keyless = (cleanPolicy?: string) =>
      load([
        cluster(),
        schedule({
          maxBackups: 3,
          backupTemplate: { br: { cluster: 'demo' }, s3: { provider: 'aws', bucket: 'b' }, ...(cleanPolicy && { cleanPolicy }) },
        }),
      ]).errors;
    expect(keyless()).toBe('');
    expect(keyless('Retain')).toBe('');
    for (const policy of ['Delete', 'OnFailure']) {
      expect(keyless(policy)).toMatch(
        new RegExp(
          `spec\\.backupTemplate\\.s3\\.secretName \\(line \\d+\\): required with cleanPolicy ${policy}: the controller removes expired backups from the bucket with these keys`,
        ),
      );
    }
  });

  test('retention that removes data from GCS or Azure needs the credentials the controller reads; from a local volume it is refused', () => {
    const errs = (storage: Obj, cleanPolicy?: string, own = false) =>
      load([
        cluster(),
        schedule({
          maxBackups: 3,
          ...(own && storage),
          backupTemplate: { br: { cluster: 'demo' }, ...(!own && storage), ...(cleanPolicy && { cleanPolicy }) },
        }),
      ]).errors;
    const gcs = { gcs: { projectId: 'p', bucket: 'b' } };
    expect(errs(gcs)).toBe('');
    expect(errs(gcs, 'Delete')).toMatch(
      /spec\.backupTemplate\.gcs\.secretName \(line \d+\): required with cleanPolicy Delete: the controller removes expired backups from the bucket with the service account key in this Secret's credentials/,
    );
    expect(errs(gcs, 'OnFailure', true)).toMatch(/spec\.gcs\.secretName \(line \d+\): required with cleanPolicy OnFailure/);
    expect(errs({ gcs: { ...gcs.gcs, secretName: 'gcs' } }, 'Delete')).toBe('');
    const azblob = { azblob: { container: 'c' } };
    expect(errs(azblob)).toBe('');
    expect(errs(azblob, 'Delete')).toMatch(
      /spec\.backupTemplate\.azblob\.secretName \(line \d+\): required with cleanPolicy Delete: the controller removes expired backups from the container with this Secret's AZURE_STORAGE_KEY \(and AZURE_STORAGE_ACCOUNT unless storageAccount is given\), or with a sasToken/,
    );
    expect(errs({ azblob: { ...azblob.azblob, secretName: 'az' } }, 'Delete')).toBe('');
    expect(errs({ azblob: { ...azblob.azblob, sasToken: 'sv=x' } }, 'Delete')).toMatch(
      /spec\.backupTemplate\.azblob\.storageAccount \(line \d+\): required with cleanPolicy Delete and a sasToken: the account the controller removes expired backups from \(or a secretName whose Secret holds AZURE_STORAGE_ACCOUNT\)/,
    );
    expect(errs({ azblob: { ...azblob.azblob, sasToken: 'sv=x', storageAccount: 'acct' } }, 'Delete')).toBe('');
    const local = {
      local: { prefix: 'p', volume: { name: 'nfs', nfs: { server: 'nfs', path: '/b' } }, volumeMount: { name: 'nfs', mountPath: '/b' } },
    };
    expect(errs(local)).toBe('');
    expect(errs(local, 'Delete')).toMatch(
      /spec\.backupTemplate\.cleanPolicy \(line \d+\): removing expired backups \(cleanPolicy Delete\) from local storage is not carried out yet: only from S3, GCS and Azure Blob storage/,
    );
  });

  test('retention that removes data from GCS or Azure tells the controller the storage kind, the bucket or container, and the account and SAS token it was given', () => {
    const info = (storage: Obj) => {
      const { loaded, linked, errors } = load([
        cluster(),
        schedule({ maxBackups: 2, backupTemplate: { br: { cluster: 'demo' }, cleanPolicy: 'Delete', ...storage } }),
      ]);
      if (errors) throw new Error(errors);
      const objects = renderClusters(
        loaded.clusters.map((c) => c.resolved),
        linked.operations,
      )[0].objects;
      const env = find(objects, 'Deployment', 'demo-discovery').spec.template.spec.containers[0].env as Obj[];
      const secrets = (find(objects, 'Role', 'demo-discovery').rules as Obj[])
        .filter((r) => r.resources.includes('secrets'))
        .flatMap((r) => r.resourceNames);
      return { retention: JSON.parse(env.find((e) => e.name === 'TIDB_GITOPS_CLUSTER')!.value).backupRetention.nightly, secrets };
    };
    expect(info({ gcs: { projectId: 'p', bucket: 'b/deep', prefix: 'p', secretName: 'gcs' } })).toEqual({
      retention: { maxBackups: 2, cleanPolicy: 'Delete', storageKind: 'gcs', bucket: 'b', prefix: 'deep/p', secretName: 'gcs' },
      secrets: ['gcs'],
    });
    expect(info({ azblob: { container: 'c', prefix: 'p', secretName: 'az' } })).toEqual({
      retention: { maxBackups: 2, cleanPolicy: 'Delete', storageKind: 'azblob', bucket: 'c', prefix: 'p', secretName: 'az' },
      secrets: ['az'],
    });
    expect(info({ azblob: { container: 'c', prefix: 'p', storageAccount: 'acct', sasToken: 'sv=x&sig=y' } })).toEqual({
      retention: {
        maxBackups: 2,
        cleanPolicy: 'Delete',
        storageKind: 'azblob',
        bucket: 'c',
        prefix: 'p',
        account: 'acct',
        sasToken: 'sv=x&sig=y',
      },
      secrets: [],
    });
  });

  test('with retention that removes data the controller learns the bucket and may read its Secret, and only that one', () => {
    const rendered = (cleanPolicy?: string) => {
      const s3 = {
        provider: 'ceph',
        endpoint: 'http://minio:9000',
        bucket: 'b',
        prefix: 'p',
        secretName: 's3-secret',
        forcePathStyle: true,
      };
      const { loaded, linked } = load([
        cluster(),
        schedule({ maxBackups: 2, backupTemplate: { br: { cluster: 'demo' }, s3, ...(cleanPolicy && { cleanPolicy }) } }),
      ]);
      const objects = renderClusters(
        loaded.clusters.map((c) => c.resolved),
        linked.operations,
      )[0].objects;
      const env = find(objects, 'Deployment', 'demo-discovery').spec.template.spec.containers[0].env as Obj[];
      const secrets = (find(objects, 'Role', 'demo-discovery').rules as Obj[]).filter((r) => r.resources.includes('secrets'));
      return { info: JSON.parse(env.find((e) => e.name === 'TIDB_GITOPS_CLUSTER')!.value), secrets };
    };
    const deleting = rendered('Delete');
    expect(deleting.info.backupRetention).toEqual({
      nightly: {
        maxBackups: 2,
        cleanPolicy: 'Delete',
        bucket: 'b',
        prefix: 'p',
        endpoint: 'http://minio:9000',
        provider: 'ceph',
        forcePathStyle: true,
        secretName: 's3-secret',
      },
    });
    expect(deleting.secrets).toEqual([{ apiGroups: [''], resources: ['secrets'], resourceNames: ['s3-secret'], verbs: ['get'] }]);
    // Retain, the default, removes nothing: the controller gets neither the bucket nor its keys.
    const retaining = rendered();
    expect(retaining.info.backupRetention).toEqual({ nightly: { maxBackups: 2, cleanPolicy: 'Retain' } });
    expect(retaining.secrets).toEqual([]);
  });

  test("the CRD's rules: logStop and logSubcommand exclude each other", () => {
    const { errors } = load([
      cluster(),
      {
        apiVersion: 'pingcap.com/v1alpha1',
        kind: 'Backup',
        metadata: { name: 'log', namespace: 'ns' },
        spec: {
          backupMode: 'log',
          logStop: true,
          logSubcommand: 'log-stop',
          br: { cluster: 'demo' },
          s3: { provider: 'ceph', bucket: 'b' },
        },
      },
    ]);
    expect(errors).toMatch(
      /spec\.logSubcommand \(line \d+\): Field `logStop` is the old version field, please use `logSubcommand` instead/,
    );
  });

  test('two schedules would run as one Job', () => {
    expect(load([cluster(), schedule(), schedule()]).errors).toMatch(
      /document 3: metadata\.name \(line \d+\): BackupSchedule "nightly" would run as the same Job as the BackupSchedule at in\.yaml: document 2; rename one/,
    );
  });

  test('a BR image needs a version to match', () => {
    expect(load([cluster({ tikv: undefined }), schedule()]).errors).toMatch(
      /spec\.backupTemplate\.toolImage \(line \d+\): required with this cluster: BR's version must match TiKV's, and the cluster has no TiKV/,
    );
  });
});

describe('cron expressions as a CronJob reads them', () => {
  test.each([['0 2 * * *'], ['*/15 * * * *'], ['0 0 1,15 * mon-fri'], ['5 4 * jan-mar sun'], ['@daily'], ['@every 1h30m'], ['0 0 ? * *']])(
    '%s is one',
    (s) => expect(cronProblem(s)).toBeUndefined(),
  );
  test.each([
    ['', 'expected a cron expression'],
    ['0 2 * *', 'expected 5 fields'],
    ['60 * * * *', 'minute "60": 60 is out of range 0-59'],
    ['0 0 0 * *', 'day of month "0": 0 is out of range 1-31'],
    ['0 0 * 13 *', 'month "13"'],
    ['0 0 * * 7', 'day of week "7": 7 is out of range 0-6'],
    ['0 0 * * funday', '"funday" is not a number or a name'],
    ['*/0 * * * *', 'a step of 0'],
    ['5-1 * * * *', 'range 5-1 starts after it ends'],
    ['TZ=UTC 0 2 * * *', 'time zone prefix'],
    ['@fortnightly', 'unknown descriptor'],
  ])('%j is not: %s', (s, why) => expect(cronProblem(s)).toContain(why));
});
