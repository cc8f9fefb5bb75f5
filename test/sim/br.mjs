#!/usr/bin/env node
/**
 * A BR (TiDB Backup & Restore) for tests: `br backup full|db|table` with BR's flag set, writing what
 * BR writes to an S3-protocol server (backup.lock, an SST, then backupmeta last), printing BR's summary
 * line and failing as BR fails. Behaviour follows BR v8.5 (pingcap/tidb release-8.5), file by file:
 *
 * - flags: br/cmd/br/cmd.go `DefineCommonFlags`, br/pkg/task/common.go `DefineCommonFlags`,
 *   br/pkg/task/backup.go `DefineBackupFlags`; cobra refuses an unknown flag (`unknown flag: --x`) and a
 *   bool flag takes its value only as `--flag=value`;
 * - storage URL: br/pkg/storage/parse.go `ParseBackend` (bucket = host, prefix = path without
 *   slashes, query keys lower-cased with `_` read as `-`, overriding the `--s3.*` flags); S3 path
 *   style (BR forces it, br/pkg/storage/s3.go `NewS3Storage`); credentials from the AWS SDK's chain
 *   (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`), or anonymous without them;
 * - not in use: br/pkg/backup/client.go `SetStorageAndCheckNotInUse` (an existing backupmeta is
 *   refused with BR's words), `SetLockFile` (backup.lock's exact text);
 * - layout: br/pkg/metautil/metafile.go (`backupmeta` written last, a plain protobuf
 *   `backuppb.BackupMeta`: cluster_id 1, cluster_version 2, start_version 5, end_version 6,
 *   br_version 11, version 12 = MetaV2), SSTs at `<storeID>/<region>_<epoch>_<hash>_<ts>_<cf>.sst`;
 * - version check: br/pkg/version/version.go `CheckVersionForBR` (BR >= 8.2 refuses TiKV < 8.2; a
 *   major version apart is refused), skipped with `--check-requirements=false`;
 * - output: br/pkg/summary/collector.go (`"Full Backup success summary"` with `[Size=]` and
 *   `[BackupTS=]`), on stdout as pingcap/log writes with BR_LOG_TO_TERM; on failure `Error: <message>`
 *   on stderr and exit 1 (br/cmd/br/main.go); S3 errors in aws-sdk-go v1's words, request id from
 *   `x-amz-request-id`.
 *
 * Not simulated, and refused rather than pretended: the bucket region lookup BR makes for provider
 * "" or aws (the tests' server is not AWS), storage other than S3, and contacting PD.
 *
 * What BR learns from the cluster it is told in the environment instead: `BR_SIM_TIKV_VERSION` (the
 * stores' version, default the simulator's own `BR_SIM_VERSION`, default v8.5.7).
 */
import { createHash, createHmac } from 'node:crypto';

const BR_VERSION = process.env.BR_SIM_VERSION ?? 'v8.5.7';
const LOCK_TEXT = "DO NOT DELETE\nThis file exists to remind other backup jobs won't use this path";

class BrError extends Error {}
const invalid = (what) => new BrError(`${what}: [BR:Common:ErrInvalidArgument]invalid argument`);

/** [name, type, default]; bool flags take `--x=v` only, others `--x=v` or `--x v` (cobra, pflag). */
const COMMON = {
  'log-level': ['string', 'info'], 'log-file': ['string', ''], 'log-format': ['string', 'text'], 'status-addr': ['string', ''],
  'send-credentials-to-tikv': ['bool', true], storage: ['string', ''], pd: ['strings', ['127.0.0.1:2379']], ca: ['string', ''],
  cert: ['string', ''], key: ['string', ''], ratelimit: ['uint', 0], checksum: ['bool', true], 'check-requirements': ['bool', true],
  'checksum-concurrency': ['uint', 4], 'switch-mode-interval': ['string', '5m0s'],
  's3.endpoint': ['string', ''], 's3.region': ['string', ''], 's3.storage-class': ['string', ''], 's3.sse': ['string', ''],
  's3.sse-kms-key-id': ['string', ''], 's3.acl': ['string', ''], 's3.provider': ['string', ''], 's3.role-arn': ['string', ''],
  's3.external-id': ['string', ''], 'gcs.endpoint': ['string', ''], 'gcs.storage-class': ['string', ''], 'gcs.predefined-acl': ['string', ''],
  'gcs.credentials-file': ['string', ''], 'azblob.endpoint': ['string', ''], 'azblob.account-name': ['string', ''],
  'azblob.account-key': ['string', ''], 'azblob.access-tier': ['string', ''],
  'crypter.method': ['string', 'plaintext'], 'crypter.key': ['string', ''], 'crypter.key-file': ['string', ''],
};
const BACKUP = {
  timeago: ['string', ''], backupts: ['string', ''], lastbackupts: ['uint', 0], gcttl: ['int', 300], compression: ['string', 'zstd'],
  'compression-level': ['int', 0], concurrency: ['uint', 4], 'ignore-stats': ['bool', true], 'use-backupmeta-v2': ['bool', true],
  'keyspace-name': ['string', ''], 'replica-read-label': ['string', ''],
};
const BACKUP_KINDS = {
  full: { name: 'Full Backup', flags: { filter: ['stringArray', ['*.*']], 'case-sensitive': ['bool', false], type: ['string', 'kv'] } },
  db: { name: 'Database Backup', flags: { db: ['string', ''] } },
  table: { name: 'Table Backup', flags: { db: ['string', ''], table: ['string', ''] } },
};
const SHORT = { u: 'pd', s: 'storage', L: 'log-level', c: 'send-credentials-to-tikv', f: 'filter', t: 'table' };

