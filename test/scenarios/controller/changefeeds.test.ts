/**
 * Changefeed documents kept by the controller end to end: the rendered cluster and its Changefeed
 * documents in the simulated Kubernetes API, the TiCDC simulator's open API v2 (test/sim/ticdc.ts)
 * inside the TiCDC Pods, and the controller bundle as a process, per TiCDC release: tiflow v7.1.x and
 * v8.5.x, and the new architecture (`newarch = true`, v8.5.4+). A change in Git reaches the controller
 * as a new cluster JSON, so each one restarts it, as the Deployment's rollout would.
 */
import { worldViolations } from '../../support/rbac';
import { renderAccounts } from '../../support/sql-accounts';
import { type ControllerProcess, simCluster, World } from '../../sim/world';

type Obj = Record<string, any>;

jest.setTimeout(180_000);

const NS = 'ns';
/** Credentials as generated ones are: characters a URI must escape. */
const SECRET = 'Kafka+Pass/1st=';
const ROTATED = 'Kafka&Pass#2nd';
const inUri = encodeURIComponent;
const KAFKA = 'kafka://kafka-0.kafka:9092/tidb-changes?protocol=canal-json';
const HANDMADE = 'kafka://kafka-0.kafka:9092/handmade?protocol=canal-json&sasl-mechanism=plain&sasl-user=tidb';
const WAIT = 60_000;

const RELEASES = [
  { name: 'tiflow v7.1.1', version: 'v7.1.1', ticdc: {} },
  { name: 'tiflow v8.5.1', version: 'v8.5.1', ticdc: {} },
  { name: 'the new architecture (newarch = true, v8.5.4)', version: 'v8.5.4', ticdc: { config: 'newarch = true\n' } },
];

const changefeed = (name: string, spec: Obj): Obj => ({
  apiVersion: 'tidb-gitops.io/v1alpha1',
  kind: 'Changefeed',
  metadata: { name, namespace: NS },
  spec: { cluster: { name: 'c' }, ...spec },
});

const toKafka = (spec: Obj = {}) =>
  changefeed('to-kafka', {
    sinkURI: KAFKA,
    sinkCredentials: { secretName: 'kafka-auth', params: { 'sasl-password': 'password' } },
    replicaConfig: { filter: { rules: ['app.*'] } },
    paused: false,
    deletionPolicy: 'Delete',
    ...spec,
  });
const archive = changefeed('archive', { sinkURI: 'kafka://kafka-0.kafka:9092/archive?protocol=canal-json', deletionPolicy: 'Retain' });
const handmade = changefeed('handmade', { sinkURI: HANDMADE, replicaConfig: { filter: { rules: ['shop.*'] } } });

const secret = (password: string): Obj => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'kafka-auth', namespace: NS },
  data: { password: Buffer.from(password).toString('base64') },
});

/** A scenario: the world, the documents Git holds now, every controller process started. */
interface Scene {
  w: World;
  cluster: Obj;
  docs: Obj[];
  procs: ControllerProcess[];
  /** Requests the Role then rendered did not allow, and how many requests were checked. */
  violations: string[];
  checked: number;
}

let scene: Scene | undefined;
afterEach(async () => {
  const s = scene;
  scene = undefined;
  if (!s) return;
  try {
    // The rendered Role allowed every request the controller made (the Secret read, the ConfigMap annotated).
    checkRole(s);
    expect(s.violations).toEqual([]);
  } finally {
    await s.w.close();
  }
});

/** Renders the cluster with the documents beside it through the one input pipeline, as `render` does. */
function renderGit(s: { docs: Obj[] }) {
  return (cluster: Obj): Obj[] => renderAccounts([cluster, ...s.docs], '1.32');
}

