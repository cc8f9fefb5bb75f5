/**
 * The controller's changefeed client (src/controller/clients/changefeeds.ts) against the TiCDC
 * simulator's open API v2 (test/sim/ticdc-changefeeds.ts), per release: tiflow v7.1, v7.5, v8.1, v8.5
 * and the new architecture (pingcap/ticdc v8.5.4+).
 */
import * as http from 'node:http';
import {
  type ChangefeedApiOptions,
  ChangefeedApiError,
  createChangefeed,
  getChangefeed,
  isChangefeedAlreadyExists,
  isUpdateRefusedWhileRunning,
  listChangefeeds,
  pauseChangefeed,
  redactSinkUri,
  redactText,
  removeChangefeed,
  resumeChangefeed,
  updateChangefeed,
} from '../../../src/controller/clients/changefeeds';
import { TicdcSim, type TicdcArchitecture } from '../../sim/ticdc';
import { maskSinkUri, tsoOf } from '../../sim/ticdc-changefeeds-wire';

interface Release {
  name: string;
  version: string;
  architecture: TicdcArchitecture;
}

const RELEASES: Release[] = [
  { name: 'tiflow v7.1.6', version: 'v7.1.6', architecture: 'tiflow' },
  { name: 'tiflow v7.5.7', version: 'v7.5.7', architecture: 'tiflow' },
  { name: 'tiflow v8.1.2', version: 'v8.1.2', architecture: 'tiflow' },
  { name: 'tiflow v8.5.0', version: 'v8.5.0', architecture: 'tiflow' },
  { name: 'new architecture v8.5.4', version: 'v8.5.4', architecture: 'new' },
];

const PODS = ['cf-ticdc-0', 'cf-ticdc-1'];
let block = 0;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

interface Cdc {
  sim: TicdcSim;
  /** The owner's base URL and another capture's. */
  owner: string;
  other: string;
  opts: ChangefeedApiOptions;
}

async function cdc(r: Release): Promise<Cdc> {
  const sim = await TicdcSim.start({ cluster: 'cf', namespace: 'ns', version: r.version, architecture: r.architecture, tables: 0 });
  cleanups.push(() => sim.close());
  block++;
  const ips = PODS.map((_, i) => `127.97.${block}.${i + 1}`);
  for (const [i, p] of PODS.entries()) await sim.captureStart(p, ips[i]);
  await sim.waitFor(() => sim.owner() !== undefined && sim.captures().every((c) => c.state === 'running'), 3000, 'owner elected');
  const ownerIp = ips[PODS.indexOf(sim.owner() as string)];
  const otherIp = ips.find((ip) => ip !== ownerIp) as string;
  const base = (ip: string) => `http://${ip}:${sim.port}`;
  return {
    sim,
    owner: base(ownerIp),
    other: base(otherIp),
    opts: { flavour: r.architecture === 'new' ? 'new' : 'tiflow', version: r.version },
  };
}