function parseFlags(argv, spec) {
  const values = Object.fromEntries(Object.entries(spec).map(([k, [, d]]) => [k, d]));
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('-')) { rest.push(a); continue; }
    const m = /^--?([^=]+)(?:=(.*))?$/s.exec(a);
    let name = m[1];
    if (!a.startsWith('--')) name = SHORT[name] ?? name;
    const def = spec[name];
    // cobra's words (spf13/pflag flag.go, parseLongArg and parseSingleShortArg).
    if (!def) throw new BrError(a.startsWith('--') ? `unknown flag: --${name}` : `unknown shorthand flag: '${m[1][0]}' in ${a}`);
    const [type] = def;
    let value = m[2];
    if (value === undefined) {
      if (type === 'bool') value = 'true';
      else if (i + 1 < argv.length) value = argv[++i];
      else throw new BrError(`flag needs an argument: --${name}`);
    }
    if (type === 'bool') {
      // strconv.ParseBool's spellings (pflag's boolValue.Set).
      if (!['1', 't', 'T', 'TRUE', 'true', 'True', '0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) throw new BrError(`invalid argument "${value}" for "--${name}" flag: strconv.ParseBool: parsing "${value}": invalid syntax`);
      values[name] = ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value);
    } else if (type === 'uint' || type === 'int') {
      const parser = type === 'uint' ? 'strconv.ParseUint' : 'strconv.ParseInt';
      if (!/^-?\d+$/.test(value) || (type === 'uint' && value.startsWith('-'))) throw new BrError(`invalid argument "${value}" for "--${name}" flag: ${parser}: parsing ${JSON.stringify(value)}: invalid syntax`);
      values[name] = Number(value);
    } else if (type === 'strings') {
      values[name] = value.split(',');
    } else if (type === 'stringArray') {
      values[name] = values[name] === def[1] ? [value] : [...values[name], value];
    } else {
      values[name] = value;
    }
  }
  return { values, rest };
}