async function start(release: (typeof RELEASES)[number], docs: Obj[], before: (w: World) => void): Promise<Scene> {
  const cluster = simCluster({ version: release.version, ticdc: { replicas: 2, ...release.ticdc } });
  const holder = { docs };
  const w = await World.start({ cluster, render: renderGit(holder) });
  const s: Scene = { w, cluster, docs, procs: [], violations: [], checked: 0 };
  Object.defineProperty(s, 'docs', { get: () => holder.docs, set: (v: Obj[]) => (holder.docs = v) });
  scene = s;
  w.kube.apply(secret(SECRET) as never);
  before(w);
  s.procs.push(await w.startController());
  return s;
}

/** Git changes: the objects applied (those of removed documents pruned), the controller restarted with the new cluster JSON. */
async function gitChanges(s: Scene, docs: Obj[]): Promise<void> {
  const ctl = s.procs[s.procs.length - 1];
  ctl.kill('SIGKILL');
  await ctl.exited;
  checkRole(s);
  const gone = s.docs.filter((d) => !docs.some((n) => n.metadata.name === d.metadata.name));
  s.docs = docs;
  await s.w.applyCluster(s.cluster);
  for (const d of gone) s.w.kube.delete('ConfigMap', NS, `changefeed-${d.metadata.name}`);
  s.w.objects.splice(0, s.w.objects.length, ...renderGit(s)(s.cluster));
  s.procs.push(await s.w.startController());
}

/** The requests made since the last check, against the Role rendered for them. */
function checkRole(s: Scene): void {
  const requests = s.w.kube.requests.slice(s.checked);
  s.checked = s.w.kube.requests.length;
  s.violations.push(...worldViolations({ objects: s.w.objects, kube: { requests } }));
}

/** The calls the controller made for one changefeed, in order, from the `from`th request to the simulator on. */
function callsOf(w: World, id: string, from = 0): { call: string; status: number }[] {
  return w.ticdc!.feeds.calls.slice(from).flatMap((c) => {
    const path = new URL(c.url, 'http://cdc').pathname;
    if (c.method === 'POST' && path === '/api/v2/changefeeds')
      return c.body.includes(`"changefeed_id":${JSON.stringify(id)}`) ? [{ call: 'create', status: c.status }] : [];
    const m = /^\/api\/v2\/changefeeds\/([^/]+)(?:\/(pause|resume))?$/.exec(path);
    if (!m || decodeURIComponent(m[1]) !== id) return [];
    const call = m[2] ?? (c.method === 'PUT' ? 'update' : c.method === 'DELETE' ? 'remove' : '');
    return call ? [{ call, status: c.status }] : [];
  });
}

const names = (calls: { call: string }[]) => calls.map((c) => c.call);
const feed = (w: World, id: string) => w.ticdc!.feeds.changefeeds().find((f) => f.id === id);
const configMap = (w: World, doc: string) => w.kube.get('ConfigMap', NS, `changefeed-${doc}`);
const phase = (w: World, doc: string) => configMap(w, doc)?.metadata.annotations?.['tidb-gitops.io/phase'];
const reported = (w: World, doc: string): Obj | undefined => w.status()?.changefeeds?.feeds.find((f: Obj) => f.document === doc);
const ruleOf = (w: World, id: string) => JSON.stringify((feed(w, id)?.config.filter as Obj | undefined)?.rules);

