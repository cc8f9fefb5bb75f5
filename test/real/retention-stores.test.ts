/**
 * Retention on Google Cloud Storage and Azure Blob Storage, against real emulators on loopback:
 * fake-gcs-server (its tokens checked by a loopback token endpoint, test/support/google-token-server.ts)
 * and Azurite (Shared Key and SAS checked by the emulator). The clients list a run's folder page by
 * page and delete exactly its objects; wrong credentials are errors that say so; and a pass of the
 * controller's BackupRunRecorder, with the settings the renderer gives it, removes an expired run's
 * folder on each provider and nothing beside it.
 */
import { stringify } from 'yaml';
import { linkOperations } from '../../src/backup/link';
import { loadInputs } from '../../src/backup/companions';
import { buildModel, compareModels } from '../../src/diff';
import { loadManifests } from '../../src/diff/load';
import { AzureBlobClient } from '../../src/controller/clients/azure-blob';
import { openBackupStorage } from '../../src/controller/clients/backup-storage';
import { GcsClient } from '../../src/controller/clients/gcs';
import { GoogleTokenSource, parseServiceAccountKey } from '../../src/controller/clients/gcs-auth';
import { KubeError } from '../../src/controller/clients/kube-errors';
import { parseClusterInfo } from '../../src/controller/model/cluster';
import { BackupRunRecorder } from '../../src/controller/reconcile/backup-runs';
import type { BackupRun } from '../../src/controller/records/backup-runs';
import { StatusRecords } from '../../src/controller/records/store';
import { Logger } from '../../src/controller/runtime/log';
import { renderClusters } from '../../src/render/render';
import { accountSas, AZURITE_ACCOUNT, AZURITE_KEY, startAzurite, type Azurite } from '../support/azurite';
import { startFakeGcs, type FakeGcs } from '../support/fake-gcs';
import { rsaKeyPair, startGoogleAuth, type GoogleAuth } from '../support/google-token-server';
import { cluster, find, type Obj } from '../support/render';
import { AZURITE, FAKE_GCS_SERVER, requires } from '../support/requires';

jest.setTimeout(60_000);

/** A run's folder, and one whose name only starts like it: listing by the folder must never reach the second. */
const FOLDER = 'p/c-pd.ns-2379-2026-01-01t00-00-00/';
const SIBLING = 'p/c-pd.ns-2379-2026-01-01t00-00-000/';
const IN_FOLDER = [
  'backupmeta',
  'backup.lock',
  '1/a_write.sst',
  '1/a_default.sst',
  '2/b_write.sst',
  '2/b_default.sst',
  'with space+plus.sst',
]
  .map((k) => FOLDER + k)
  .sort();
const BESIDE = [`${SIBLING}backupmeta`, 'p/by-hand/backupmeta', 'p/c-pd.ns-2379-2026-01-01t00-00-00'].sort();

