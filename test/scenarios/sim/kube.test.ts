/**
 * Tests of the simulated Kubernetes API server (test/sim/kube-api.ts), through plain HTTP the way
 * Kubernetes clients talk to it, and of its StatefulSet controller and kubelet.
 */
import { KubeSim, type KubeObject } from '../../sim/kube-api';
import { forbiddenStatus, requestAttributes } from '../../sim/kube-authz';
import { planStatefulSet, validateStatefulSetUpdate, type PodView, type StatefulSetState } from '../../sim/kube-statefulset';

const NS = 'db';
const FAST = { podStartMs: 20, podReadyMs: 10, podStopMs: 20 };

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

/** One HTTP call to the simulator; JSON in and out. */
async function call(sim: KubeSim, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Answer> {
  const init: RequestInit = { method, headers: { Accept: 'application/json' } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers = { ...init.headers, 'Content-Type': contentType };
  }
  const res = await fetch(sim.url + path, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

interface WatchEvent {
  type: string;
  object: any;
}

/** Reads a watch stream line by line. */
class WatchReader {
  static async open(sim: KubeSim, path: string): Promise<WatchReader> {
    const abort = new AbortController();
    const res = await fetch(sim.url + path, { signal: abort.signal });
    expect(res.status).toBe(200);
    return new WatchReader(res.body!.getReader(), abort);
  }

  private buffer = '';
  private readonly decoder = new TextDecoder();

  private constructor(
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    private readonly abort: AbortController,
  ) {}

  /** The next event, or `'end'` when the server ended the stream. */
  async next(timeoutMs = 2000): Promise<WatchEvent | 'end'> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const nl = this.buffer.indexOf('\n');
      if (nl >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        return JSON.parse(line) as WatchEvent;
      }
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('no watch event in time')), Math.max(0, deadline - Date.now()));
      });
      try {
        const { done, value } = await Promise.race([this.reader.read(), timeout]);
        if (done) return 'end';
        this.buffer += this.decoder.decode(value, { stream: true });
      } finally {
        clearTimeout(timer);
      }
    }
  }

  /** The next `n` events as `TYPE name` strings. */
  async take(n: number): Promise<string[]> {
    const out: string[] = [];
    while (out.length < n) {
      const e = await this.next();
      if (e === 'end') throw new Error(`stream ended after ${out.join(', ')}`);
      out.push(`${e.type} ${e.object.metadata?.name ?? ''}`.trim());
    }
    return out;
  }

  close(): void {
    this.abort.abort();
    this.reader.cancel().catch(() => undefined);
  }
}

function configMap(name: string, labels: Record<string, string> = {}, data: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS, labels }, data };
}

interface StsOptions {
  replicas?: number;
  image?: string;
  policy?: 'Parallel' | 'OrderedReady';
  partition?: number;
  labels?: Record<string, string>;
}

/** A StatefulSet manifest like the renderer's (no replicas unless given, strategy type only). */
function statefulSet(name: string, o: StsOptions = {}): KubeObject {
  const selector = { app: name };
  const spec: Record<string, any> = {
    selector: { matchLabels: selector },
    serviceName: `${name}-peer`,
    podManagementPolicy: o.policy ?? 'Parallel',
    updateStrategy:
      o.partition === undefined ? { type: 'RollingUpdate' } : { type: 'RollingUpdate', rollingUpdate: { partition: o.partition } },
    template: {
      metadata: { labels: { ...selector, ...(o.labels ?? {}) } },
      spec: { containers: [{ name: 'main', image: o.image ?? 'img:v1' }] },
    },
    volumeClaimTemplates: [
      { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    ],
  };
  if (o.replicas !== undefined) spec.replicas = o.replicas;
  return { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name, namespace: NS, labels: { app: name } }, spec };
}

const STS_PATH = `/apis/apps/v1/namespaces/${NS}/statefulsets`;
const CM_PATH = `/api/v1/namespaces/${NS}/configmaps`;

function readyPods(sim: KubeSim, sts: string): KubeObject[] {
  return sim
    .list('Pod', NS)
    .filter((p) => p.metadata.name.startsWith(`${sts}-`) && !p.metadata.deletionTimestamp)
    .filter((p) => p.status.conditions.some((c: any) => c.type === 'Ready' && c.status === 'True'));
}

async function waitReady(sim: KubeSim, sts: string, n: number): Promise<void> {
  await sim.waitFor(
    () => sim.get('StatefulSet', NS, sts)?.status?.readyReplicas === n && readyPods(sim, sts).length === n,
    3000,
    `${sts}: ${n} Ready Pods`,
  );
}

/** Resolves after `ms`, to show that something does not happen. */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

let sim: KubeSim;

beforeEach(async () => {
  sim = await KubeSim.start(FAST);
});

afterEach(async () => {
  await sim.close();
});

describe('KubeSim REST basics', () => {
  it('creates, reads, replaces and deletes with Kubernetes metadata and Status errors', async () => {
    const created = await call(sim, 'POST', CM_PATH, configMap('a', {}, { k: 'v' }));
    expect(created.status).toBe(201);
    expect(created.body.metadata).toMatchObject({ name: 'a', namespace: NS, generation: 1 });
    expect(created.body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.body.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const rv = Number(created.body.metadata.resourceVersion);

    expect((await call(sim, 'GET', `${CM_PATH}/a`)).body.data).toEqual({ k: 'v' });

    const again = await call(sim, 'POST', CM_PATH, configMap('a'));
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'AlreadyExists', code: 409 });

    const stale = { ...created.body, data: { k: 'w' }, metadata: { ...created.body.metadata, resourceVersion: String(rv - 1) } };
    const conflict = await call(sim, 'PUT', `${CM_PATH}/a`, stale);
    expect(conflict.status).toBe(409);
    expect(conflict.body.reason).toBe('Conflict');

    const replaced = await call(sim, 'PUT', `${CM_PATH}/a`, { ...created.body, data: { k: 'w' } });
    expect(replaced.status).toBe(200);
    expect(Number(replaced.body.metadata.resourceVersion)).toBeGreaterThan(rv);
    expect(replaced.body.metadata.uid).toBe(created.body.metadata.uid);
    expect(sim.get('ConfigMap', NS, 'a')!.data).toEqual({ k: 'w' });

    expect((await call(sim, 'DELETE', `${CM_PATH}/a`)).status).toBe(200);
    const gone = await call(sim, 'GET', `${CM_PATH}/a`);
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404, message: 'configmaps "a" not found' });
    expect((await call(sim, 'DELETE', `${CM_PATH}/a`)).status).toBe(404);
  });

  it('answers unknown paths and unserved resources with a 404 Status', async () => {
    for (const path of ['/nope', `/api/v1/namespaces/${NS}/widgets`, '/apis/example.com/v1/namespaces/x/things/y']) {
      const r = await call(sim, 'GET', path);
      expect(r.status).toBe(404);
      expect(r.body).toMatchObject({ kind: 'Status', code: 404 });
    }
  });

  it('lists with the List kind and resourceVersion, items without apiVersion and kind', async () => {
    sim.apply(configMap('a'));
    sim.apply(configMap('b'));
    const r = await call(sim, 'GET', CM_PATH);
    expect(r.body).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: expect.any(String) } });
    expect(r.body.items.map((i: KubeObject) => i.metadata.name)).toEqual(['a', 'b']);
    expect(r.body.items[0].kind).toBeUndefined();
  });

  it('gives a kubeconfig for a plain-http server', () => {
    const text = sim.kubeconfig();
    expect(text).toContain(`server: ${sim.url}`);
    expect(text).toContain('insecure-skip-tls-verify: true');
    expect(text).toContain('current-context: sim');
    expect(text).not.toContain('namespace:');
  });

  it('stores core and events.k8s.io Events, naming them from generateName', async () => {
    const core = await call(sim, 'POST', `/api/v1/namespaces/${NS}/events`, {
      metadata: { generateName: 'pd.' },
      reason: 'Scaled',
      message: 'm',
    });
    expect(core.status).toBe(201);
    expect(core.body.metadata.name).toMatch(/^pd\.[a-z0-9]{5}$/);
    const modern = await call(sim, 'POST', `/apis/events.k8s.io/v1/namespaces/${NS}/events`, {
      metadata: { name: 'e2' },
      reason: 'Scaled',
      note: 'n',
    });
    expect(modern.body).toMatchObject({ apiVersion: 'events.k8s.io/v1', kind: 'Event' });
    expect(sim.list('Event', NS).map((e) => e.apiVersion)).toEqual(['v1', 'events.k8s.io/v1']);
  });

  it('serves discovery for KubernetesObjectApi', async () => {
    const apps = await call(sim, 'GET', '/apis/apps/v1');
    expect(apps.body.resources).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'statefulsets', kind: 'StatefulSet', namespaced: true })]),
    );
    const core = await call(sim, 'GET', '/api/v1');
    expect(core.body.resources.map((r: { name: string }) => r.name)).toContain('pods');
  });

  it('filters lists by label selector and field selector', async () => {
    sim.apply(configMap('a', { app: 'x', tier: 'db' }));
    sim.apply(configMap('b', { app: 'x' }));
    sim.apply(configMap('c', { app: 'y', tier: 'web' }));
    const names = async (q: string) => (await call(sim, 'GET', `${CM_PATH}?${q}`)).body.items.map((i: KubeObject) => i.metadata.name);
    expect(await names(`labelSelector=${encodeURIComponent('app=x')}`)).toEqual(['a', 'b']);
    expect(await names(`labelSelector=${encodeURIComponent('app!=x')}`)).toEqual(['c']);
    expect(await names(`labelSelector=tier`)).toEqual(['a', 'c']);
    expect(await names(`labelSelector=${encodeURIComponent('!tier')}`)).toEqual(['b']);
    expect(await names(`labelSelector=${encodeURIComponent('app=x,tier')}`)).toEqual(['a']);
    expect(await names(`labelSelector=${encodeURIComponent('tier in (db,web),app!=y')}`)).toEqual(['a']);
    expect(await names(`fieldSelector=${encodeURIComponent('metadata.name=b')}`)).toEqual(['b']);
  });
});

