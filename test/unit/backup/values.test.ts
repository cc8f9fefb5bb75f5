/**
 * Values beside a cluster that Kubernetes, S3, BR or TiDB would refuse at run time, refused at render
 * time with the file, document, path and line (issue 49): storage prefixes BR's URL parser would read
 * otherwise, times BR refuses, bucket names, endpoints, images, BR durations and counts, and SQL only
 * the mysql client understands. No such value crashes render, diff or the Argo CD plugin.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { loadInputs } from '../../../src/backup/companions';
import { linkOperations } from '../../../src/backup/link';
import { argocdMain } from '../../../src/cli/argocd';
import { diffMain } from '../../../src/cli/diff';
import { renderCommand } from '../../../src/cli/render';
import { parseTs } from '../../../src/base/tso';
import { splitSql } from '../../../src/base/sql';
import { cluster, type Obj } from '../../support/render';

const S3 = { provider: 'aws', region: 'us-west-2', bucket: 'backups', prefix: 'demo', secretName: 's3-secret' };

function backup(spec: Obj = {}): Obj {
  return {
    apiVersion: 'pingcap.com/v1alpha1',
    kind: 'Backup',
    metadata: { name: 'b', namespace: 'ns' },
    spec: { br: { cluster: 'demo' }, s3: S3, ...spec },
  };
}

function logBackup(spec: Obj = {}): Obj {
  return backup({ backupMode: 'log', ...spec });
}

function restore(spec: Obj = {}): Obj {
  return {
    apiVersion: 'pingcap.com/v1alpha1',
    kind: 'Restore',
    metadata: { name: 'r', namespace: 'ns' },
    spec: { br: { cluster: 'demo' }, s3: S3, ...spec },
  };
}

function pitr(restoredTs: string): Obj {
  return restore({ restoreMode: 'pitr', pitrRestoredTs: restoredTs, pitrFullBackupStorageProvider: { s3: S3 } });
}

function schedule(spec: Obj = {}): Obj {
  return {
    apiVersion: 'pingcap.com/v1alpha1',
    kind: 'BackupSchedule',
    metadata: { name: 'nightly', namespace: 'ns' },
    spec: { schedule: '0 2 * * *', backupTemplate: { br: { cluster: 'demo' }, s3: S3 }, ...spec },
  };
}

function initializer(initSql: string): Obj {
  return {
    apiVersion: 'pingcap.com/v1alpha1',
    kind: 'TidbInitializer',
    metadata: { name: 'init', namespace: 'ns' },
    spec: { image: 'tnir/mysqlclient', cluster: { name: 'demo' }, initSql },
  };
}

const yamlOf = (docs: Obj[]) => docs.map((d) => stringify(d)).join('---\n');

/** The error lines of loading and linking a cluster and `doc`. */
function errorsOf(doc: Obj): string {
  const loaded = loadInputs(yamlOf([cluster({}, { namespace: 'ns' }), doc]), 'in.yaml');
  const linked = linkOperations(loaded.clusters, loaded.documents);
  return [...loaded.errors.map((e) => e.message), ...linked.errors].join('\n');
}

/** Expects one error at `path` of document 2, with its line, matching `message`. */
function expectRefused(doc: Obj, path: string, message: RegExp | string): void {
  const errors = errorsOf(doc);
  const at = `in.yaml: document 2: ${path} (line `;
  const line = errors.split('\n').find((l) => l.startsWith(at));
  if (!line) throw new Error(`no error at ${path}; got:\n${errors || '(none)'}`);
  if (typeof message === 'string') expect(line).toContain(message);
  else expect(line).toMatch(message);
}

const accepted = (doc: Obj) => expect(errorsOf(doc)).toBe('');