const gcsGate = requires(FAKE_GCS_SERVER);
gcsGate.describe('the GCS client, against fake-gcs-server and a token endpoint that checks the JWT', () => {
  let gcs: FakeGcs;
  let auth: GoogleAuth;
  let endpoint: string;
  beforeAll(async () => {
    [gcs, auth] = await Promise.all([startFakeGcs(['bk']), startGoogleAuth()]);
    endpoint = await auth.front(gcs.endpoint);
  });
  afterAll(async () => {
    await gcs?.stop();
    await auth?.stop();
  });
  const tokens = (credentials = auth.credentials(), now?: () => number) =>
    new GoogleTokenSource(parseServiceAccountKey(credentials, 'the credentials'), { ...(now && { now }), retry: { baseMs: 1 } });

  test('lists a folder page by page and deletes exactly its objects, never a sibling folder of a longer name; one token serves them all', async () => {
    for (const key of [...IN_FOLDER, ...BESIDE]) await gcs.put('bk', key);
    const before = auth.requests;
    const client = new GcsClient({ bucket: 'bk', endpoint }, tokens(), { pageSize: 3 });
    const listed = (await client.list(FOLDER)).sort();
    expect(listed).toEqual(IN_FOLDER);
    await client.delete(listed);
    expect(await client.list(FOLDER)).toEqual([]);
    expect(await gcs.names('bk', 'p/')).toEqual(BESIDE);
    // Deleting what is already gone is no error: a removal cut short is finished next pass.
    await client.delete(listed.slice(0, 2));
    expect(auth.requests - before).toBe(1);
  });

  test('a token is kept until five minutes before it expires, then fetched anew', async () => {
    auth.expiresIn = 600;
    let clock = Date.now() - 10 * 60_000;
    try {
      const source = tokens(auth.credentials(), () => clock);
      const first = await source.token();
      clock += 4 * 60_000;
      expect(await source.token()).toBe(first);
      clock += 61_000;
      const second = await source.token();
      expect(second).not.toBe(first);
      expect(auth.issued).toContain(second);
    } finally {
      auth.expiresIn = 3600;
    }
  });

  test('fails with wrong credentials, saying why', async () => {
    const other = auth.credentials({ privateKey: rsaKeyPair().privateKey });
    await expect(new GcsClient({ bucket: 'bk', endpoint }, tokens(other)).list(FOLDER)).rejects.toThrow(
      `could not get a token for retention@test-project.iam.gserviceaccount.com from ${auth.tokenUri}: invalid_grant: Invalid JWT Signature.`,
    );
    await expect(new GcsClient({ bucket: 'bk', endpoint }, { token: async () => 'not-issued' }).list(FOLDER)).rejects.toThrow(
      'GET gcs://bk: HTTP 401: Invalid Credentials',
    );
    await expect(new GcsClient({ bucket: 'nowhere', endpoint }, tokens()).list(FOLDER)).rejects.toThrow(/^GET gcs:\/\/nowhere: HTTP 404/);
    expect(() => parseServiceAccountKey('{"type":"authorized_user","refresh_token":"x"}', 'the credentials in the Secret gcs')).toThrow(
      'the credentials in the Secret gcs are of type "authorized_user": retention reads a service account key (type service_account), the kind BR\'s --gcs.credentials-file reads',
    );
    expect(() => parseServiceAccountKey('{"type":"service_account","client_email":"a@b"}', 'the credentials')).toThrow(
      'the credentials: the service account key has no private_key',
    );
    expect(() => parseServiceAccountKey('not json', 'the credentials')).toThrow(
      'the credentials are not JSON: expected a service account key file',
    );
  });
});

const azureGate = requires(AZURITE);
azureGate.describe('the Azure Blob client, against Azurite', () => {
  let azurite: Azurite;
  beforeAll(async () => {
    azurite = await startAzurite(['bkt', 'sas']);
  });
  afterAll(() => azurite?.stop());
  const target = (container = 'bkt') => ({ account: AZURITE_ACCOUNT, container, endpoint: azurite.endpoint });

  test('lists a folder page by page with a shared key and deletes exactly its objects, never a sibling folder of a longer name', async () => {
    for (const key of [...IN_FOLDER, ...BESIDE]) await azurite.put('bkt', key);
    const client = new AzureBlobClient(target(), { sharedKey: AZURITE_KEY }, { pageSize: 3 });
    const listed = (await client.list(FOLDER)).sort();
    expect(listed).toEqual(IN_FOLDER);
    await client.delete(listed);
    expect(await client.list(FOLDER)).toEqual([]);
    expect(await azurite.names('bkt', 'p/')).toEqual(BESIDE);
    await client.delete(listed.slice(0, 2));
  });

  test('with a SAS token instead: listed and deleted the same way', async () => {
    for (const key of [...IN_FOLDER, ...BESIDE]) await azurite.put('sas', key);
    const client = new AzureBlobClient(
      target('sas'),
      { sasToken: `?${accountSas('rld', new Date(Date.now() + 3_600_000))}` },
      { pageSize: 2 },
    );
    const listed = (await client.list(FOLDER)).sort();
    expect(listed).toEqual(IN_FOLDER);
    await client.delete(listed);
    expect(await azurite.names('sas', 'p/')).toEqual(BESIDE);
  });

  test('fails with wrong credentials, saying why', async () => {
    await azurite.put('bkt', `${FOLDER}backupmeta`);
    const wrongKey = Buffer.alloc(64, 7).toString('base64');
    await expect(new AzureBlobClient(target(), { sharedKey: wrongKey }).list(FOLDER)).rejects.toThrow(
      /^GET azure:\/\/bkt: \w+: Server failed to authenticate the request\. Make sure the value of the Authorization header is formed correctly/,
    );
    const readOnly = new AzureBlobClient(target(), { sasToken: accountSas('rl', new Date(Date.now() + 3_600_000)) });
    expect(await readOnly.list(FOLDER)).toEqual([`${FOLDER}backupmeta`]);
    await expect(readOnly.delete([`${FOLDER}backupmeta`])).rejects.toThrow(/^DELETE azure:\/\/bkt: AuthorizationPermissionMismatch/);
    const expired = new AzureBlobClient(target(), { sasToken: accountSas('rld', new Date(Date.now() - 60_000)) });
    await expect(expired.list(FOLDER)).rejects.toThrow(/^GET azure:\/\/bkt: \w+: Server failed to authenticate the request/);
    await expect(new AzureBlobClient(target('nowhere'), { sharedKey: AZURITE_KEY }).list(FOLDER)).rejects.toThrow(
      /^GET azure:\/\/nowhere: ContainerNotFound/,
    );
    expect(await azurite.names('bkt', FOLDER)).toEqual([`${FOLDER}backupmeta`]);
  });
});