describe('KubeSim watch', () => {
  it('streams the changes after a resourceVersion, in order', async () => {
    sim.apply(configMap('before'));
    const rv = (await call(sim, 'GET', CM_PATH)).body.metadata.resourceVersion;
    const watch = await WatchReader.open(sim, `${CM_PATH}?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true`);
    try {
      sim.apply(configMap('a'));
      sim.apply(configMap('a', { changed: 'yes' }));
      sim.delete('ConfigMap', NS, 'a');
      expect(await watch.take(3)).toEqual(['ADDED a', 'MODIFIED a', 'DELETED a']);
    } finally {
      watch.close();
    }
  });

  it('replays what happened between the list and the watch', async () => {
    const rv = (await call(sim, 'GET', CM_PATH)).body.metadata.resourceVersion;
    sim.apply(configMap('early'));
    const watch = await WatchReader.open(sim, `${CM_PATH}?watch=1&resourceVersion=${rv}`);
    try {
      expect(await watch.take(1)).toEqual(['ADDED early']);
    } finally {
      watch.close();
    }
  });

  it('starts with ADDED for every object when no resourceVersion is given', async () => {
    sim.apply(configMap('a'));
    const watch = await WatchReader.open(sim, `${CM_PATH}?watch=true`);
    try {
      expect(await watch.take(1)).toEqual(['ADDED a']);
    } finally {
      watch.close();
    }
  });

  it('reports an object leaving a label selector as DELETED', async () => {
    sim.apply(configMap('a', { team: 'x' }));
    const rv = sim.get('ConfigMap', NS, 'a')!.metadata.resourceVersion;
    const watch = await WatchReader.open(sim, `${CM_PATH}?watch=true&resourceVersion=${rv}&labelSelector=team%3Dx`);
    try {
      sim.apply(configMap('a', { team: 'y' }));
      sim.apply(configMap('a', { team: 'x' }));
      expect(await watch.take(2)).toEqual(['DELETED a', 'ADDED a']);
    } finally {
      watch.close();
    }
  });

  it('answers an ERROR event with a 410 Status for a resourceVersion older than the history', async () => {
    const watch = await WatchReader.open(sim, `${CM_PATH}?watch=true&resourceVersion=1`);
    const e = await watch.next();
    expect(e).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
    expect(await watch.next()).toBe('end');
  });

  it('forgets events beyond watchHistory, so resuming from before them is 410', async () => {
    await sim.close();
    sim = await KubeSim.start({ ...FAST, watchHistory: 2 });
    sim.apply(configMap('a'));
    const rv = sim.get('ConfigMap', NS, 'a')!.metadata.resourceVersion;
    for (const n of ['b', 'c', 'd']) sim.apply(configMap(n));
    const watch = await WatchReader.open(sim, `${CM_PATH}?watch=true&resourceVersion=${rv}`);
    expect(await watch.next()).toMatchObject({ type: 'ERROR', object: { code: 410 } });
  });

  it('ends the stream after timeoutSeconds, with a BOOKMARK when bookmarks are allowed', async () => {
    const rv = (await call(sim, 'GET', CM_PATH)).body.metadata.resourceVersion;
    const watch = await WatchReader.open(sim, `${CM_PATH}?watch=true&resourceVersion=${rv}&timeoutSeconds=0.05&allowWatchBookmarks=true`);
    const e = await watch.next();
    expect(e).toMatchObject({ type: 'BOOKMARK', object: { kind: 'ConfigMap', metadata: { resourceVersion: rv } } });
    expect(await watch.next()).toBe('end');
  });

  it('ends open watches on close', async () => {
    const watch = await WatchReader.open(sim, `${CM_PATH}?watch=true`);
    await sim.close();
    expect(await watch.next()).toBe('end');
  });
});

describe('KubeSim patches', () => {
  const cmUrl = `${CM_PATH}/a`;

  it('applies a JSON merge patch (null deletes a key)', async () => {
    sim.apply(configMap('a', { x: '1' }, { k: 'v', drop: 'me' }));
    const r = await call(sim, 'PATCH', cmUrl, { metadata: { labels: { y: '2' } }, data: { drop: null } }, 'application/merge-patch+json');
    expect(r.status).toBe(200);
    expect(r.body.metadata.labels).toEqual({ x: '1', y: '2' });
    expect(r.body.data).toEqual({ k: 'v' });
  });

  it('applies a strategic merge patch, merging containers by name', async () => {
    const pod: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: NS },
      spec: {
        containers: [
          { name: 'a', image: 'a:1' },
          { name: 'b', image: 'b:1' },
        ],
      },
    };
    sim.apply(pod);
    const r = await call(
      sim,
      'PATCH',
      `/api/v1/namespaces/${NS}/pods/p`,
      { spec: { containers: [{ name: 'b', image: 'b:2' }] } },
      'application/strategic-merge-patch+json',
    );
    expect(r.status).toBe(200);
    expect(r.body.spec.containers).toEqual([
      { name: 'a', image: 'a:1' },
      { name: 'b', image: 'b:2' },
    ]);
  });

  it('applies a JSON patch, and rejects it whole when a test op fails', async () => {
    sim.apply(configMap('a', {}, { k: 'v' }));
    const ok = await call(
      sim,
      'PATCH',
      cmUrl,
      [
        { op: 'test', path: '/data/k', value: 'v' },
        { op: 'replace', path: '/data/k', value: 'w' },
        { op: 'add', path: '/data/n', value: 'x' },
      ],
      'application/json-patch+json',
    );
    expect(ok.status).toBe(200);
    expect(ok.body.data).toEqual({ k: 'w', n: 'x' });
    const bad = await call(
      sim,
      'PATCH',
      cmUrl,
      [
        { op: 'remove', path: '/data/n' },
        { op: 'test', path: '/data/k', value: 'v' },
      ],
      'application/json-patch+json',
    );
    expect(bad.status).toBe(422);
    expect(bad.body.kind).toBe('Status');
    expect(sim.get('ConfigMap', NS, 'a')!.data).toEqual({ k: 'w', n: 'x' });
  });

  it('creates with server-side apply, records the field manager, and drops fields the manager stops applying', async () => {
    const first = await call(
      sim,
      'PATCH',
      `${cmUrl}?fieldManager=tidb-ctl&force=true`,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v', old: 'x' } },
      'application/apply-patch+yaml',
    );
    expect(first.status).toBe(201);
    expect(first.body.metadata.namespace).toBe(NS);
    const second = await call(
      sim,
      'PATCH',
      `${cmUrl}?fieldManager=tidb-ctl&force=true`,
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: w\n',
      'application/apply-patch+yaml',
    );
    expect(second.status).toBe(200);
    expect(second.body.data).toEqual({ k: 'w' });
    const writes = sim.requests.filter((r) => r.method === 'PATCH');
    expect(writes.map((r) => [r.fieldManager, r.contentType, r.status])).toEqual([
      ['tidb-ctl', 'application/apply-patch+yaml', 201],
      ['tidb-ctl', 'application/apply-patch+yaml', 200],
    ]);
  });

  it('fails server-side apply without a field manager, and non-apply patches of missing objects', async () => {
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } };
    expect((await call(sim, 'PATCH', cmUrl, body, 'application/apply-patch+yaml')).status).toBe(400);
    expect((await call(sim, 'PATCH', cmUrl, { data: {} }, 'application/merge-patch+json')).status).toBe(404);
  });

  it('conflicts when a patch carries a stale resourceVersion', async () => {
    sim.apply(configMap('a'));
    const r = await call(sim, 'PATCH', cmUrl, { metadata: { resourceVersion: '1' }, data: { k: 'v' } }, 'application/merge-patch+json');
    expect(r.status).toBe(409);
  });

  it('does not bump resourceVersion for a write that changes nothing', async () => {
    sim.apply(configMap('a', {}, { k: 'v' }));
    const rv = sim.get('ConfigMap', NS, 'a')!.metadata.resourceVersion;
    const r = await call(sim, 'PATCH', cmUrl, { data: { k: 'v' } }, 'application/merge-patch+json');
    expect(r.body.metadata.resourceVersion).toBe(rv);
  });
});