/** br/pkg/storage/parse.go `ParseBackend`, for S3 (the only provider the tests' server speaks). */
function parseStorage(raw, flags) {
  if (!raw) throw new BrError('empty store is not allowed: [BR:ExternalStorage:ErrStorageInvalidConfig]invalid external storage config');
  const u = new URL(raw.replace(/\+/g, '%2B'));
  const scheme = u.protocol.replace(/:$/, '');
  if (scheme !== 's3') throw new BrError(`storage ${scheme} is not served by the test BR (S3 only)`);
  if (!u.host) throw new BrError(`please specify the bucket for s3 in ${raw}: [BR:ExternalStorage:ErrStorageInvalidConfig]invalid external storage config`);
  const options = { endpoint: flags['s3.endpoint'], region: flags['s3.region'] || 'us-east-1', provider: flags['s3.provider'] };
  for (const [k, v] of u.searchParams) {
    const key = k.toLowerCase().replace(/_/g, '-');
    if (key in options || ['access-key', 'secret-access-key', 'force-path-style'].includes(key)) options[key] = v;
  }
  if (options.endpoint && !/^[a-z]+:\/\//.test(options.endpoint)) throw new BrError(`scheme not found in endpoint: [BR:ExternalStorage:ErrStorageInvalidConfig]invalid external storage config`);
  if (!options.endpoint) throw new BrError('the test BR needs --s3.endpoint (it reaches no AWS region)');
  // With provider "" or aws, BR first asks AWS for the bucket's region (br/pkg/storage/s3.go,
  // NewS3Storage, s3manager.GetBucketRegionWithClient), which the S3 server of the tests does not
  // answer as AWS does: refuse rather than pretend.
  if (!options.provider || options.provider === 'aws') throw new BrError('the test BR does not simulate the bucket region lookup BR makes for provider aws; give --s3.provider (ceph, minio...)');
  return { bucket: u.host, prefix: decodeURIComponent(u.pathname).replace(/^\/+|\/+$/g, ''), ...options };
}

/** An S3 client signing with AWS Signature Version 4, path-style, as aws-sdk-go v1 does for BR. */
function s3Client(store) {
  const accessKey = store['access-key'] ?? process.env.AWS_ACCESS_KEY_ID;
  const secretKey = store['secret-access-key'] ?? process.env.AWS_SECRET_ACCESS_KEY;
  const base = store.endpoint.replace(/\/+$/, '');
  const key = (name) => [store.prefix, name].filter((p) => p !== '').join('/');
  async function request(method, name, body) {
    const path = `/${store.bucket}${name === undefined ? '' : `/${key(name).split('/').map(encodeURIComponent).join('/')}`}`;
    const url = new URL(base + path);
    const payload = body ?? Buffer.alloc(0);
    const hash = createHash('sha256').update(payload).digest('hex');
    const now = new Date().toISOString().replace(/[-:]|\.\d{3}/g, '');
    const headers = { host: url.host, 'x-amz-content-sha256': hash, 'x-amz-date': now };
    if (accessKey && secretKey) {
      const day = now.slice(0, 8);
      const scope = `${day}/${store.region}/s3/aws4_request`;
      const names = Object.keys(headers).sort();
      const canonical = [method, url.pathname, '', ...names.map((h) => `${h}:${headers[h]}`), '', names.join(';'), hash].join('\n');
      const toSign = ['AWS4-HMAC-SHA256', now, scope, createHash('sha256').update(canonical).digest('hex')].join('\n');
      let k = createHmac('sha256', `AWS4${secretKey}`).update(day).digest();
      for (const part of [store.region, 's3', 'aws4_request']) k = createHmac('sha256', k).update(part).digest();
      headers.authorization = `AWS4-HMAC-SHA256 Credential=${accessKey}/${scope}, SignedHeaders=${names.join(';')}, Signature=${createHmac('sha256', k).update(toSign).digest('hex')}`;
    }
    const res = await fetch(url, { method, headers, ...(body && { body }) });
    const text = Buffer.from(await res.arrayBuffer());
    return { status: res.status, body: text, requestId: res.headers.get('x-amz-request-id') ?? '' };
  }
  /** aws-sdk-go v1's error text: `<Code>: <Message>\n\tstatus code: <n>, request id: <id>`. */
  const awsError = (r) => {
    const xml = r.body.toString();
    const code = /<Code>([^<]*)<\/Code>/.exec(xml)?.[1] ?? (r.status === 403 ? 'Forbidden' : r.status === 404 ? 'NotFound' : 'Unknown');
    const message = /<Message>([^<]*)<\/Message>/.exec(xml)?.[1] ?? code.replace(/([a-z])([A-Z])/g, '$1 $2');
    return `${code}: ${message}\n\tstatus code: ${r.status}, request id: ${r.requestId}`;
  };
  return {
    uri: `s3://${store.bucket}/${store.prefix}/`,
    async exists(name) {
      const r = await request('HEAD', name);
      if (r.status === 200) return true;
      if (r.status === 404) return false;
      throw new BrError(`error occurred when checking ${name} file: ${awsError(r)}`);
    },
    async put(name, body) {
      const r = await request('PUT', name, body);
      if (r.status !== 200) throw new BrError(awsError(r));
    },
  };
}

/** Protobuf wire format: what `backuppb.BackupMeta` needs (varints and length-delimited fields). */
function varint(n) {
  const out = [];
  let v = BigInt(n);
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return Buffer.from(out);
}
const field = (no, type) => varint((no << 3) | type);
const uintField = (no, n) => Buffer.concat([field(no, 0), varint(n)]);
const bytesField = (no, s) => { const b = Buffer.from(s); return Buffer.concat([field(no, 2), varint(b.length), b]); };

function versionCheck(tikv) {
  const parse = (v) => /^v?(\d+)\.(\d+)\.(\d+)/.exec(v)?.slice(1).map(Number);
  const br = parse(BR_VERSION);
  const kv = parse(tikv);
  if (!kv) throw new BrError(`strconv.ParseInt: TiKV node 127.0.0.1:20160 version ${tikv} is invalid`);
  const wrap = (m) => new BrError(`running BR in incompatible version of cluster, if you believe it's OK, use --check-requirements=false to skip.: ${m}: [BR:Common:ErrVersionMismatch]version mismatch`);
  if (br[0] < kv[0] || br[0] - kv[0] > 1) throw wrap(`TiKV node 127.0.0.1:20160 version ${tikv} and BR ${BR_VERSION} major version mismatch, please use the same version of BR`);
  const atLeast82 = (v) => v[0] > 8 || (v[0] === 8 && v[1] >= 2);
  if (atLeast82(br) && !atLeast82(kv)) throw wrap(`TiKV node 127.0.0.1:20160 version ${tikv} and BR ${BR_VERSION} version mismatch, please use the same version of BR`);
}

const stamp = () => {
  const d = new Date();
  const p = (n, w = 2) => String(n).padStart(w, '0');
  return `[${d.getUTCFullYear()}/${p(d.getUTCMonth() + 1)}/${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}.${p(d.getUTCMilliseconds(), 3)} +00:00]`;
};
// With BR_LOG_TO_TERM and no log file, pingcap/log writes to stdout (log.go, InitLogger).
const log = (level, msg, fields = {}) => process.stdout.write(`${stamp()} [${level}] [collector.go:77] [${JSON.stringify(msg)}]${Object.entries(fields).map(([k, v]) => ` [${k}=${v}]`).join('')}\n`);

async function backup(kind, argv) {
  const spec = BACKUP_KINDS[kind];
  if (!spec) throw new BrError(`unknown command "${kind}" for "br backup"`);
  const { values, rest } = parseFlags(argv, { ...COMMON, ...BACKUP, ...spec.flags });
  if (rest.length > 0) throw new BrError(`unknown command "${rest[0]}" for "br backup ${kind}"`);
  if (kind !== 'full' && !values.db) throw invalid('empty database name is not allowed');
  if (kind === 'table' && !values.table) throw invalid('empty table name is not allowed');
  if (values['check-requirements']) versionCheck(process.env.BR_SIM_TIKV_VERSION ?? BR_VERSION);
  const s3 = s3Client(parseStorage(values.storage, values));
  if (await s3.exists('backupmeta')) {
    throw invalid(`backup meta file exists in ${s3.uri}/backupmeta, there may be some backup files in the path already, please specify a correct backup directory!`);
  }
  await s3.put('backup.lock', Buffer.from(LOCK_TEXT));
  const backupTs = values.backupts && /^\d+$/.test(values.backupts) ? BigInt(values.backupts) : BigInt(Date.now()) << 18n;
  const sst = Buffer.from(`simulated SST of ${values.pd.join(',')} at ${backupTs}`);
  await s3.put(`1/2_3_${createHash('sha256').update(sst).digest('hex').slice(0, 16)}_${Date.now()}_write.sst`, sst);
  const meta = Buffer.concat([
    // PD's cluster version as its HTTP API gives it, quoted (task/backup.go, RunBackup).
    uintField(1, 7371123456789012345n), bytesField(2, JSON.stringify((process.env.BR_SIM_TIKV_VERSION ?? BR_VERSION).replace(/^v/, ''))), uintField(5, values.lastbackupts), uintField(6, backupTs),
    bytesField(11, `BR\nRelease Version: ${BR_VERSION}`), uintField(12, values['use-backupmeta-v2'] ? 1 : 0),
  ]);
  await s3.put('backupmeta', meta);
  const size = sst.length + meta.length;
  log('INFO', `${spec.name} success summary`, { 'total-ranges': 1, 'ranges-succeed': 1, 'ranges-failed': 0, 'total-take': '1.2s', 'total-kv': 1, 'backup-data-size(after-compressed)': `${size}B`, Size: size, BackupTS: backupTs });
}

async function main(argv) {
  const [command, sub, ...rest] = argv;
  if (command === 'backup') return backup(sub, rest);
  throw new BrError(`unknown command "${command}" for "br"`);
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (e) => {
    const message = e instanceof BrError ? e.message : `internal error: ${e?.stack ?? e}`;
    process.stderr.write(`Error: ${message}\n`);
    log('ERROR', 'br failed', { error: JSON.stringify(message) });
    process.exit(1);
  },
);