describe('the credentials retention reads from the storage Secret', () => {
  const access = (secrets: Record<string, Record<string, string>>) => ({
    bucketKeys: async () => ({ accessKey: 'a', secretKey: 'b' }),
    secretData: async (name: string) =>
      secrets[name] ? Object.fromEntries(Object.entries(secrets[name]).map(([k, v]) => [k, Buffer.from(v)])) : undefined,
  });
  const gcs = { cleanPolicy: 'Delete' as const, maxBackups: 1, storageKind: 'gcs' as const, bucket: 'b', prefix: 'p', secretName: 'gcs' };
  const azure = {
    cleanPolicy: 'Delete' as const,
    maxBackups: 1,
    storageKind: 'azblob' as const,
    bucket: 'c',
    prefix: 'p',
    secretName: 'az',
  };

  test('GCS: the Secret and its credentials key must be there', async () => {
    await expect(openBackupStorage(gcs, access({}))).rejects.toThrow('the Secret gcs does not exist');
    await expect(openBackupStorage(gcs, access({ gcs: { other: 'x' } }))).rejects.toThrow('the Secret gcs has no credentials');
    await expect(openBackupStorage(gcs, access({ gcs: { credentials: '{"type":"external_account"}' } }))).rejects.toThrow(
      'the credentials in the Secret gcs are of type "external_account"',
    );
  });

  test('Azure: the account from the storage or the Secret; a SAS token, else the shared key; Azure AD alone is refused by name', async () => {
    await expect(openBackupStorage(azure, access({ az: { AZURE_STORAGE_KEY: 'k' } }))).rejects.toThrow(
      'the Secret az has no AZURE_STORAGE_ACCOUNT, and the storage names no storageAccount',
    );
    await expect(openBackupStorage(azure, access({ az: { AZURE_STORAGE_ACCOUNT: 'acct' } }))).rejects.toThrow(
      'the Secret az has no AZURE_STORAGE_KEY',
    );
    await expect(
      openBackupStorage(
        azure,
        access({ az: { AZURE_STORAGE_ACCOUNT: 'acct', AZURE_CLIENT_ID: 'i', AZURE_CLIENT_SECRET: 's', AZURE_TENANT_ID: 't' } }),
      ),
    ).rejects.toThrow(
      "the Secret az holds Azure AD client credentials (AZURE_CLIENT_ID, AZURE_CLIENT_SECRET, AZURE_TENANT_ID), which retention does not use yet: add the account's AZURE_STORAGE_KEY to it, or give the storage a sasToken",
    );
    await expect(
      openBackupStorage(azure, access({ az: { AZURE_STORAGE_ACCOUNT: 'acct', AZURE_STORAGE_KEY: 'k' } })),
    ).resolves.toBeInstanceOf(AzureBlobClient);
    const { secretName: _none, ...bySas } = azure;
    await expect(openBackupStorage({ ...bySas, account: 'acct', sasToken: 'sv=x' }, access({}))).resolves.toBeInstanceOf(AzureBlobClient);
    await expect(openBackupStorage({ ...bySas, sasToken: 'sv=x' }, access({}))).rejects.toThrow(
      'the storage names no storageAccount and no Secret',
    );
  });
});