describe('KubeSim fault injection', () => {
  it('answers the next matching requests with the given status, then serves again', async () => {
    sim.apply(configMap('a'));
    sim.fail((r) => r.method === 'GET' && r.path === `${CM_PATH}/a`, 500, 2);
    sim.fail((r) => r.method === 'PUT', 429, 1);
    const first = await call(sim, 'GET', `${CM_PATH}/a`);
    expect(first.status).toBe(500);
    expect(first.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'InternalError', code: 500 });
    expect((await call(sim, 'GET', `${CM_PATH}/a`)).status).toBe(500);
    expect((await call(sim, 'GET', `${CM_PATH}/a`)).status).toBe(200);

    const throttled = await call(sim, 'PUT', `${CM_PATH}/a`, configMap('a'));
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('retry-after')).toBe('0');
    expect(throttled.body.reason).toBe('TooManyRequests');
    expect(sim.requests.map((r) => r.status)).toEqual([500, 500, 200, 429]);
  });

  it('words an injected 409 as a Conflict on the object', async () => {
    sim.fail((r) => r.method === 'PATCH', 409, 1);
    const r = await call(sim, 'PATCH', `${STS_PATH}/tikv`, {}, 'application/merge-patch+json');
    expect(r.body).toMatchObject({ reason: 'Conflict', details: { name: 'tikv', group: 'apps', kind: 'statefulsets' } });
  });
});