describe('storage prefixes read as one path by BR, the run script and retention (class 8)', () => {
  test.each([
    ['a?b', 'spec.s3.prefix'],
    ['a#b', 'spec.s3.prefix'],
    ['100%', 'spec.s3.prefix'],
    ['%2e%2e/x', 'spec.s3.prefix'],
    ['x/{run}', 'spec.s3.prefix'],
    ['say "hi"', 'spec.s3.prefix'],
    ['a\\b', 'spec.s3.prefix'],
    ['tab\there', 'spec.s3.prefix'],
    ['a//b', 'spec.s3.prefix'],
  ])('fails on prefix %j', (prefix, path) => {
    expectRefused(backup({ s3: { ...S3, prefix } }), path, /BR|run|URL|character|folder/);
  });

  test('fails on such characters in the bucket field, in path, for GCS, Azure and a local volume', () => {
    expectRefused(backup({ s3: { ...S3, bucket: 'backups/a?b', prefix: undefined } }), 'spec.s3.bucket', '"?"');
    expectRefused(backup({ s3: { provider: 'aws', path: 's3://backups/a#b' } }), 'spec.s3.path', '"#"');
    expectRefused(backup({ s3: { provider: 'aws', path: 'Bad_Bucket/a' } }), 'spec.s3.path', 'not a bucket name');
    expectRefused(backup({ s3: undefined, gcs: { projectId: 'p', bucket: 'backups', prefix: 'x%41' } }), 'spec.gcs.prefix', '"%"');
    expectRefused(backup({ s3: undefined, azblob: { container: 'backups', prefix: 'x?y' } }), 'spec.azblob.prefix', '"?"');
    const local = {
      volume: { name: 'nfs', nfs: { server: 'nfs.example.com', path: '/' } },
      volumeMount: { name: 'nfs', mountPath: '/nfs' },
    };
    expectRefused(backup({ s3: undefined, local: { ...local, prefix: 'a#b' } }), 'spec.local.prefix', '"#"');
    expectRefused(
      backup({ s3: undefined, local: { ...local, volumeMount: { name: 'nfs', mountPath: '/nfs?x' } } }),
      'spec.local.volumeMount.mountPath',
      '"?"',
    );
  });

  test('takes the characters that round-trip: letters, digits, - _ . + = @ : , ~ ! space', () => {
    accepted(backup({ s3: { ...S3, prefix: 'team-a/db_1/v1.2+x=y@z:w,~!/with space' } }));
    accepted(backup({ s3: { provider: 'ceph', endpoint: 'http://minio:9000', bucket: 'backups', prefix: 'a/{b}' } }));
  });
});