describe('the retention settings the controller reads', () => {
  const parse = (policy: Obj) => () =>
    parseClusterInfo(
      JSON.stringify({
        name: 'demo',
        backupSchedules: ['nightly'],
        backupRetention: { nightly: { maxBackups: 1, cleanPolicy: 'Delete', bucket: 'c', prefix: 'p', ...policy } },
      }),
      'ns',
    );
  test('a storage kind of s3, gcs or azblob; a Secret, or on Azure a SAS token with its account', () => {
    expect(parse({ storageKind: 'azblob', account: 'acct', sasToken: 'sv=x' })().backupRetention?.nightly).toMatchObject({
      storageKind: 'azblob',
      account: 'acct',
      sasToken: 'sv=x',
    });
    expect(parse({ storageKind: 'gcs', secretName: 'gcs' })().backupRetention?.nightly).toMatchObject({
      storageKind: 'gcs',
      secretName: 'gcs',
    });
    expect(parse({ storageKind: 'azblob', sasToken: 'sv=x' })).toThrow(
      'TIDB_GITOPS_CLUSTER.backupRetention: nightly: expected one of maxBackups and maxReservedSeconds',
    );
    expect(parse({ storageKind: 'gcs', sasToken: 'sv=x', account: 'acct' })).toThrow(
      '(on Azure, sasToken and account may stand for secretName)',
    );
    expect(parse({ storageKind: 'local', secretName: 's' })).toThrow('a storageKind of s3, gcs or azblob');
  });
});

describe('diff: retention that starts removing data names the storage as BR does', () => {
  /** The backup risks of giving the schedule on `storage` maxBackups 3 with cleanPolicy Delete. */
  function risks(storage: Obj): string[] {
    const doc = (spec: Obj) => ({
      apiVersion: 'pingcap.com/v1alpha1',
      kind: 'BackupSchedule',
      metadata: { name: 'nightly', namespace: 'ns' },
      spec: { schedule: '@daily', backupTemplate: { br: { cluster: 'demo' }, cleanPolicy: 'Delete', ...storage }, ...spec },
    });
    const model = (docs: Obj[]) =>
      buildModel(loadManifests([{ file: 'in.yaml', text: docs.map((d) => stringify(d)).join('---\n'), explicit: true }]).objects);
    return compareModels(model([cluster(), doc({})]), model([cluster(), doc({ maxBackups: 3 })]))
      .clusters.flatMap((c) => c.risks)
      .filter((r) => r.id === 'backup-retention')
      .map((r) => r.message);
  }

  test('gcs://bucket/prefix/ and azure://container/prefix/', () => {
    expect(risks({ gcs: { projectId: 'p', bucket: 'b', prefix: 'p', secretName: 'gcs' } })).toEqual([
      expect.stringContaining('from gcs://b/p/ for good'),
    ]);
    expect(risks({ azblob: { container: 'c', prefix: 'p', secretName: 'az' } })).toEqual([
      expect.stringContaining('from azure://c/p/ for good'),
    ]);
  });
});

/** The controller's settings as the renderer writes them for a schedule on `storage`, its endpoint set to the emulator's. */
function settingsFor(storage: Obj, endpoint: string) {
  const doc = {
    apiVersion: 'pingcap.com/v1alpha1',
    kind: 'BackupSchedule',
    metadata: { name: 'nightly', namespace: 'ns' },
    spec: { schedule: '0 2 * * *', maxBackups: 1, backupTemplate: { br: { cluster: 'demo' }, cleanPolicy: 'Delete', ...storage } },
  };
  const loaded = loadInputs([cluster(), doc].map((d) => stringify(d)).join('---\n'), 'in.yaml', {});
  const linked = linkOperations(loaded.clusters, loaded.documents);
  if (loaded.errors.length + linked.errors.length > 0)
    throw new Error([...loaded.errors.map((e) => e.message), ...linked.errors].join('\n'));
  const objects = renderClusters(
    loaded.clusters.map((c) => c.resolved),
    linked.operations,
  )[0].objects;
  const env = find(objects, 'Deployment', 'demo-discovery').spec.template.spec.containers[0].env as Obj[];
  const info = JSON.parse(env.find((e) => e.name === 'TIDB_GITOPS_CLUSTER')!.value);
  info.backupRetention.nightly.endpoint = endpoint;
  const secrets = (find(objects, 'Role', 'demo-discovery').rules as Obj[])
    .filter((r) => r.resources.includes('secrets'))
    .flatMap((r) => r.resourceNames);
  return { cluster: parseClusterInfo(JSON.stringify(info), 'ns'), secrets };
}