function raw(method: string, url: string, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent: false, timeout: 3000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const thrown = async (p: Promise<unknown>): Promise<ChangefeedApiError> => {
  try {
    await p;
  } catch (e) {
    if (e instanceof ChangefeedApiError) return e;
    throw e;
  }
  throw new Error('expected a ChangefeedApiError');
};

const MYSQL = 'mysql://cdc:S3cr3t-pw@downstream.db:4000/?safe-mode=false';
const S3 = 's3://bucket/prefix?access-key=AKIAEXAMPLE&secret-access-key=wJalrXUtnFEMIK7MDENG&endpoint=http://minio:9000';
const feedOf = (sim: TicdcSim, id: string) => sim.feeds.changefeeds().find((f) => f.id === id);

describe.each(RELEASES)('changefeeds client against TiCDC $name', (r) => {
  const newArch = r.architecture === 'new';

  it('creates a changefeed and reads it back, through any capture, with exact 64-bit timestamps', async () => {
    const { sim, owner, other, opts } = await cdc(r);
    const startTs = (tsoOf(Date.now() - 60_000) + 123n).toString();
    const created = await createChangefeed(
      other,
      { id: 'to-mysql', sinkUri: MYSQL, startTs, replicaConfig: { force_replicate: true } },
      opts,
    );
    expect(created).toMatchObject({ id: 'to-mysql', state: 'normal', startTs, checkpointTs: startTs });
    // The body carried start_ts as a bare uint64, and the sink URI as given (credentials included).
    const call = sim.feeds.calls.find((c) => c.method === 'POST') as { body: string; url: string };
    expect(call.body).toContain(`"start_ts":${startTs}`);
    expect(call.url).toContain(newArch ? 'keyspace=default' : 'namespace=default');
    expect(sim.feeds.sinkUris).toEqual([MYSQL]);
    expect(Number(startTs) > Number.MAX_SAFE_INTEGER).toBe(true);

    const got = await getChangefeed(owner, 'to-mysql', opts);
    const model = feedOf(sim, 'to-mysql');
    expect(got?.startTs).toBe(model?.startTs);
    expect(got?.startTs).toBe(startTs);
    // The checkpoint runs ahead while normal; what the client read is a checkpoint the model had.
    expect(BigInt(got?.checkpointTs as string) >= BigInt(startTs)).toBe(true);
    expect(got?.checkpointTime).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/);
    expect(got?.sinkUri).toBe('mysql://cdc:xxxxx@downstream.db:4000/?safe-mode=false');
    expect(got?.config).toMatchObject({ force_replicate: true });
    expect(got?.namespace).toBe('default');
    expect(sim.requests.some((q) => q.path.startsWith('/api/v2/changefeeds') && q.answeredBy === sim.owner())).toBe(true);
  });

  it('refuses an update while running; pause, update, resume applies it', async () => {
    const { sim, owner, opts } = await cdc(r);
    await createChangefeed(owner, { id: 'cf1', sinkUri: 'blackhole://' }, opts);
    const refused = await thrown(updateChangefeed(owner, 'cf1', { sinkUri: MYSQL }, opts));
    expect(refused.status).toBe(400);
    expect(isUpdateRefusedWhileRunning(refused)).toBe(true);
    expect(feedOf(sim, 'cf1')?.sinkUri).toBe('blackhole://');

    await pauseChangefeed(owner, 'cf1', opts);
    expect((await getChangefeed(owner, 'cf1', opts))?.state).toBe('stopped');
    const updated = await updateChangefeed(owner, 'cf1', { sinkUri: MYSQL, replicaConfig: { case_sensitive: true } }, opts);
    expect(updated.changed).toBe(true);
    expect(updated.status?.sinkUri).toBe('mysql://cdc:xxxxx@downstream.db:4000/?safe-mode=false');
    expect(feedOf(sim, 'cf1')).toMatchObject({ sinkUri: MYSQL, state: 'stopped', config: { case_sensitive: true } });
    await resumeChangefeed(owner, 'cf1', opts);
    expect((await getChangefeed(owner, 'cf1', opts))?.state).toBe('normal');
    const resume = sim.feeds.calls.find((c) => c.url.includes('/resume'));
    expect(resume?.body).toBe('{}');
  });

  it('an update that changes nothing: tiflow refuses it, the client reports no change', async () => {
    const { owner, opts } = await cdc(r);
    await createChangefeed(owner, { id: 'same', sinkUri: 'blackhole://' }, opts);
    await pauseChangefeed(owner, 'same', opts);
    const result = await updateChangefeed(owner, 'same', { sinkUri: 'blackhole://' }, opts);
    expect(result.changed).toBe(newArch);
  });

  it('pausing a paused changefeed and resuming a running one are accepted', async () => {
    const { sim, owner, opts } = await cdc(r);
    await createChangefeed(owner, { id: 'pp', sinkUri: 'blackhole://' }, opts);
    await pauseChangefeed(owner, 'pp', opts);
    const frozen = feedOf(sim, 'pp')?.checkpointTs;
    await pauseChangefeed(owner, 'pp', opts);
    expect(feedOf(sim, 'pp')).toMatchObject({ state: 'stopped', checkpointTs: frozen });
    await resumeChangefeed(owner, 'pp', opts);
    await resumeChangefeed(owner, 'pp', opts);
    expect(feedOf(sim, 'pp')?.state).toBe('normal');
  });

  it('removes a changefeed; removing a missing one succeeds; reading a missing one is undefined', async () => {
    const { sim, owner, opts } = await cdc(r);
    await createChangefeed(owner, { id: 'gone', sinkUri: 'blackhole://' }, opts);
    await removeChangefeed(owner, 'gone', opts);
    expect(feedOf(sim, 'gone')).toBeUndefined();
    await removeChangefeed(owner, 'gone', opts);
    expect(await getChangefeed(owner, 'gone', opts)).toBeUndefined();
    const res = await raw('DELETE', `${owner}/api/v2/changefeeds/gone`);
    expect(res).toEqual({ status: 200, text: newArch ? 'null' : '{}' });
    const missing = await thrown(pauseChangefeed(owner, 'gone', opts));
    expect(missing).toMatchObject({ status: 400, code: 'CDC:ErrChangeFeedNotExists' });
    expect(missing.detail).toBe(`[CDC:ErrChangeFeedNotExists]changefeed not exists, ${newArch ? '' : 'default/'}gone`);
  });

  it('adopts a changefeed made by hand, listing finished ones too', async () => {
    const { sim, owner, opts } = await cdc(r);
    const checkpoint = tsoOf(Date.now() - 5000) + 7n;
    sim.feeds.addChangefeed({ id: 'by-hand', sinkUri: S3, state: 'stopped', checkpointTs: checkpoint });
    sim.feeds.addChangefeed({ id: 'done', sinkUri: 'blackhole://', targetTs: tsoOf(Date.now() - 10_000) });
    const list = await listChangefeeds(owner, opts);
    expect(list.map((c) => [c.id, c.state])).toEqual([
      ['by-hand', 'stopped'],
      ['done', 'finished'],
    ]);
    expect(list[0].checkpointTs).toBe(checkpoint.toString());
    const got = await getChangefeed(owner, 'by-hand', opts);
    // TiCDC masks neither access-key nor secret-access-key; the client does.
    expect(got?.sinkUri).toContain('secret-access-key=xxxxx');
    expect(got?.sinkUri).toContain('access-key=xxxxx');
    expect(JSON.stringify(got)).not.toContain('wJalrXUtnFEMIK7MDENG');
    expect(maskSinkUri(S3)).toContain('wJalrXUtnFEMIK7MDENG');
    // Without state=all, TiCDC hides finished changefeeds.
    const plain = JSON.parse((await raw('GET', `${owner}/api/v2/changefeeds`)).text);
    expect(plain.items.map((i: { id: string }) => i.id)).toEqual(['by-hand']);
    expect((await getChangefeed(owner, 'by-hand', opts))?.checkpointTs).toBe(checkpoint.toString());
  });

  it('a duplicate create is an error the client names', async () => {
    const { owner, opts } = await cdc(r);
    await createChangefeed(owner, { id: 'dup', sinkUri: 'blackhole://' }, opts);
    const e = await thrown(createChangefeed(owner, { id: 'dup', sinkUri: 'blackhole://' }, opts));
    expect(e.status).toBe(500);
    expect(isChangefeedAlreadyExists(e)).toBe(true);
  });

  it('reports failed and retrying changefeeds with their errors, in the release state names', async () => {
    const { sim, owner, opts } = await cdc(r);
    sim.feeds.addChangefeed({ id: 'bad', sinkUri: 'blackhole://' });
    sim.feeds.addChangefeed({ id: 'flaky', sinkUri: 'blackhole://' });
    sim.feeds.failChangefeed('bad', 'sink is gone', 'CDC:ErrMySQLConnectionError');
    sim.feeds.failChangefeed('flaky', 'kafka is slow', 'CDC:ErrKafkaSendMessage', { state: 'retrying' });
    const bad = await getChangefeed(owner, 'bad', opts);
    expect(bad).toMatchObject({ state: 'failed', error: { code: 'CDC:ErrMySQLConnectionError', message: 'sink is gone' } });
    const flaky = await getChangefeed(owner, 'flaky', opts);
    expect(flaky?.state).toBe(r.version === 'v7.1.6' ? 'error' : 'warning');
    // v7.1 keeps it in info.Error, which get shows; later releases in info.Warning, which only list shows.
    expect(flaky?.error).toEqual(r.version === 'v7.1.6' ? { code: 'CDC:ErrKafkaSendMessage', message: 'kafka is slow' } : undefined);
    const listed = await listChangefeeds(owner, opts);
    expect(listed.find((c) => c.id === 'bad')?.error).toMatchObject({ code: 'CDC:ErrMySQLConnectionError', message: 'sink is gone' });
    expect(listed.find((c) => c.id === 'bad')?.error?.time).toMatch(/^\d{4}-/);
    expect(listed.find((c) => c.id === 'flaky')?.error).toMatchObject({ code: 'CDC:ErrKafkaSendMessage' });
    // A failed changefeed may be updated without a pause.
    expect((await updateChangefeed(owner, 'bad', { sinkUri: MYSQL }, opts)).changed).toBe(true);
  });

  it('refuses start_ts in the future and at or below the GC safepoint', async () => {
    const { sim, owner, opts } = await cdc(r);
    const future = await thrown(
      createChangefeed(owner, { id: 'f', sinkUri: 'blackhole://', startTs: tsoOf(Date.now() + 3_600_000).toString() }, opts),
    );
    expect(future).toMatchObject({ status: 400, code: 'CDC:ErrAPIInvalidParam' });
    sim.feeds.gcSafePoint = tsoOf(Date.now() - 1000);
    const old = await thrown(
      createChangefeed(owner, { id: 'o', sinkUri: 'blackhole://', startTs: tsoOf(Date.now() - 60_000).toString() }, opts),
    );
    expect(old).toMatchObject({ status: 400, code: 'CDC:ErrStartTsBeforeGC' });
    const target = await thrown(
      createChangefeed(owner, { id: 't', sinkUri: 'blackhole://', targetTs: tsoOf(Date.now() - 500).toString() }, opts),
    );
    expect(target).toMatchObject({ status: 400, code: 'CDC:ErrTargetTsBeforeStartTs' });
    expect(sim.feeds.changefeeds()).toEqual([]);
  });

  it('resuming a changefeed whose checkpoint GC has passed', async () => {
    const { sim, owner, opts } = await cdc(r);
    sim.feeds.addChangefeed({ id: 'stale', sinkUri: 'blackhole://', state: 'stopped', checkpointTs: tsoOf(Date.now() - 86_400_000) });
    sim.feeds.gcSafePoint = tsoOf(Date.now() - 3_600_000);
    const checks = ['v7.1.6', 'v8.1.2', 'v8.5.0', 'v8.5.4'].includes(r.version);
    if (checks) {
      const e = await thrown(resumeChangefeed(owner, 'stale', opts));
      expect(e).toMatchObject({ status: 400, code: 'CDC:ErrStartTsBeforeGC' });
      expect(feedOf(sim, 'stale')?.state).toBe('stopped');
    } else {
      await resumeChangefeed(owner, 'stale', opts);
      expect(await getChangefeed(owner, 'stale', opts)).toMatchObject({ state: 'failed', error: { code: 'CDC:ErrSnapshotLostByGC' } });
    }
  });

  it('never lets sink credentials into error messages', async () => {
    const { sim, owner, opts } = await cdc(r);
    sim.feeds.rejectSink(/downstream\.db/, 'dial tcp 10.0.0.9:4000: connect: connection refused');
    const e = await thrown(createChangefeed(owner, { id: 'leak', sinkUri: MYSQL }, opts));
    expect(e.status).toBe(400);
    expect(e.message).not.toContain('S3cr3t-pw');
    expect(e.detail).not.toContain('S3cr3t-pw');
    expect(e.message).toContain('connection refused');
    // What the client sent is kept for checks, credentials included.
    expect(sim.feeds.calls.at(-1)).toMatchObject({ status: 400 });
    expect(sim.feeds.calls.at(-1)?.body).toContain('S3cr3t-pw');
    // The new architecture echoes the raw URI, password included, in its error.
    if (newArch)
      expect((await raw('POST', `${owner}/api/v2/changefeeds`, JSON.stringify({ changefeed_id: 'x', sink_uri: MYSQL }))).text).toContain(
        'S3cr3t-pw',
      );
    const kafka = 'kafka://broker:9092/topic?sasl-user=cdc&sasl-password=kafkaPW99&protocol=canal-json';
    sim.feeds.rejectSink(/broker/, `cannot reach ${kafka}`);
    const k = await thrown(createChangefeed(owner, { id: 'k', sinkUri: kafka }, opts));
    expect(k.message).not.toContain('kafkaPW99');
  });
});