describe('KubeSim StatefulSet controller', () => {
  it('creates the Pods of a new StatefulSet, Ready, labelled with the revision', async () => {
    const created = await call(sim, 'POST', STS_PATH, statefulSet('pd', { replicas: 3 }));
    expect(created.status).toBe(201);
    expect(created.body.spec.updateStrategy).toEqual({ type: 'RollingUpdate' });
    await waitReady(sim, 'pd', 3);

    const sts = sim.get('StatefulSet', NS, 'pd')!;
    expect(sts.status).toMatchObject({
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      currentReplicas: 3,
      updatedReplicas: 3,
      observedGeneration: 1,
    });
    expect(sts.status.currentRevision).toBe(sts.status.updateRevision);
    expect(sts.status.updateRevision).toMatch(/^pd-[a-z0-9]+$/);

    const pod = sim.get('Pod', NS, 'pd-1')!;
    expect(pod.metadata.labels).toEqual({
      app: 'pd',
      'controller-revision-hash': sts.status.updateRevision,
      'statefulset.kubernetes.io/pod-name': 'pd-1',
      'apps.kubernetes.io/pod-index': '1',
    });
    expect(pod.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'StatefulSet', name: 'pd', uid: sts.metadata.uid, controller: true }),
    ]);
    expect(pod.spec).toMatchObject({ hostname: 'pd-1', subdomain: 'pd-peer' });
    expect(pod.spec.volumes).toEqual([{ name: 'data', persistentVolumeClaim: { claimName: 'data-pd-1' } }]);
    expect(pod.status).toMatchObject({ phase: 'Running', podIP: '127.0.0.1' });
    expect(sim.get('PersistentVolumeClaim', NS, 'data-pd-1')!.status.phase).toBe('Bound');
  });

  it('fires the Pod hooks in lifecycle order', async () => {
    const seen: string[] = [];
    for (const e of ['podCreated', 'podStarted', 'podReady', 'podStopped', 'podGone'] as const) {
      sim.on(e, (pod) => {
        if (pod.metadata.name === 'pd-0') seen.push(e);
      });
    }
    sim.apply(statefulSet('pd', { replicas: 1 }));
    await waitReady(sim, 'pd', 1);
    const uid = sim.get('Pod', NS, 'pd-0')!.metadata.uid;
    sim.delete('Pod', NS, 'pd-0');
    expect(sim.get('Pod', NS, 'pd-0')!.metadata.deletionTimestamp).toBeDefined();
    await sim.waitFor(() => seen.filter((e) => e === 'podReady').length === 2, 3000, 'pd-0 back');
    expect(seen).toEqual(['podCreated', 'podStarted', 'podReady', 'podStopped', 'podGone', 'podCreated', 'podStarted', 'podReady']);
    expect(sim.get('Pod', NS, 'pd-0')!.metadata.uid).not.toBe(uid);
  });

  it('keeps Pods not Ready until the readiness gate passes', async () => {
    let open = false;
    sim.readinessGate = (pod) => open || pod.metadata.name !== 'pd-1';
    sim.apply(statefulSet('pd', { replicas: 2 }));
    await sim.waitFor(() => readyPods(sim, 'pd').length === 1, 3000, 'pd-0 Ready');
    await pause(100);
    expect(sim.get('Pod', NS, 'pd-1')!.status.phase).toBe('Running');
    expect(readyPods(sim, 'pd').map((p) => p.metadata.name)).toEqual(['pd-0']);
    open = true;
    await waitReady(sim, 'pd', 2);
  });

  it('a Pod with readiness gates: containers ready but not the Pod until another party sets the condition True', async () => {
    const sts = statefulSet('pd', { replicas: 1 });
    sts.spec.template.spec.readinessGates = [{ conditionType: 'example.com/serving' }];
    sim.apply(sts);
    const cond = (type: string) => sim.get('Pod', NS, 'pd-0')?.status?.conditions?.find((c: any) => c.type === type)?.status;
    await sim.waitFor(() => cond('ContainersReady') === 'True', 3000, 'pd-0 containers ready');
    await pause(100);
    expect(cond('Ready')).toBe('False');
    expect(sim.get('Pod', NS, 'pd-0')!.status.containerStatuses.map((c: any) => c.ready)).toEqual([true]);
    // A strategic merge of the condition (merge key type) keeps the kubelet's own conditions.
    const patch = { status: { conditions: [{ type: 'example.com/serving', status: 'True' }] } };
    const status = `/api/v1/namespaces/${NS}/pods/pd-0/status`;
    expect((await call(sim, 'PATCH', status, patch, 'application/strategic-merge-patch+json')).status).toBe(200);
    await waitReady(sim, 'pd', 1);
    expect(cond('PodScheduled')).toBe('True');
    // Turned False again: not Ready, its containers still ready.
    const off = { status: { conditions: [{ type: 'example.com/serving', status: 'False' }] } };
    await call(sim, 'PATCH', status, off, 'application/strategic-merge-patch+json');
    await sim.waitFor(() => cond('Ready') === 'False', 3000, 'pd-0 not Ready');
    expect(cond('ContainersReady')).toBe('True');
  });

  it('turns a Ready Pod not Ready when its readiness gate fails, and Ready again when it passes', async () => {
    const events: string[] = [];
    for (const e of ['podReady', 'podUnready', 'podStopped'] as const) sim.on(e, (pod) => events.push(`${e} ${pod.metadata.name}`));
    let failing = false;
    sim.readinessGate = (pod) => !(failing && pod.metadata.name === 'pd-1');
    sim.apply(statefulSet('pd', { replicas: 3 }));
    await waitReady(sim, 'pd', 3);
    const readyAt = sim.get('Pod', NS, 'pd-1')!.status.conditions.find((c: any) => c.type === 'Ready').lastTransitionTime;
    const rv = sim.get('Pod', NS, 'pd-1')!.metadata.resourceVersion;
    const watch = await WatchReader.open(
      sim,
      `/api/v1/namespaces/${NS}/pods?watch=true&resourceVersion=${rv}&fieldSelector=metadata.name%3Dpd-1`,
    );
    try {
      events.length = 0;
      const before = Math.floor(Date.now() / 1000) * 1000;
      failing = true;
      await sim.waitFor(
        () => readyPods(sim, 'pd').length === 2 && sim.get('StatefulSet', NS, 'pd')!.status.readyReplicas === 2,
        2000,
        'pd-1 not Ready',
      );
      expect(events).toEqual(['podUnready pd-1']);
      const pod = sim.get('Pod', NS, 'pd-1')!;
      expect(pod.status.phase).toBe('Running');
      expect(pod.metadata.deletionTimestamp).toBeUndefined();
      const cond = (type: string) => pod.status.conditions.find((c: any) => c.type === type);
      expect(cond('Ready').status).toBe('False');
      expect(cond('ContainersReady').status).toBe('False');
      expect(cond('PodScheduled').status).toBe('True');
      expect(Date.parse(cond('Ready').lastTransitionTime)).toBeGreaterThanOrEqual(Math.max(before, Date.parse(readyAt)));
      expect(pod.status.containerStatuses.map((c: any) => c.ready)).toEqual([false]);
      // Watches see the change as a status write like any other.
      const e = await watch.next();
      expect(e).toMatchObject({ type: 'MODIFIED', object: { metadata: { name: 'pd-1' } } });
      expect((e as any).object.status.conditions.find((c: any) => c.type === 'Ready').status).toBe('False');
      expect(sim.maxUnavailable('pd')).toBe(1);

      await pause(100);
      expect(events).toEqual(['podUnready pd-1']);
      failing = false;
      await waitReady(sim, 'pd', 3);
      expect(events).toEqual(['podUnready pd-1', 'podReady pd-1']);
      expect(sim.maxUnavailable('pd')).toBe(1);
    } finally {
      watch.close();
    }
  });

  it('does not ask the readiness gate about terminating Pods', async () => {
    await sim.close();
    sim = await KubeSim.start({ ...FAST, podStopMs: 400 });
    const unready: string[] = [];
    sim.on('podUnready', (pod) => unready.push(pod.metadata.name));
    const asked: string[] = [];
    let failing = false;
    sim.readinessGate = (pod) => {
      if (failing) asked.push(pod.metadata.name);
      return !failing;
    };
    sim.apply(statefulSet('pd', { replicas: 1 }));
    await waitReady(sim, 'pd', 1);
    sim.delete('Pod', NS, 'pd-0');
    failing = true;
    await pause(150);
    expect(sim.get('Pod', NS, 'pd-0')!.metadata.deletionTimestamp).toBeDefined();
    expect(asked).toEqual([]);
    expect(unready).toEqual([]);
  });

  it("a rolling update waits while a Pod's readiness gate fails", async () => {
    sim.apply(statefulSet('tikv', { replicas: 3, partition: 3 }));
    await waitReady(sim, 'tikv', 3);
    let failing = false;
    sim.readinessGate = (pod) => !(failing && pod.metadata.name === 'tikv-0');
    const stopped: string[] = [];
    sim.on('podStopped', (p) => stopped.push(p.metadata.name));
    failing = true;
    await sim.waitFor(() => readyPods(sim, 'tikv').length === 2, 2000, 'tikv-0 not Ready');
    sim.apply(statefulSet('tikv', { replicas: 3, partition: 0, image: 'img:v2' }));
    await pause(200);
    expect(stopped).toEqual([]);
    failing = false;
    await sim.waitFor(() => stopped.length === 3 && readyPods(sim, 'tikv').length === 3, 3000, 'the rollout');
    expect(stopped).toEqual(['tikv-2', 'tikv-1', 'tikv-0']);
  });

  it('with the partition at replicas, a template change moves updateRevision but deletes nothing', async () => {
    sim.apply(statefulSet('tikv', { replicas: 3 }));
    await waitReady(sim, 'tikv', 3);
    const before = sim.get('StatefulSet', NS, 'tikv')!.status;
    const stopped: string[] = [];
    sim.on('podStopped', (p) => stopped.push(p.metadata.name));

    sim.apply(statefulSet('tikv', { replicas: 3, partition: 3 }));
    sim.apply(statefulSet('tikv', { replicas: 3, partition: 3, image: 'img:v2' }));
    await sim.waitFor(
      () => sim.get('StatefulSet', NS, 'tikv')!.status.updateRevision !== before.updateRevision,
      2000,
      'new updateRevision',
    );
    await pause(150);
    const sts = sim.get('StatefulSet', NS, 'tikv')!;
    expect(stopped).toEqual([]);
    expect(sts.status).toMatchObject({
      currentRevision: before.currentRevision,
      currentReplicas: 3,
      observedGeneration: sts.metadata.generation,
    });
    expect(sts.status.updatedReplicas).toBeUndefined();
  });

  it('rolls Pods at or above the partition, highest first, one at a time', async () => {
    sim.apply(statefulSet('tikv', { replicas: 3, partition: 3 }));
    await waitReady(sim, 'tikv', 3);
    const oldRevision = sim.get('StatefulSet', NS, 'tikv')!.status.currentRevision;
    const stopped: string[] = [];
    sim.on('podStopped', (p) => stopped.push(p.metadata.name));

    sim.apply(statefulSet('tikv', { replicas: 3, partition: 3, image: 'img:v2' }));
    const newRevision = () => sim.get('StatefulSet', NS, 'tikv')!.status.updateRevision;
    await sim.waitFor(() => newRevision() !== oldRevision, 2000, 'new updateRevision');
    const atNew = () =>
      sim.list('Pod', NS).filter((p) => p.metadata.labels['controller-revision-hash'] === newRevision() && !p.metadata.deletionTimestamp);

    sim.apply(statefulSet('tikv', { replicas: 3, partition: 1, image: 'img:v2' }));
    await sim.waitFor(() => atNew().length === 2 && readyPods(sim, 'tikv').length === 3, 3000, 'tikv-2 and tikv-1 updated');
    expect(stopped).toEqual(['tikv-2', 'tikv-1']);
    expect(sim.get('Pod', NS, 'tikv-0')!.metadata.labels['controller-revision-hash']).toBe(oldRevision);
    let sts = sim.get('StatefulSet', NS, 'tikv')!;
    expect(sts.status).toMatchObject({ currentRevision: oldRevision, currentReplicas: 1, updatedReplicas: 2 });
    expect(sim.maxUnavailable('tikv')).toBe(1);

    sim.apply(statefulSet('tikv', { replicas: 3, partition: 0, image: 'img:v2' }));
    await sim.waitFor(() => sim.get('StatefulSet', NS, 'tikv')!.status.currentRevision === newRevision(), 3000, 'rollout complete');
    sts = sim.get('StatefulSet', NS, 'tikv')!;
    expect(stopped).toEqual(['tikv-2', 'tikv-1', 'tikv-0']);
    expect(sts.status).toMatchObject({ readyReplicas: 3, currentReplicas: 3, updatedReplicas: 3 });
    expect(sim.get('Pod', NS, 'tikv-0')!.spec.containers[0].image).toBe('img:v2');
    expect(sim.maxUnavailable('tikv')).toBe(1);
  });

  it('recreates a Pod below the partition from the current revision', async () => {
    sim.apply(statefulSet('tikv', { replicas: 2, partition: 2 }));
    await waitReady(sim, 'tikv', 2);
    const oldRevision = sim.get('StatefulSet', NS, 'tikv')!.status.currentRevision;
    sim.apply(statefulSet('tikv', { replicas: 2, partition: 2, image: 'img:v2' }));
    await sim.waitFor(() => sim.get('StatefulSet', NS, 'tikv')!.status.updateRevision !== oldRevision, 2000, 'new updateRevision');
    const uid = sim.get('Pod', NS, 'tikv-0')!.metadata.uid;
    sim.delete('Pod', NS, 'tikv-0');
    await sim.waitFor(() => sim.get('Pod', NS, 'tikv-0')?.metadata.uid !== uid && readyPods(sim, 'tikv').length === 2, 3000, 'tikv-0 back');
    const pod = sim.get('Pod', NS, 'tikv-0')!;
    expect(pod.metadata.labels['controller-revision-hash']).toBe(oldRevision);
    expect(pod.spec.containers[0].image).toBe('img:v1');
  });

  it('scales down from the highest ordinal, one at a time with OrderedReady', async () => {
    const order: string[] = [];
    sim.on('podReady', (p) => order.push(`ready ${p.metadata.name}`));
    sim.on('podCreated', (p) => order.push(`created ${p.metadata.name}`));
    sim.on('podStopped', (p) => order.push(`stopped ${p.metadata.name}`));
    sim.on('podGone', (p) => order.push(`gone ${p.metadata.name}`));
    sim.apply(statefulSet('pd', { replicas: 3, policy: 'OrderedReady' }));
    await waitReady(sim, 'pd', 3);
    expect(order).toEqual(['created pd-0', 'ready pd-0', 'created pd-1', 'ready pd-1', 'created pd-2', 'ready pd-2']);

    order.length = 0;
    sim.apply(statefulSet('pd', { replicas: 1, policy: 'OrderedReady' }));
    await sim.waitFor(
      () => sim.list('Pod', NS).length === 1 && sim.get('StatefulSet', NS, 'pd')!.status.replicas === 1,
      3000,
      'scaled to 1',
    );
    expect(order).toEqual(['stopped pd-2', 'gone pd-2', 'stopped pd-1', 'gone pd-1']);
    expect(sim.get('Pod', NS, 'pd-0')).toBeDefined();
    expect(sim.get('PersistentVolumeClaim', NS, 'data-pd-2')).toBeDefined();
  });

  it('scales a Parallel set down all at once', async () => {
    sim.apply(statefulSet('tidb', { replicas: 3 }));
    await waitReady(sim, 'tidb', 3);
    const stopped: string[] = [];
    sim.on('podStopped', (p) => stopped.push(p.metadata.name));
    await call(sim, 'PATCH', `${STS_PATH}/tidb`, { spec: { replicas: 1 } }, 'application/merge-patch+json');
    await sim.waitFor(() => stopped.length === 2, 2000, 'two Pods stopping');
    expect(stopped).toEqual(['tidb-2', 'tidb-1']);
    expect(sim.get('Pod', NS, 'tidb-1')!.metadata.deletionTimestamp).toBeDefined();
  });

  it('apply() keeps the replicas and partition a controller set, and updates what the manifest gives', async () => {
    sim.apply(statefulSet('tikv', { labels: { extra: 'a' } }));
    expect(sim.get('StatefulSet', NS, 'tikv')!.spec.replicas).toBe(1);
    const patch = await call(
      sim,
      'PATCH',
      `${STS_PATH}/tikv?fieldManager=tidb-gitops-controller`,
      [
        { op: 'replace', path: '/spec/replicas', value: 3 },
        { op: 'add', path: '/spec/updateStrategy/rollingUpdate', value: { partition: 2 } },
      ],
      'application/json-patch+json',
    );
    expect(patch.status).toBe(200);
    expect(sim.requests.at(-1)!.fieldManager).toBe('tidb-gitops-controller');
    const generation = sim.get('StatefulSet', NS, 'tikv')!.metadata.generation;

    const applied = sim.apply(statefulSet('tikv', { image: 'img:v2' }));
    expect(applied.spec.replicas).toBe(3);
    // maxUnavailable: the 1.37 default, filled in when the set was created.
    expect(applied.spec.updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { partition: 2, maxUnavailable: 1 } });
    expect(applied.spec.template.metadata.labels).toEqual({ app: 'tikv' });
    expect(applied.spec.template.spec.containers[0].image).toBe('img:v2');
    expect(applied.metadata.generation).toBe(generation + 1);

    const rv = applied.metadata.resourceVersion;
    expect(sim.apply(statefulSet('tikv', { image: 'img:v2' })).metadata.resourceVersion).toBe(rv);
  });

  it('rejects changes to immutable StatefulSet fields', async () => {
    sim.apply(statefulSet('pd', { replicas: 1 }));
    const changed = statefulSet('pd', { replicas: 1 });
    changed.spec.serviceName = 'other';
    expect(() => sim.apply(changed)).toThrow('spec.serviceName: Invalid value: "other": field is immutable');
    const r = await call(sim, 'PATCH', `${STS_PATH}/pd`, { spec: { serviceName: 'other' } }, 'application/merge-patch+json');
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe('Invalid');
  });

  it('serves the status subresource and does not let main-resource writes change status', async () => {
    sim.apply(statefulSet('pd', { replicas: 1 }));
    await waitReady(sim, 'pd', 1);
    const status = await call(sim, 'GET', `${STS_PATH}/pd/status`);
    expect(status.body.status.readyReplicas).toBe(1);
    const r = await call(sim, 'PATCH', `${STS_PATH}/pd`, { status: { readyReplicas: 7 } }, 'application/merge-patch+json');
    expect(r.body.status.readyReplicas).toBe(1);
  });

  it('deletes the Pods of a deleted StatefulSet', async () => {
    sim.apply(statefulSet('pd', { replicas: 2 }));
    await waitReady(sim, 'pd', 2);
    expect((await call(sim, 'DELETE', `${STS_PATH}/pd`)).status).toBe(200);
    await sim.waitFor(() => sim.list('Pod', NS).length === 0, 2000, 'Pods gone');
  });

  it('orphans Pods on DELETE with propagationPolicy Orphan, and a recreated set adopts them', async () => {
    sim.apply(statefulSet('pd', { replicas: 2 }));
    await waitReady(sim, 'pd', 2);
    const uids = sim.list('Pod', NS).map((p) => p.metadata.uid);
    const r = await call(sim, 'DELETE', `${STS_PATH}/pd`, { propagationPolicy: 'Orphan' });
    expect(r.status).toBe(200);
    expect(sim.list('Pod', NS).map((p) => p.metadata.ownerReferences)).toEqual([undefined, undefined]);

    const recreated = sim.apply(statefulSet('pd', { replicas: 2 }));
    await sim.waitFor(
      () => sim.list('Pod', NS).every((p) => p.metadata.ownerReferences?.[0]?.uid === recreated.metadata.uid),
      2000,
      'Pods adopted',
    );
    await waitReady(sim, 'pd', 2);
    expect(sim.list('Pod', NS).map((p) => p.metadata.uid)).toEqual(uids);
  });

  it('onDeleted reports objects of a kind as they leave the store, however they are deleted', async () => {
    const claims: string[] = [];
    const pods: string[] = [];
    sim.onDeleted('PersistentVolumeClaim', (pvc) => claims.push(`${pvc.metadata.name} ${pvc.status?.phase}`));
    sim.onDeleted('Pod', (pod) => pods.push(`${pod.metadata.name} ${pod.metadata.deletionTimestamp ? 'terminated' : 'live'}`));
    expect(() => sim.onDeleted('Widget', () => undefined)).toThrow(/unknown kind "Widget"/);
    sim.apply(statefulSet('pd', { replicas: 3 }));
    await waitReady(sim, 'pd', 3);
    // Claims that no Pod uses go once the pvc-protection controller lets them (it runs within a tick).
    sim.apply(statefulSet('pd', { replicas: 1 }));
    await sim.waitFor(() => sim.list('Pod', NS).length === 1, 2000, 'pd-1 and pd-2 gone');
    expect([...pods].sort()).toEqual(['pd-1 terminated', 'pd-2 terminated']);
    pods.splice(0);

    expect((await call(sim, 'DELETE', `/api/v1/namespaces/${NS}/persistentvolumeclaims/data-pd-2`)).status).toBe(200);
    await sim.waitFor(() => claims.length === 1, 1000, 'data-pd-2 gone');
    expect(claims).toEqual(['data-pd-2 Bound']);
    sim.delete('PersistentVolumeClaim', NS, 'data-pd-1');
    await sim.waitFor(() => claims.length === 2, 1000, 'data-pd-1 gone');
    expect(claims).toEqual(['data-pd-2 Bound', 'data-pd-1 Bound']);
    sim.apply(configMap('a'));
    sim.delete('ConfigMap', NS, 'a');
    expect(claims).toHaveLength(2);

    // A Pod counts once its termination ends, not when its deletion begins.
    sim.delete('Pod', NS, 'pd-0');
    expect(pods).toEqual([]);
    await sim.waitFor(() => pods.length === 1, 2000, 'pd-0 gone');
    expect(pods).toEqual(['pd-0 terminated']);

    // Objects collected with their owner count too.
    const owner = sim.apply(configMap('owner'));
    const ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid }];
    sim.apply({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'owned', namespace: NS, ownerReferences }, spec: {} });
    sim.delete('ConfigMap', NS, 'owner');
    await sim.waitFor(() => claims.length === 3, 1000, 'owned gone');
    expect(claims.at(-1)).toBe('owned undefined');
  });

  it('honours DeleteOptions preconditions: a uid or resourceVersion mismatch is a 409 Conflict', async () => {
    const deleted: string[] = [];
    sim.onDeleted('PersistentVolumeClaim', (pvc) => deleted.push(pvc.metadata.uid));
    sim.apply(statefulSet('pd', { replicas: 1 }));
    await waitReady(sim, 'pd', 1);
    const pvc = sim.get('PersistentVolumeClaim', NS, 'data-pd-0')!;
    const url = `/api/v1/namespaces/${NS}/persistentvolumeclaims/data-pd-0`;
    const wrongUid = await call(sim, 'DELETE', url, { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: 'not-the-uid' } });
    expect(wrongUid.status).toBe(409);
    expect(wrongUid.body).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Conflict',
      code: 409,
      details: { name: 'data-pd-0', group: '', kind: 'persistentvolumeclaims' },
      message: `Operation cannot be fulfilled on persistentvolumeclaims "data-pd-0": Precondition failed: UID in precondition: not-the-uid, UID in object meta: ${pvc.metadata.uid}`,
    });
    const staleRv = await call(sim, 'DELETE', url, { preconditions: { uid: pvc.metadata.uid, resourceVersion: '1' } });
    expect(staleRv.status).toBe(409);
    expect(staleRv.body.message).toMatch(/Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: \d+$/);
    // Pods too: a failed precondition leaves them running.
    const podUrl = `/api/v1/namespaces/${NS}/pods/pd-0`;
    expect((await call(sim, 'DELETE', podUrl, { preconditions: { uid: 'x' } })).status).toBe(409);
    expect(sim.get('Pod', NS, 'pd-0')!.metadata.deletionTimestamp).toBeUndefined();
    expect(sim.get('PersistentVolumeClaim', NS, 'data-pd-0')).toBeDefined();
    expect(deleted).toEqual([]);

    // The claim's finalizer keeps it while pd-0 uses it: the answer is the claim, marked for deletion.
    const right = await call(sim, 'DELETE', url, { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: pvc.metadata.uid } });
    expect(right.status).toBe(200);
    expect(right.body).toMatchObject({ kind: 'PersistentVolumeClaim', metadata: { uid: pvc.metadata.uid, deletionGracePeriodSeconds: 0 } });
    expect(right.body.metadata.deletionTimestamp).toBeDefined();
    sim.delete('StatefulSet', NS, 'pd');
    await sim.waitFor(() => deleted.length === 1, 2000, 'data-pd-0 gone with pd-0');
    expect(deleted).toEqual([pvc.metadata.uid]);
    expect((await call(sim, 'DELETE', url, { preconditions: { uid: pvc.metadata.uid } })).status).toBe(404);

    // Without finalizers an object goes at once, and the answer is a Success Status.
    const cm = sim.apply(configMap('plain'));
    const plain = await call(sim, 'DELETE', `${CM_PATH}/plain`, { preconditions: { uid: cm.metadata.uid } });
    expect(plain.body).toMatchObject({
      kind: 'Status',
      status: 'Success',
      details: { name: 'plain', kind: 'configmaps', uid: cm.metadata.uid },
    });
  });

  it('rejects waitFor after the timeout with the message', async () => {
    await expect(sim.waitFor(() => false, 30, 'never')).rejects.toThrow('never');
  });
});