/** Run `day` (January 2026, 02:00) of `nightly`: its Job, as the CronJob controller names it, and the start of its UID. */
const runJob = (day: number) => ({
  job: `backup-nightly-${Date.UTC(2026, 0, day, 2) / 60_000}`,
  uid: `${String(day).repeat(8)}-0000-4000-8000-000000000000`,
});
/** The folder run `day` writes: under the schedule's, named with its time and Job UID (src/render/scripts/br.ts). */
const runFolder = (day: number) => `p/nightly/demo-pd.ns-2379-2026-01-0${day}t02-00-00-${String(day).repeat(8)}/`;
/** In the bucket: the expired run's folder (day 1), and beside it the kept run's (day 2), a folder of a longer name, and a backup by hand. */
const EXPIRED = ['backupmeta', 'backup.lock', '1/a_write.sst', '2/b_default.sst'].map((k) => runFolder(1) + k).sort();
const KEPT = [`${runFolder(2)}backupmeta`, `${runFolder(1).slice(0, -1)}0/backupmeta`, 'p/by-hand/backupmeta'].sort();

/** A pass of the recorder over two complete runs of `nightly` (maxBackups 1): the older one expired. */
async function retentionPass(
  settings: ReturnType<typeof settingsFor>,
  secrets: Record<string, Record<string, string>>,
  storage: (folder: string) => string,
) {
  const events: { type: string; reason: string; message: string }[] = [];
  const kube = {
    namespace: 'ns',
    path: (group: string, resource: string, name?: string) => `/${group}/namespaces/ns/${resource}${name ? `/${name}` : ''}`,
    async send(verb: string): Promise<any> {
      if (verb === 'list jobs' || verb === 'list pods') return { items: [] };
      // The schedule's health noted on its CronJob.
      if (verb.startsWith('annotate ')) return {};
      const secret = /^get secret (.+)$/.exec(verb)?.[1];
      if (secret === undefined) throw new Error(`unexpected call: ${verb}`);
      if (!secrets[secret]) throw new KubeError(`secrets "${secret}" not found`, 404);
      return { data: Object.fromEntries(Object.entries(secrets[secret]).map(([k, v]) => [k, Buffer.from(v).toString('base64')])) };
    },
    async event(_target: unknown, type: string, reason: string, message: string) {
      events.push({ type, reason, message });
    },
  };
  const run = (day: number): BackupRun => ({
    schedule: 'nightly',
    ...runJob(day),
    phase: 'Complete',
    started: `2026-01-0${day}T02:00:00Z`,
    storage: storage(runFolder(day)),
    backupTS: '1',
    size: '1',
  });
  let written: Record<string, string> | undefined;
  const records = new StatusRecords(
    {
      getConfigMapData: async () => written,
      applyConfigMap: async (_n: string, _l: unknown, data: Record<string, string>) => void (written = data),
    },
    'demo',
  );
  await records.restore();
  records.composeWith(() => JSON.stringify({ backupRuns: Object.values(records.backupRuns) }));
  await records.setBackupRuns(Object.fromEntries([run(1), run(2)].map((r) => [r.job, r])));
  const recorder = new BackupRunRecorder({ cluster: settings.cluster, kube, log: new Logger('error', {}, () => {}) }, records);
  await recorder.pass(Date.UTC(2026, 0, 10));
  return { events, expired: records.backupRuns[runJob(1).job], kept: records.backupRuns[runJob(2).job] };
}