describe.each(RELEASES)('changefeeds kept by the controller, TiCDC $name', (release) => {
  test('created with the Secret, paused, updated the TiCDC way, rotated, adopted, failed, removed or kept', async () => {
    const s = await start(release, [toKafka(), archive, handmade], (w) => {
      // Made by hand before the controller: one Git declares alike (adopted), one Git does not name (left alone).
      w.ticdc!.feeds.addChangefeed({ id: 'handmade', sinkUri: HANDMADE, config: { filter: { rules: ['shop.*'] } } });
      w.ticdc!.feeds.addChangefeed({ id: 'other', sinkUri: 'kafka://kafka-0.kafka:9092/other?protocol=canal-json' });
    });
    const { w } = s;
    const architecture = release.ticdc.config ? 'new' : 'tiflow';
    await w.waitFor(
      () => w.ticdc!.captures().filter((c) => c.state === 'running' && c.architecture === architecture).length === 2,
      WAIT,
      'the TiCDC captures',
    );

    // Created, with the credentials from the Secret; the hand-made one adopted as it is.
    await w.waitFor(
      () => ['to-kafka', 'archive', 'handmade'].every((d) => phase(w, d) === 'Complete'),
      WAIT,
      'the three ConfigMaps to say Complete',
    );
    expect(names(callsOf(w, 'to-kafka'))).toEqual(['create']);
    expect(names(callsOf(w, 'archive'))).toEqual(['create']);
    expect(callsOf(w, 'handmade')).toEqual([]);
    expect(callsOf(w, 'other')).toEqual([]);
    expect(feed(w, 'to-kafka')?.sinkUri).toBe(`${KAFKA}&sasl-password=${inUri(SECRET)}`);
    expect(w.ticdc!.feeds.sinkUris.filter((u) => u.includes(inUri(SECRET)))).toHaveLength(1);
    expect(ruleOf(w, 'to-kafka')).toBe('["app.*"]');
    await w.waitFor(
      () => ['to-kafka', 'archive', 'handmade'].every((d) => reported(w, d)?.phase === 'Complete'),
      WAIT,
      'the status to say Complete',
    );
    const status = w.status()!;
    expect(status.changefeeds.unmanaged).toEqual(['other']);
    expect(Object.keys(status.changefeedRecords).sort()).toEqual(['archive', 'handmade', 'to-kafka']);
    const created = reported(w, 'to-kafka')!;
    expect(created).toMatchObject({ id: 'to-kafka', phase: 'Complete', state: 'normal' });
    expect(created.checkpointTs).toMatch(/^\d+$/);
    expect(Number.isNaN(Date.parse(created.checkpointTime))).toBe(false);
    expect(created.lagMs).toBeGreaterThanOrEqual(0);
    expect(
      w
        .events('ChangefeedCreated')
        .map((e) => e.involvedObject.name)
        .sort(),
    ).toEqual(['changefeed-archive', 'changefeed-to-kafka']);

    // Git pauses it.
    let mark = w.ticdc!.feeds.calls.length;
    await gitChanges(s, [toKafka({ paused: true }), archive, handmade]);
    await w.waitFor(
      () => feed(w, 'to-kafka')?.state === 'stopped' && phase(w, 'to-kafka') === 'Complete' && reported(w, 'to-kafka')?.state === 'stopped',
      WAIT,
      'the changefeed paused',
    );
    expect(names(callsOf(w, 'to-kafka', mark))).toEqual(['pause']);

    // Git resumes it.
    mark = w.ticdc!.feeds.calls.length;
    await gitChanges(s, [toKafka(), archive, handmade]);
    await w.waitFor(
      () => feed(w, 'to-kafka')?.state === 'normal' && phase(w, 'to-kafka') === 'Complete' && reported(w, 'to-kafka')?.state === 'normal',
      WAIT,
      'the changefeed resumed',
    );
    expect(names(callsOf(w, 'to-kafka', mark))).toEqual(['resume']);

    // TiCDC retries an error (state `error` in v7.1.0-v7.1.1, `warning` later): still Running, not Failed.
    w.ticdc!.feeds.failChangefeed('to-kafka', 'kafka: broker not available', 'CDC:ErrKafkaAsyncSendMessage', { state: 'retrying' });
    // The ConfigMap is annotated during the pass, status.json written at its end: wait for both.
    const retrying = release.version === 'v7.1.1' ? 'error' : 'warning';
    await w.waitFor(
      () => phase(w, 'to-kafka') === 'Running' && reported(w, 'to-kafka')?.state === retrying,
      WAIT,
      'the retrying changefeed to say Running',
    );
    expect(reported(w, 'to-kafka')?.phase).toBe('Running');

    // Git changes the filter: paused, updated, resumed; TiCDC never refused an update of a running changefeed.
    mark = w.ticdc!.feeds.calls.length;
    await gitChanges(s, [toKafka({ replicaConfig: { filter: { rules: ['app.*', 'shop.*'] } } }), archive, handmade]);
    const updated = () => ruleOf(w, 'to-kafka') === '["app.*","shop.*"]' && feed(w, 'to-kafka')?.state === 'normal';
    await w.waitFor(() => updated() && phase(w, 'to-kafka') === 'Complete', WAIT, 'the filter updated');
    expect(callsOf(w, 'to-kafka', mark)).toEqual([
      { call: 'pause', status: 200 },
      { call: 'update', status: 200 },
      { call: 'resume', status: 200 },
    ]);
    expect(w.events('ChangefeedUpdated').length).toBeGreaterThanOrEqual(1);

    // The Secret rotated: the new credential sent the same way.
    mark = w.ticdc!.feeds.calls.length;
    w.kube.apply(secret(ROTATED) as never);
    await w.waitFor(
      () =>
        feed(w, 'to-kafka')?.sinkUri.includes(inUri(ROTATED)) === true &&
        feed(w, 'to-kafka')?.state === 'normal' &&
        phase(w, 'to-kafka') === 'Complete',
      WAIT,
      'the rotated credential to reach TiCDC',
    );
    expect(callsOf(w, 'to-kafka', mark)).toEqual([
      { call: 'pause', status: 200 },
      { call: 'update', status: 200 },
      { call: 'resume', status: 200 },
    ]);
    expect(feed(w, 'to-kafka')?.sinkUri).toBe(`${KAFKA}&sasl-password=${inUri(ROTATED)}`);

    // TiCDC fails it, with an error quoting the sink URI it was given: Failed, with the error, redacted.
    w.ticdc!.feeds.failChangefeed(
      'to-kafka',
      `kafka: SASL authentication failed at ${feed(w, 'to-kafka')!.sinkUri}`,
      'CDC:ErrKafkaNewProducer',
    );
    await w.waitFor(() => phase(w, 'to-kafka') === 'Failed' && reported(w, 'to-kafka')?.phase === 'Failed', WAIT, 'the changefeed Failed');
    const message = configMap(w, 'to-kafka')!.metadata.annotations['tidb-gitops.io/message'];
    expect(message).toContain('SASL authentication failed');
    expect(reported(w, 'to-kafka')).toMatchObject({ state: 'failed', error: expect.stringContaining('SASL authentication failed') });
    expect(feed(w, 'to-kafka')?.state).toBe('failed');

    // Both documents leave Git: the one with Delete is removed, the one with Retain kept and listed.
    mark = w.ticdc!.feeds.calls.length;
    const beforeRemoval = JSON.stringify(configMap(w, 'to-kafka')?.metadata.annotations);
    await gitChanges(s, [handmade]);
    await w.waitFor(
      () => feed(w, 'to-kafka') === undefined && JSON.stringify(w.status()?.changefeeds?.kept) === '["archive"]',
      WAIT,
      'the removal and the kept changefeed',
    );
    expect(names(callsOf(w, 'to-kafka', mark))).toEqual(['remove']);
    expect(callsOf(w, 'archive', mark)).toEqual([]);
    expect(feed(w, 'archive')?.state).toBe('normal');
    expect(w.events('ChangefeedRemoved').map((e) => e.involvedObject.name)).toEqual(['c-ticdc']);
    expect(Object.keys(w.status()!.changefeedRecords).sort()).toEqual(['archive', 'handmade']);
    // The hand-made changefeeds were never created, changed or removed.
    expect(callsOf(w, 'handmade')).toEqual([]);
    expect(callsOf(w, 'other')).toEqual([]);
    expect(w.status()!.changefeeds.unmanaged).toEqual(['other']);

    // The credentials reached TiCDC only: nothing the controller said holds them.
    const said = [
      ...s.procs.map((p) => p.stderr.join('\n')),
      JSON.stringify(w.events()),
      JSON.stringify(w.status()),
      beforeRemoval,
      ...['archive', 'handmade'].map((d) => JSON.stringify(configMap(w, d)?.metadata.annotations)),
    ].join('\n');
    for (const p of [SECRET, ROTATED, inUri(SECRET), inUri(ROTATED)]) expect(said).not.toContain(p);
  });
});