describe('StatefulSet update validation before 1.37: one error for the whole spec', () => {
  it('forbids a change to any spec field outside the mutable ones (1.36)', () => {
    const old = statefulSet('pd', { replicas: 1 });
    const next = statefulSet('pd', { replicas: 1 });
    next.spec.serviceName = 'other';
    expect(validateStatefulSetUpdate(old, next, 36)).toEqual([
      expect.stringMatching(/^spec: Forbidden: updates to statefulset spec for fields other than/),
    ]);
    expect(validateStatefulSetUpdate(old, next, 37)).toEqual(['spec.serviceName: Invalid value: "other": field is immutable']);
    next.spec.serviceName = old.spec.serviceName;
    next.spec.minReadySeconds = 5;
    expect(validateStatefulSetUpdate(old, next, 36)).toEqual([]);
  });
});

describe.each([36, 37])('KubeSim StatefulSet defaults (apps/v1 SetDefaults_StatefulSet, Kubernetes 1.%i)', (minor) => {
  beforeEach(async () => {
    await sim.close();
    sim = await KubeSim.start({ ...FAST, kubeMinor: minor });
  });
  /** maxUnavailable 1, wherever the server defaults a rollingUpdate: from 1.37, where its gate is on. */
  const gated = minor >= 37 ? { maxUnavailable: 1 } : {};

  /** What the server stores for a StatefulSet written with these spec fields. */
  async function stored(name: string, fields: Record<string, unknown>): Promise<Record<string, any>> {
    const manifest = statefulSet(name, { replicas: 0 });
    delete manifest.spec.updateStrategy;
    delete manifest.spec.podManagementPolicy;
    delete manifest.spec.replicas;
    Object.assign(manifest.spec, fields);
    const r = await call(sim, 'POST', STS_PATH, manifest);
    expect(r.status).toBe(201);
    const { template: _t, selector: _s, serviceName: _n, volumeClaimTemplates: _v, ...rest } = r.body.spec;
    return rest;
  }

  it('invents no rollingUpdate: partition 0 only inside a rollingUpdate that is there, or when the type was empty', async () => {
    const others = {
      podManagementPolicy: 'OrderedReady',
      replicas: 1,
      revisionHistoryLimit: 10,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
    };
    // Each answer below is what a kube-apiserver of that release stored for the same input (1.32.13 for
    // the gate off, 1.37.2 for it on); test/real/real-api.test.ts checks them against the one it runs.
    expect(await stored('a', { updateStrategy: { type: 'RollingUpdate' } })).toEqual({
      ...others,
      updateStrategy: { type: 'RollingUpdate' },
    });
    expect(await stored('b', { updateStrategy: {} })).toEqual({
      ...others,
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0, ...gated } },
    });
    expect(await stored('c', {})).toEqual({
      ...others,
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0, ...gated } },
    });
    expect(await stored('d', { updateStrategy: { type: 'OnDelete' } })).toEqual({ ...others, updateStrategy: { type: 'OnDelete' } });
    expect(await stored('e', { updateStrategy: { type: 'RollingUpdate', rollingUpdate: {} } })).toEqual({
      ...others,
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0, ...gated } },
    });
    // maxUnavailable needs the MaxUnavailableStatefulSet gate: dropped where it is off, kept where on.
    // The retention policy is defaulted field by field.
    expect(
      await stored('f', {
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } },
        persistentVolumeClaimRetentionPolicy: { whenScaled: 'Delete' },
      }),
    ).toEqual({
      ...others,
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0, ...(minor >= 37 ? { maxUnavailable: 2 } : {}) } },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Delete' },
    });
    // Validation does not ask for a partition that is not there; one that is must be >= 0.
    const bad = statefulSet('g', { partition: -1 });
    const r = await call(sim, 'POST', STS_PATH, bad);
    expect(r.status).toBe(422);
    expect(r.body.message).toContain('spec.updateStrategy.rollingUpdate.partition: Invalid value: -1');
  });

  it('rolls every Pod of a set stored without rollingUpdate, reading the missing partition as 0', async () => {
    sim.apply(statefulSet('tikv', { replicas: 3 }));
    await waitReady(sim, 'tikv', 3);
    const v1 = sim.get('StatefulSet', NS, 'tikv')!.status.currentRevision;
    sim.apply(statefulSet('tikv', { replicas: 3, image: 'img:v2' }));
    const sts = sim.get('StatefulSet', NS, 'tikv')!;
    expect(sts.spec.updateStrategy).toEqual({ type: 'RollingUpdate' });
    await sim.waitFor(
      () => {
        const s = sim.get('StatefulSet', NS, 'tikv')!.status;
        return s.updateRevision !== v1 && s.currentRevision === s.updateRevision && s.updatedReplicas === 3 && s.readyReplicas === 3;
      },
      5000,
      'every Pod rolled',
    );
    expect(sim.list('Pod', NS).map((p) => p.spec.containers[0].image)).toEqual(['img:v2', 'img:v2', 'img:v2']);
  });
});