gcsGate.describe('a retention pass of the controller on GCS', () => {
  test("removes the expired run's folder with the Secret's service account key, and nothing beside it; a bad key is announced", async () => {
    const [gcs, auth] = await Promise.all([startFakeGcs(['backups']), startGoogleAuth()]);
    try {
      const endpoint = await auth.front(gcs.endpoint);
      for (const key of [...EXPIRED, ...KEPT]) await gcs.put('backups', key);
      const settings = settingsFor(
        { gcs: { projectId: 'test-project', bucket: 'backups', prefix: 'p', secretName: 'gcs-secret' } },
        endpoint,
      );
      expect(settings.secrets).toEqual(['gcs-secret']);
      const storage = (folder: string) => `gcs://backups/${folder}`;

      const bad = await retentionPass(
        settings,
        { 'gcs-secret': { credentials: auth.credentials({ privateKey: rsaKeyPair().privateKey }) } },
        storage,
      );
      expect(bad.expired.phase).toBe('Complete');
      expect(bad.events).toEqual([
        expect.objectContaining({
          type: 'Warning',
          reason: 'BackupRetentionFailed',
          message: expect.stringContaining('invalid_grant: Invalid JWT Signature.'),
        }),
      ]);
      expect(await gcs.names('backups', 'p/')).toEqual([...EXPIRED, ...KEPT].sort());

      const good = await retentionPass(settings, { 'gcs-secret': { credentials: auth.credentials() } }, storage);
      expect(good.expired.phase).toBe('Deleted');
      expect(good.kept.phase).toBe('Complete');
      expect(good.events.map((e) => e.reason)).toEqual(['BackupDeleted']);
      expect(await gcs.names('backups', 'p/')).toEqual(KEPT);
    } finally {
      await Promise.all([gcs.stop(), auth.stop()]);
    }
  });
});

azureGate.describe('a retention pass of the controller on Azure Blob Storage', () => {
  let azurite: Azurite;
  beforeAll(async () => {
    azurite = await startAzurite(['key', 'sas']);
  });
  afterAll(() => azurite?.stop());
  const storage = (container: string) => (folder: string) => `azure://${container}/${folder}?account-name=${AZURITE_ACCOUNT}`;

  test("removes the expired run's folder with the Secret's account and key, and nothing beside it; Azure AD credentials alone are announced as not used yet", async () => {
    for (const key of [...EXPIRED, ...KEPT]) await azurite.put('key', key);
    const settings = settingsFor({ azblob: { container: 'key', prefix: 'p', secretName: 'az-secret' } }, azurite.endpoint);
    expect(settings.secrets).toEqual(['az-secret']);

    const aad = await retentionPass(
      settings,
      { 'az-secret': { AZURE_STORAGE_ACCOUNT: AZURITE_ACCOUNT, AZURE_CLIENT_ID: 'i', AZURE_CLIENT_SECRET: 's', AZURE_TENANT_ID: 't' } },
      storage('key'),
    );
    expect(aad.expired.phase).toBe('Complete');
    expect(aad.events).toEqual([
      expect.objectContaining({
        type: 'Warning',
        reason: 'BackupRetentionFailed',
        message: expect.stringContaining('holds Azure AD client credentials'),
      }),
    ]);
    expect(await azurite.names('key', 'p/')).toEqual([...EXPIRED, ...KEPT].sort());

    const good = await retentionPass(
      settings,
      { 'az-secret': { AZURE_STORAGE_ACCOUNT: AZURITE_ACCOUNT, AZURE_STORAGE_KEY: AZURITE_KEY } },
      storage('key'),
    );
    expect(good.expired.phase).toBe('Deleted');
    expect(good.kept.phase).toBe('Complete');
    expect(good.events.map((e) => e.reason)).toEqual(['BackupDeleted']);
    expect(await azurite.names('key', 'p/')).toEqual(KEPT);
  });

  test("with the storage's SAS token and account, and no Secret", async () => {
    for (const key of [...EXPIRED, ...KEPT]) await azurite.put('sas', key);
    const settings = settingsFor(
      {
        azblob: {
          container: 'sas',
          prefix: 'p',
          storageAccount: AZURITE_ACCOUNT,
          sasToken: accountSas('rld', new Date(Date.now() + 3_600_000)),
        },
      },
      azurite.endpoint,
    );
    expect(settings.secrets).toEqual([]);
    const good = await retentionPass(settings, {}, storage('sas'));
    expect(good.expired.phase).toBe('Deleted');
    expect(await azurite.names('sas', 'p/')).toEqual(KEPT);
  });
});