describe('times as BR reads them (classes 9 and 11)', () => {
  test.each([
    ['2026-02-30 00:00:00+00:00', 'no day 30 in February'],
    ['2026-02-29 00:00:00Z', 'no day 29 in February'],
    ['2026-13-01 00:00:00Z', 'no month 13'],
    ['2026-05-01 24:00:00Z', 'hour'],
    ['2026-05-01 10:60:00Z', 'minute'],
    ['2026-05-01 10:00:60Z', 'second'],
    ['1969-12-31 23:59:59Z', '1970'],
    ['2038-01-19 03:14:08Z', '2038'],
    ['2026-05-01 10:00:00+99:99', 'zone'],
    ['2026-05-01 10:00:00+14:30', 'zone'],
    ['2026-05-01 10:00:00-00:00', 'zone'],
    ['18446744073709551616', '64'],
  ])('logTruncateUntil %j is refused (%s)', (ts, why) => {
    expectRefused(logBackup({ logTruncateUntil: ts }), 'spec.logTruncateUntil', why);
  });

  test.each([['2026-13-01 00:00:00Z'], ['2026-05-01 10:00:00+99:99'], ['2026-02-30 00:00:00+08:00']])(
    'in a logBackupTemplate, %j is refused without a crash',
    (ts) => {
      expectRefused(
        schedule({ logBackupTemplate: { backupMode: 'log', br: { cluster: 'demo' }, s3: S3, logTruncateUntil: ts } }),
        'spec.logBackupTemplate.logTruncateUntil',
        /./,
      );
    },
  );

  test('pitrRestoredTs of month 13, and commitTs of a snapshot backup on February 30', () => {
    expectRefused(pitr('2026-13-01 00:00:00+08:00'), 'spec.pitrRestoredTs', 'no month 13');
    expectRefused(backup({ commitTs: '2026-02-30 00:00:00' }), 'spec.commitTs', 'no day 30 in February');
  });

  test('valid times and TSOs are read as BR reads them', () => {
    expect(parseTs('2026-05-11 01:42:23+08:00', 'required')).toEqual({
      tso: (BigInt(Date.UTC(2026, 4, 10, 17, 42, 23)) << 18n).toString(),
    });
    expect(parseTs('2026-05-11T01:42:23.5Z', 'required').tso).toBe((BigInt(Date.UTC(2026, 4, 11, 1, 42, 23, 500)) << 18n).toString());
    expect(parseTs('2024-02-29 00:00:00+0530', 'required').tso).toBe((BigInt(Date.UTC(2024, 1, 28, 18, 30)) << 18n).toString());
    expect(parseTs('18446744073709551615', 'required')).toEqual({ tso: '18446744073709551615' });
    expect(parseTs('2026-05-11 01:42:23', 'required').problem).toMatch(/zone/);
    expect(parseTs('2026-05-11 01:42:23', 'optional').problem).toBeUndefined();
    accepted(logBackup({ logTruncateUntil: '2026-05-11 01:42:23+14:00' }));
    accepted(pitr('2026-05-11 01:42:23-12:00'));
  });

  describe('no crash in the commands', () => {
    const dir = mkdtempSync(join(tmpdir(), 'backup-values-'));
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, yamlOf([cluster({}, { namespace: 'ns' }), logBackup({ logTruncateUntil: '2026-13-01 00:00:00+08:00' })]));
    const good = join(dir, 'good.yaml');
    writeFileSync(good, yamlOf([cluster({}, { namespace: 'ns' })]));
    const io = () => {
      const out = { stdout: '', stderr: '' };
      return {
        out,
        io: {
          stdout: (s: string) => (out.stdout += s),
          stderr: (s: string) => (out.stderr += s),
          readStdin: () => '',
          env: { ARGOCD_ENV_PATHS: 'bad.yaml', KUBE_VERSION: '1.33.2' },
        },
      };
    };

    test('render reports the error', () => {
      const { out, io: i } = io();
      expect(renderCommand({ paths: [bad] }, i)).toBe(1);
      expect(out.stderr).toMatch(/spec\.logTruncateUntil \(line \d+\): .*no month 13/);
    });

    test('diff reports the error', () => {
      const { out, io: i } = io();
      expect(diffMain([good, bad], i)).toBe(1);
      expect(out.stderr).toMatch(/spec\.logTruncateUntil \(line \d+\): .*no month 13/);
    });

    test('argocd generate reports the error', () => {
      const { out, io: i } = io();
      const cwd = process.cwd();
      process.chdir(dir);
      try {
        expect(argocdMain(['generate'], i)).toBe(1);
      } finally {
        process.chdir(cwd);
      }
      expect(out.stdout).toBe('');
      expect(out.stderr).toMatch(/spec\.logTruncateUntil \(line \d+\): .*no month 13/);
    });
  });
});