describe('KubeSim PVC protection', () => {
  const PVC_PATH = `/api/v1/namespaces/${NS}/persistentvolumeclaims`;

  it('puts the pvc-protection finalizer on every new claim, and keeps a deleted claim while a Pod uses it', async () => {
    const gone: string[] = [];
    sim.onDeleted('PersistentVolumeClaim', (pvc) => gone.push(pvc.metadata.name));
    sim.apply(statefulSet('pd', { replicas: 1 }));
    await waitReady(sim, 'pd', 1);
    expect(sim.get('PersistentVolumeClaim', NS, 'data-pd-0')!.metadata.finalizers).toEqual(['kubernetes.io/pvc-protection']);
    const own = await call(sim, 'POST', PVC_PATH, { metadata: { name: 'own', finalizers: ['example.com/x'] }, spec: {} });
    expect(own.body.metadata.finalizers).toEqual(['example.com/x', 'kubernetes.io/pvc-protection']);

    // Deleting only marks the claim: it is the answer, with deletionTimestamp and a grace period of 0.
    const r = await call(sim, 'DELETE', `${PVC_PATH}/data-pd-0`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data-pd-0', deletionGracePeriodSeconds: 0, finalizers: ['kubernetes.io/pvc-protection'] },
    });
    await pause(150);
    expect(sim.get('PersistentVolumeClaim', NS, 'data-pd-0')!.metadata.deletionTimestamp).toBe(r.body.metadata.deletionTimestamp);
    expect(gone).toEqual([]);
    // A second DELETE changes nothing; no finalizer may be added to an object being deleted.
    expect((await call(sim, 'DELETE', `${PVC_PATH}/data-pd-0`)).body.metadata.resourceVersion).toBe(r.body.metadata.resourceVersion);
    const add = await call(
      sim,
      'PATCH',
      `${PVC_PATH}/data-pd-0`,
      { metadata: { finalizers: ['kubernetes.io/pvc-protection', 'example.com/y'] } },
      'application/merge-patch+json',
    );
    expect(add.status).toBe(422);
    expect(add.body.message).toBe(
      'PersistentVolumeClaim "data-pd-0" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/y"}',
    );

    // The controller puts the finalizer back on a live claim that lost it.
    await call(sim, 'PATCH', `${PVC_PATH}/own`, { metadata: { finalizers: null } }, 'application/merge-patch+json');
    await sim.waitFor(
      () => sim.get('PersistentVolumeClaim', NS, 'own')!.metadata.finalizers?.[0] === 'kubernetes.io/pvc-protection',
      1000,
      'finalizer back',
    );

    // Once the Pod is gone (its set deleted), the claim goes.
    sim.delete('StatefulSet', NS, 'pd');
    await sim.waitFor(() => gone.length === 1, 2000, 'data-pd-0 gone');
    expect(sim.get('Pod', NS, 'pd-0')).toBeUndefined();
    expect(gone).toEqual(['data-pd-0']);
  });

  it('a terminating Pod still holds its claim: onDeleted fires only once the Pod object is gone', async () => {
    const slow = await KubeSim.start({ ...FAST, podStopMs: 300 });
    try {
      const log: string[] = [];
      slow.onDeleted('Pod', (pod) => log.push(`pod ${pod.metadata.name}`));
      slow.onDeleted('PersistentVolumeClaim', (pvc) =>
        log.push(`claim ${pvc.metadata.name} ${pvc.metadata.deletionTimestamp ? 'deleting' : 'live'}`),
      );
      slow.apply(statefulSet('pd', { replicas: 1 }));
      await slow.waitFor(() => slow.get('StatefulSet', NS, 'pd')?.status?.readyReplicas === 1, 3000, 'pd-0 Ready');
      slow.delete('PersistentVolumeClaim', NS, 'data-pd-0');
      slow.delete('Pod', NS, 'pd-0');
      await pause(150);
      expect(slow.get('Pod', NS, 'pd-0')!.metadata.deletionTimestamp).toBeDefined();
      expect(slow.get('PersistentVolumeClaim', NS, 'data-pd-0')).toBeDefined();
      expect(log).toEqual([]);
      await slow.waitFor(() => log.length === 2, 2000, 'pd-0 and its claim gone');
      expect(log).toEqual(['pod pd-0', 'claim data-pd-0 deleting']);
    } finally {
      await slow.close();
    }
  });

  it('the StatefulSet controller creates no Pod on a claim being deleted: FailedCreate, then a fresh claim once it is gone', async () => {
    sim.apply(statefulSet('pd', { replicas: 1 }));
    await waitReady(sim, 'pd', 1);
    const old = sim.get('PersistentVolumeClaim', NS, 'data-pd-0')!;
    // Another finalizer keeps the claim after its Pod is gone.
    await call(
      sim,
      'PATCH',
      `${PVC_PATH}/data-pd-0`,
      { metadata: { finalizers: ['kubernetes.io/pvc-protection', 'example.com/hold'] } },
      'application/merge-patch+json',
    );
    sim.delete('PersistentVolumeClaim', NS, 'data-pd-0');
    sim.delete('Pod', NS, 'pd-0');
    const failures = () => sim.list('Event', NS).filter((e) => e.reason === 'FailedCreate');
    await sim.waitFor(() => failures().length > 0 && failures()[0].count > 1, 2000, 'FailedCreate');
    await pause(100);
    expect(sim.get('Pod', NS, 'pd-0')).toBeUndefined();
    expect(sim.get('PersistentVolumeClaim', NS, 'data-pd-0')!.metadata.finalizers).toEqual(['example.com/hold']);
    // One Event, counted (the event recorder's correlation), shaped as the real statefulset-controller's.
    const sts = sim.get('StatefulSet', NS, 'pd')!;
    expect(failures()).toHaveLength(1);
    expect(failures()[0]).toMatchObject({
      type: 'Warning',
      reason: 'FailedCreate',
      message: 'create Pod pd-0 in StatefulSet pd failed error: pvc data-pd-0 is being deleted',
      involvedObject: { kind: 'StatefulSet', apiVersion: 'apps/v1', namespace: NS, name: 'pd', uid: sts.metadata.uid },
      source: { component: 'statefulset-controller' },
      reportingComponent: 'statefulset-controller',
    });
    expect(failures()[0].metadata.name).toMatch(/^pd\.[0-9a-f]+$/);
    // The spam filter (25 at once per object) bounds the writes of a controller that retries every sync.
    expect(failures()[0].count).toBeLessThanOrEqual(25);

    await call(sim, 'PATCH', `${PVC_PATH}/data-pd-0`, { metadata: { finalizers: null } }, 'application/merge-patch+json');
    await waitReady(sim, 'pd', 1);
    const fresh = sim.get('PersistentVolumeClaim', NS, 'data-pd-0')!;
    expect(fresh.metadata.uid).not.toBe(old.metadata.uid);
    expect(fresh.metadata.deletionTimestamp).toBeUndefined();
  });
});