describe('TiCDC specifics outside the client', () => {
  it('tiflow scopes changefeeds by the namespace (from the body on create); the new architecture ignores it', async () => {
    const t = await cdc(RELEASES[3]);
    await createChangefeed(t.owner, { id: 'a', sinkUri: 'blackhole://' }, { ...t.opts, namespace: 'team1' });
    expect(JSON.parse(t.sim.feeds.calls[0].body).namespace).toBe('team1');
    expect(await listChangefeeds(t.owner, t.opts)).toEqual([]);
    expect((await listChangefeeds(t.owner, { ...t.opts, namespace: 'team1' })).map((c) => c.id)).toEqual(['a']);
    const n = await cdc(RELEASES[4]);
    await createChangefeed(n.owner, { id: 'a', sinkUri: 'blackhole://' }, { ...n.opts, namespace: 'team1' });
    expect((await listChangefeeds(n.owner, n.opts)).map((c) => [c.id, c.namespace])).toEqual([['a', 'default']]);
  });

  it('tiflow wants a resume body; the new architecture takes none', async () => {
    const t = await cdc(RELEASES[3]);
    t.sim.feeds.addChangefeed({ id: 'p', sinkUri: 'blackhole://', state: 'stopped' });
    const empty = await raw('POST', `${t.owner}/api/v2/changefeeds/p/resume`);
    expect(empty.status).toBe(400);
    expect(JSON.parse(empty.text)).toEqual({
      error_msg: '[CDC:ErrAPIInvalidParam]invalid api parameter: EOF',
      error_code: 'CDC:ErrAPIInvalidParam',
    });
    const n = await cdc(RELEASES[4]);
    n.sim.feeds.addChangefeed({ id: 'p', sinkUri: 'blackhole://', state: 'stopped' });
    expect((await raw('POST', `${n.owner}/api/v2/changefeeds/p/resume`)).status).toBe(200);
  });

  it('a capture not ready yet answers 503 (tiflow CheckServerReadyMiddleware)', async () => {
    const sim = await TicdcSim.start({ cluster: 'cf', namespace: 'ns', version: 'v8.5.0', tables: 0, initMs: 60_000 });
    cleanups.push(() => sim.close());
    block++;
    await sim.captureStart('cf-ticdc-0', `127.97.${block}.1`);
    const e = await thrown(getChangefeed(`http://127.97.${block}.1:${sim.port}`, 'x'));
    expect(e).toMatchObject({ status: 503, code: 'CDC:ErrServerIsNotReady' });
  });

  it('the checkpoint advances while normal and stands while stopped', async () => {
    const t = await cdc(RELEASES[3]);
    t.sim.feeds.addChangefeed({ id: 'run', sinkUri: 'blackhole://', lagMs: 100 });
    const first = BigInt((await getChangefeed(t.owner, 'run', t.opts))?.checkpointTs as string);
    await t.sim.waitFor(() => BigInt(t.sim.feeds.changefeeds()[0].checkpointTs) > first, 3000, 'checkpoint advanced');
    await pauseChangefeed(t.owner, 'run', t.opts);
    const stopped = (await getChangefeed(t.owner, 'run', t.opts))?.checkpointTs;
    await new Promise((res) => setTimeout(res, 30));
    expect((await getChangefeed(t.owner, 'run', t.opts))?.checkpointTs).toBe(stopped);
  });
});

