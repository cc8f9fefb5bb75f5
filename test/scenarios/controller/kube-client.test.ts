/**
 * The controller's own Kubernetes client (src/controller/clients/kube-rest.ts, informer.ts): where it
 * finds the API server, and how its informer keeps a cache through the simulated API server's list,
 * watch, bookmarks, ended streams, 410 Expired and outages. The real API server is reached through it
 * in the real-API suites (TLS, client certificates, service account tokens).
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Informer } from '../../../src/controller/clients/informer';
import { KubeHttpError, KubeRest, loadKubeTarget } from '../../../src/controller/clients/kube-rest';
import { Logger } from '../../../src/controller/runtime/log';
import { KubeSim, type KubeObject } from '../../sim/kube-api';

const NS = 'db';
const CM_PATH = `/api/v1/namespaces/${NS}/configmaps`;

function configMap(name: string, data: Record<string, string> = {}, labels: Record<string, string> = { app: 'x' }): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS, labels }, data };
}

describe('loadKubeTarget', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kube-client-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };

  it('reads the current context, with file paths relative to the kubeconfig and data fields in base64', () => {
    write('ca.pem', 'CA');
    write('token', 'abc\n');
    const file = write(
      'config',
      `apiVersion: v1
kind: Config
current-context: two
clusters:
- {name: a, cluster: {server: 'https://a.example:6443/', certificate-authority: ca.pem}}
- {name: b, cluster: {server: 'https://b.example', certificate-authority-data: ${Buffer.from('CB').toString('base64')}, insecure-skip-tls-verify: true}}
users:
- {name: u1, user: {tokenFile: token}}
- {name: u2, user: {client-certificate-data: ${Buffer.from('CERT').toString('base64')}, client-key-data: ${Buffer.from('KEY').toString('base64')}}}
contexts:
- {name: one, context: {cluster: b, user: u2}}
- {name: two, context: {cluster: a, user: u1}}
`,
    );
    const t = loadKubeTarget(file);
    expect(t).toMatchObject({ server: 'https://a.example:6443', tokenFile: join(dir, 'token'), insecure: false });
    expect(t.ca?.toString()).toBe('CA');
    const other = loadKubeTarget(undefined, {
      KUBECONFIG: `${join(dir, 'missing')}:${write('config2', `current-context: one\n${require('node:fs').readFileSync(file, 'utf8').split('\n').slice(3).join('\n')}`)}`,
    });
    expect(other).toMatchObject({ server: 'https://b.example', insecure: true });
    expect([other.ca?.toString(), other.cert?.toString(), other.key?.toString()]).toEqual(['CB', 'CERT', 'KEY']);
  });

  it('says what is missing in a kubeconfig, naming the file', () => {
    const file = write('bad', 'current-context: nope\ncontexts: []\n');
    expect(() => loadKubeTarget(file)).toThrow(`${file}: no context named "nope"`);
    const provider = write(
      'provider',
      'current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\nclusters: [{name: k, cluster: {server: "https://k"}}]\nusers: [{name: u, user: {auth-provider: {name: gcp}}}]\n',
    );
    expect(() => loadKubeTarget(provider)).toThrow(/uses an auth-provider, which is not supported/);
  });

  it('runs an exec credential plugin and sends its token until it expires', async () => {
    const sim = await KubeSim.start();
    try {
      const plugin = write(
        'plugin.sh',
        `#!/bin/sh\necho run >> "${join(dir, 'runs')}"\nprintf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t-%s","expirationTimestamp":"2999-01-01T00:00:00Z"}}' "$SUFFIX"\n`,
      );
      chmodSync(plugin, 0o755);
      const file = write(
        'exec',
        `current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "${sim.url}"}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: ./plugin.sh, env: [{name: SUFFIX, value: one}]}}}]
`,
      );
      const rest = new KubeRest(loadKubeTarget(file));
      await rest.request('GET', CM_PATH);
      await rest.request('GET', CM_PATH);
      rest.close();
      const auth = sim.requests.filter((r) => r.path === CM_PATH).map((r) => r.authorization);
      expect(auth).toEqual(['Bearer t-one', 'Bearer t-one']);
      expect(require('node:fs').readFileSync(join(dir, 'runs'), 'utf8')).toBe('run\n');
    } finally {
      await sim.close();
    }
  });

  it('finds the service account of a Pod when there is no kubeconfig', () => {
    const sa = join(dir, 'sa');
    mkdirSync(sa);
    writeFileSync(join(sa, 'token'), 'tok');
    writeFileSync(join(sa, 'ca.crt'), 'CA');
    const t = loadKubeTarget(undefined, { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443', HOME: dir }, sa);
    expect(t).toMatchObject({ server: 'https://[fd00::1]:443', tokenFile: join(sa, 'token') });
    expect(() => loadKubeTarget(undefined, { HOME: dir }, sa)).toThrow(/no Kubernetes configuration/);
  });
});

describe('KubeRest and Informer against the simulated API server', () => {
  let sim: KubeSim;
  let rest: KubeRest;
  const logs: string[] = [];
  const log = new Logger('debug', {}, (l) => logs.push(l));

  beforeEach(async () => {
    sim = await KubeSim.start({ watchHistory: 5 });
    rest = new KubeRest({ server: sim.url });
    logs.length = 0;
  });
  afterEach(async () => {
    rest.close();
    await sim.close();
  });

  const watches = () => sim.requests.filter((r) => r.path === CM_PATH && r.query.watch);
  const lists = () => sim.requests.filter((r) => r.path === CM_PATH && !r.query.watch && r.method === 'GET');

  it('answers errors with the status code and the Status message', async () => {
    const err = await rest.request('GET', `${CM_PATH}/none`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeHttpError);
    expect((err as KubeHttpError).code).toBe(404);
    expect((err as KubeHttpError).message).toBe('HTTP 404: configmaps "none" not found');
  });

  it('lists with the selector, follows the watch, and resumes from the last resourceVersion when the server ends the stream', async () => {
    sim.apply(configMap('a'));
    sim.apply(configMap('other', {}, { app: 'y' }));
    let changes = 0;
    const informer = new Informer<KubeObject>(rest, CM_PATH, 'app=x', () => changes++, log, 'configmaps');
    await informer.start();
    expect(informer.synced).toBe(true);
    expect(informer.list().map((o) => o.metadata.name)).toEqual(['a']);
    await sim.waitFor(() => watches().length === 1, 5000, 'the first watch');
    expect(watches()[0].query).toMatchObject({ labelSelector: 'app=x', allowWatchBookmarks: 'true' });
    expect(Number(watches()[0].query.timeoutSeconds)).toBeGreaterThanOrEqual(300);

    sim.apply(configMap('b'));
    sim.apply(configMap('a', { k: 'v' }));
    await sim.waitFor(() => informer.list().length === 2 && informer.list().some((o) => o.data?.k === 'v'), 5000, 'the watch events');
    const rv = sim.get('ConfigMap', NS, 'a')!.metadata.resourceVersion;

    sim.endWatches();
    await sim.waitFor(() => watches().length === 2, 5000, 'the watch to resume');
    expect(watches()[1].query.resourceVersion).toBe(rv);
    expect(lists()).toHaveLength(1);
    sim.delete('ConfigMap', NS, 'b');
    await sim.waitFor(() => informer.list().length === 1, 5000, 'the delete');
    expect(changes).toBeGreaterThanOrEqual(4);
    informer.stop();
  });

  it('lists again at once when the resourceVersion it resumes from has expired (410)', async () => {
    const informer = new Informer<KubeObject>(rest, CM_PATH, 'app=x', () => {}, log, 'configmaps');
    await informer.start();
    await sim.waitFor(() => watches().length === 1, 5000, 'the first watch');
    // The stream ends and more changes than the server keeps happen before the watch resumes.
    sim.endWatches();
    for (let i = 0; i < 8; i++) sim.apply(configMap(`c${i}`));
    await sim.waitFor(() => lists().length === 2 && informer.list().length === 8, 5000, 'the second list');
    expect(logs.some((l) => l.includes('watch expired; listing again'))).toBe(true);
    expect(logs.some((l) => l.includes('watch failed'))).toBe(false);
    informer.stop();
  });

  it('counts as not synced while the API server is down, keeps the old objects, and lists again after it returns', async () => {
    sim.apply(configMap('a'));
    const informer = new Informer<KubeObject>(rest, CM_PATH, 'app=x', () => {}, log, 'configmaps');
    await informer.start();
    const restart = sim.restart({ downMs: 300, forbiddenMs: 300 });
    await sim.waitFor(() => !informer.synced, 5000, 'the informer to notice');
    expect(informer.list().map((o) => o.metadata.name)).toEqual(['a']);
    await restart;
    sim.apply(configMap('b'));
    await sim.waitFor(() => informer.synced && informer.list().length === 2, 40_000, 'the informer to list again');
    expect(logs.some((l) => l.includes('watch failed; listing again'))).toBe(true);
    informer.stop();
  });
});