describe('KubeSim restart', () => {
  it('goes down (watches cut, connections reset), answers 403 Forbidden until its RBAC caches fill, then serves the kept state', async () => {
    sim.apply(configMap('a'));
    const list = await call(sim, 'GET', CM_PATH);
    const rv = list.body.metadata.resourceVersion;
    const watch = await WatchReader.open(sim, `${CM_PATH}?watch=true&resourceVersion=${rv}`);
    const restarted = sim.restart({ downMs: 300, forbiddenMs: 400 });

    expect(await watch.next().catch(() => 'cut')).toMatch(/^(cut|end)$/);
    await expect(fetch(`${sim.url}${CM_PATH}`)).rejects.toThrow();
    // Direct calls are not HTTP: a change made during the outage is there afterwards, in order.
    sim.apply(configMap('b'));
    // The simulated controllers make no progress while the server is out.
    sim.apply(statefulSet('pd', { replicas: 1 }));

    await sim.waitFor(() => sim.restarts[0].upAt !== undefined, 1000, 'server up');
    const denied = await call(sim, 'GET', `${CM_PATH}/a`);
    expect(denied.status).toBe(403);
    expect(denied.headers.get('x-content-type-options')).toBe('nosniff');
    expect(JSON.stringify(denied.body)).toBe(
      JSON.stringify({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `configmaps "a" is forbidden: User "system:serviceaccount:${NS}:unknown" cannot get resource "configmaps" in API group "" in the namespace "${NS}"`,
        reason: 'Forbidden',
        details: { name: 'a', kind: 'configmaps' },
        code: 403,
      }),
    );
    expect((await call(sim, 'GET', `${STS_PATH}?watch=true`)).body.message).toBe(
      `statefulsets.apps is forbidden: User "system:serviceaccount:${NS}:unknown" cannot watch resource "statefulsets" in API group "apps" in the namespace "${NS}"`,
    );
    expect((await call(sim, 'GET', '/api')).body).toMatchObject({
      message: 'forbidden: User "system:serviceaccount:default:unknown" cannot get path "/api"',
      details: {},
    });
    expect(sim.requests.at(-1)).toMatchObject({ path: '/api', status: 403 });
    expect(sim.list('Pod', NS)).toEqual([]);

    await restarted;
    const [w] = sim.restarts;
    expect(w.downAt).toBeLessThan(w.upAt!);
    expect(w.upAt! - w.downAt).toBeGreaterThanOrEqual(290);
    expect(w.authorizedAt! - w.upAt!).toBeGreaterThanOrEqual(390);
    // etcd kept everything: the old resourceVersion still resumes a watch, which sees what happened meanwhile.
    expect((await call(sim, 'GET', `${CM_PATH}/a`)).status).toBe(200);
    const again = await WatchReader.open(sim, `${CM_PATH}?watch=true&resourceVersion=${rv}`);
    try {
      expect(await again.take(1)).toEqual(['ADDED b']);
    } finally {
      again.close();
    }
    await waitReady(sim, 'pd', 1);
    // Another restart once the first is over; short, as the default outage (1 s down, 2 s forbidden)
    // is 3 s of waiting and took this test near Jest's 5 s on a loaded machine.
    await expect(sim.restart({ downMs: 50, forbiddenMs: 50 })).resolves.toBeUndefined();
    expect(sim.restarts).toHaveLength(2);
  });

  it('names the user given, and refuses a second restart while one is under way', async () => {
    const restarted = sim.restart({ downMs: 10, forbiddenMs: 300, user: 'system:serviceaccount:db:c-discovery' });
    await expect(sim.restart()).rejects.toThrow('already restarting');
    await sim.waitFor(() => sim.restarts[0].upAt !== undefined, 1000, 'server up');
    const r = await call(sim, 'PATCH', `${STS_PATH}/c-pd/status`, {}, 'application/merge-patch+json');
    expect(r.body.message).toBe(
      'statefulsets.apps "c-pd" is forbidden: User "system:serviceaccount:db:c-discovery" cannot patch resource "statefulsets/status" in API group "apps" in the namespace "db"',
    );
    expect(r.body.details).toEqual({ name: 'c-pd', group: 'apps', kind: 'statefulsets' });
    await restarted;
  });

  it.each<[string, string, string, string]>([
    // Each message is what a v1.32.13 kube-apiserver answered the same request, as the same user.
    [
      'GET',
      '/api/v1/namespaces/ns/pods',
      '',
      'pods is forbidden: User "u" cannot list resource "pods" in API group "" in the namespace "ns"',
    ],
    [
      'GET',
      '/api/v1/namespaces/ns/pods/x',
      '',
      'pods "x" is forbidden: User "u" cannot get resource "pods" in API group "" in the namespace "ns"',
    ],
    [
      'GET',
      '/api/v1/namespaces/ns/pods',
      'watch=true',
      'pods is forbidden: User "u" cannot watch resource "pods" in API group "" in the namespace "ns"',
    ],
    [
      'GET',
      '/api/v1/namespaces/ns/pods',
      'fieldSelector=metadata.name%3Dfoo',
      'pods "foo" is forbidden: User "u" cannot list resource "pods" in API group "" in the namespace "ns"',
    ],
    [
      'GET',
      '/apis/apps/v1/namespaces/ns/statefulsets/s/status',
      '',
      'statefulsets.apps "s" is forbidden: User "u" cannot get resource "statefulsets/status" in API group "apps" in the namespace "ns"',
    ],
    ['GET', '/api/v1/pods', '', 'pods is forbidden: User "u" cannot list resource "pods" in API group "" at the cluster scope'],
    [
      'DELETE',
      '/api/v1/namespaces/ns/pods',
      '',
      'pods is forbidden: User "u" cannot deletecollection resource "pods" in API group "" in the namespace "ns"',
    ],
    [
      'POST',
      '/apis/coordination.k8s.io/v1/namespaces/ns/leases',
      '',
      'leases.coordination.k8s.io is forbidden: User "u" cannot create resource "leases" in API group "coordination.k8s.io" in the namespace "ns"',
    ],
    [
      'PUT',
      '/api/v1/namespaces/ns/configmaps/c',
      '',
      'configmaps "c" is forbidden: User "u" cannot update resource "configmaps" in API group "" in the namespace "ns"',
    ],
    ['GET', '/metrics', '', 'forbidden: User "u" cannot get path "/metrics"'],
    ['GET', '/apis/apps/v1', '', 'forbidden: User "u" cannot get path "/apis/apps/v1"'],
  ])('words a denied %s %s?%s as kube-apiserver does', (method, path, q, message) => {
    const query = Object.fromEntries(new URLSearchParams(q));
    expect(forbiddenStatus('u', requestAttributes(method, path, query)).message).toBe(message);
  });
});