describe('values that would fail at run time (class 13)', () => {
  test('an S3 endpoint without a scheme, or with white space', () => {
    expectRefused(backup({ s3: { ...S3, provider: 'ceph', endpoint: 'minio:9000' } }), 'spec.s3.endpoint', 'scheme');
    expectRefused(backup({ s3: { ...S3, provider: 'ceph', endpoint: 'http://min io:9000' } }), 'spec.s3.endpoint', 'white space');
    expectRefused(backup({ s3: { ...S3, provider: 'ceph', endpoint: 'http://minio:9000/ x' } }), 'spec.s3.endpoint', 'white space');
  });

  test.each([
    ['a..b', 'adjacent'],
    ['a'.repeat(70), '63'],
    ['Backups', 'lowercase'],
    ['my_bucket', 'lowercase'],
    ['-ab', 'start'],
    ['192.168.1.10', 'IP address'],
    ['xn--abc', 'xn--'],
  ])('AWS refuses bucket %j', (bucket, why) => {
    expectRefused(backup({ s3: { ...S3, bucket } }), 'spec.s3.bucket', why);
  });

  test('S3-compatible stores keep their own, looser rules; GCS and Azure have theirs', () => {
    accepted(backup({ s3: { ...S3, provider: 'ceph', endpoint: 'http://rgw:7480', bucket: 'Legacy_Bucket' } }));
    expectRefused(
      backup({ s3: { ...S3, provider: 'ceph', endpoint: 'http://rgw:7480', bucket: 'a'.repeat(256) } }),
      'spec.s3.bucket',
      'not a bucket name',
    );
    expectRefused(backup({ s3: undefined, gcs: { projectId: 'p', bucket: 'Upper' } }), 'spec.gcs.bucket', 'lowercase');
    accepted(backup({ s3: undefined, gcs: { projectId: 'p', bucket: 'my_bucket.example.com' } }));
    expectRefused(backup({ s3: undefined, azblob: { container: 'a--b' } }), 'spec.azblob.container', '"--"');
    expectRefused(backup({ s3: undefined, azblob: { container: 'my_container' } }), 'spec.azblob.container', 'lowercase');
  });

  test.each([
    ['Pingcap/br:v8.5.0', 'lowercase'],
    ['pingcap/br:v8.5.0 ', 'white space'],
    ['pingcap/ br', 'white space'],
    ['pingcap/br:-bad', 'tag'],
  ])('toolImage %j', (toolImage, why) => {
    expectRefused(backup({ toolImage }), 'spec.toolImage', why);
  });

  test("the kubelet's image rule is the one a TidbCluster's images follow too", () => {
    const loaded = loadInputs(yamlOf([cluster({ helper: { image: 'library/BusyBox:1.36' } })]), 'in.yaml');
    expect(loaded.errors.map((e) => e.message).join('\n')).toMatch(/in\.yaml: document 1: spec\.helper\.image \(line \d+\): .*upper case/);
  });

  test('a good toolImage is taken', () => {
    accepted(backup({ toolImage: 'registry.example.com:5000/pingcap/br:v8.5.0' }));
    accepted(backup({ toolImage: 'pingcap/br@sha256:' + 'a'.repeat(64) }));
  });

  test('timeAgo is a Go duration, not negative; concurrency and rateLimit are counts BR takes', () => {
    expectRefused(backup({ br: { cluster: 'demo', timeAgo: '1d' } }), 'spec.br.timeAgo', 'duration');
    expectRefused(backup({ br: { cluster: 'demo', timeAgo: '-1h' } }), 'spec.br.timeAgo', 'negative');
    accepted(backup({ br: { cluster: 'demo', timeAgo: '1h30m' } }));
    expectRefused(backup({ br: { cluster: 'demo', concurrency: -4 } }), 'spec.br.concurrency', 'expected');
    expectRefused(restore({ br: { cluster: 'demo', rateLimit: -1 } }), 'spec.br.rateLimit', 'expected');
    expectRefused(
      schedule({ backupTemplate: { br: { cluster: 'demo', concurrency: -4 }, s3: S3 } }),
      'spec.backupTemplate.br.concurrency',
      'expected',
    );
    accepted(backup({ br: { cluster: 'demo', concurrency: 8, rateLimit: 0 } }));
  });

  test('initSql with the mysql client commands \\G or a bare DELIMITER', () => {
    expectRefused(initializer('SELECT 1\\G'), 'spec.initSql', '\\G');
    expectRefused(initializer('SELECT 1;\nDELIMITER'), 'spec.initSql', 'DELIMITER');
    expectRefused(initializer('DELIMITER;'), 'spec.initSql', 'DELIMITER');
    expect(splitSql("SELECT 'a\\Gb', \\N; -- \\G\nSELECT `x\\G`").problem).toBeUndefined();
    expect(splitSql('SELECT 1 \\g').problem).toBe('line 1: \\g is a command of the mysql client, not SQL; end each statement with ;');
  });
});