describe('redaction', () => {
  it('masks userinfo passwords and secret query values, keeping the rest', () => {
    expect(redactSinkUri(S3)).toBe('s3://bucket/prefix?access-key=xxxxx&secret-access-key=xxxxx&endpoint=http://minio:9000');
    expect(redactSinkUri('azure://c/p?account-name=acct&account-key=SGVsbG8%3D&sas-token=sv%3D2020')).toBe(
      'azure://c/p?account-name=acct&account-key=xxxxx&sas-token=xxxxx',
    );
    expect(redactSinkUri('kafka://b:9092/t?sasl-password=p%40ss&protocol=avro')).toBe('kafka://b:9092/t?sasl-password=xxxxx&protocol=avro');
    expect(redactSinkUri('mysql://root@db:3306/')).toBe('mysql://root@db:3306/');
  });

  it('scrubs known secrets, URIs, name=value pairs and DSNs from any text', () => {
    expect(redactText('Error 1045: Access denied for user root:hunter22@tcp(db:3306)/')).not.toContain('hunter22');
    expect(redactText("sink uri invalid 'mysql://u:pw123@h:1/': refused")).toBe("sink uri invalid 'mysql://u:xxxxx@h:1/': refused");
    expect(redactText('bad password=abc123 given')).toBe('bad password=xxxxx given');
    expect(redactText('echo of S3cr3t-pw here', ['S3cr3t-pw'])).toBe('echo of xxxxx here');
  });
});