describe('KubeSim Pod IPs', () => {
  it('gives a Pod no podIP until it starts (no sandbox yet), then the node address by default', async () => {
    const pending: unknown[] = [];
    sim.on('podCreated', (pod) => pending.push(pod.status.podIP));
    sim.apply(statefulSet('pd', { replicas: 2 }));
    await waitReady(sim, 'pd', 2);
    expect(pending).toEqual([undefined, undefined]);
    const pod = sim.get('Pod', NS, 'pd-0')!;
    expect(pod.status).toMatchObject({ hostIP: '127.0.0.1', podIP: '127.0.0.1', podIPs: [{ ip: '127.0.0.1' }] });
    expect(sim.podIPOf(NS, 'pd-1')).toBe('127.0.0.1');
    expect(sim.podIPOf(NS, 'nope')).toBeUndefined();
  });

  it("with uniquePodIPs, gives each Pod its own loopback address of the Jest worker's block when it starts", async () => {
    const own = await KubeSim.start({ ...FAST, uniquePodIPs: true });
    try {
      const started: string[] = [];
      own.on('podCreated', (pod) => expect(pod.status.podIP).toBeUndefined());
      own.on('podStarted', (pod) => started.push(pod.status.podIP));
      own.apply(statefulSet('pd', { replicas: 3 }));
      await own.waitFor(() => own.get('StatefulSet', NS, 'pd')?.status?.readyReplicas === 3, 3000, '3 Ready');
      const block = 20 + ((Number(process.env.JEST_WORKER_ID) || 0) % 200);
      const ips = ['pd-0', 'pd-1', 'pd-2'].map((n) => own.podIPOf(NS, n)!);
      expect(new Set(ips).size).toBe(3);
      for (const ip of ips) expect(ip).toMatch(new RegExp(`^127\\.${block}\\.\\d+\\.([1-9]\\d*)$`));
      expect([...started].sort()).toEqual([...ips].sort());
      expect(own.get('Pod', NS, 'pd-0')!.status).toMatchObject({ hostIP: '127.0.0.1', podIPs: [{ ip: ips[0] }] });
      // A replacement Pod gets a new address.
      own.delete('Pod', NS, 'pd-1');
      await own.waitFor(() => (own.podIPOf(NS, 'pd-1') ?? ips[1]) !== ips[1], 3000, 'pd-1 back');
      expect(ips).not.toContain(own.podIPOf(NS, 'pd-1'));
    } finally {
      await own.close();
    }
  });
});

describe('planStatefulSet', () => {
  const pod = (ordinal: number, revision = 'r1', ready = true, terminating = false): PodView => ({
    name: `s-${ordinal}`,
    ordinal,
    revision,
    ready,
    terminating,
  });
  const state = (over: Partial<StatefulSetState>): StatefulSetState => ({
    replicas: 3,
    partition: 0,
    strategy: 'RollingUpdate',
    parallel: false,
    currentRevision: 'r1',
    updateRevision: 'r1',
    pods: [pod(0), pod(1), pod(2)],
    ...over,
  });

  it.each<[string, Partial<StatefulSetState>, { create: Array<{ ordinal: number; revision: string }>; delete: string[] }]>([
    ['does nothing when settled', {}, { create: [], delete: [] }],
    ['OrderedReady creates the lowest missing Pod only', { pods: [] }, { create: [{ ordinal: 0, revision: 'r1' }], delete: [] }],
    ['OrderedReady waits for a lower Pod to be Ready', { pods: [pod(0, 'r1', false)] }, { create: [], delete: [] }],
    [
      'Parallel creates every missing Pod',
      { parallel: true, pods: [pod(1)] },
      {
        create: [
          { ordinal: 0, revision: 'r1' },
          { ordinal: 2, revision: 'r1' },
        ],
        delete: [],
      },
    ],
    [
      'creates below the partition at the current revision',
      { parallel: true, partition: 2, updateRevision: 'r2', pods: [pod(2, 'r2')] },
      {
        create: [
          { ordinal: 0, revision: 'r1' },
          { ordinal: 1, revision: 'r1' },
        ],
        delete: [],
      },
    ],
    ['rolls the highest outdated Pod at or above the partition', { updateRevision: 'r2', partition: 1 }, { create: [], delete: ['s-2'] }],
    ['skips updated Pods', { updateRevision: 'r2', pods: [pod(0), pod(1), pod(2, 'r2')] }, { create: [], delete: ['s-1'] }],
    ['never rolls below the partition', { updateRevision: 'r2', partition: 3 }, { create: [], delete: [] }],
    [
      'waits while a Pod is not Ready',
      { parallel: true, updateRevision: 'r2', pods: [pod(0, 'r1', false), pod(1), pod(2)] },
      { create: [], delete: [] },
    ],
    [
      'waits while a Pod terminates',
      { parallel: true, updateRevision: 'r2', pods: [pod(0), pod(1), pod(2, 'r1', false, true)] },
      { create: [], delete: [] },
    ],
    ['OnDelete never deletes for updates', { strategy: 'OnDelete', updateRevision: 'r2' }, { create: [], delete: [] }],
    ['OrderedReady scales down the highest first', { replicas: 1 }, { create: [], delete: ['s-2'] }],
    ['Parallel scales down all at once', { replicas: 1, parallel: true }, { create: [], delete: ['s-2', 's-1'] }],
  ])('%s', (_name, over, expected) => {
    expect(planStatefulSet(state(over))).toEqual(expected);
  });
});
