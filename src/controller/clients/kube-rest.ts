/**
 * A small Kubernetes API client on Node's own `http`/`https`: where the API server is and how to log in
 * (in the cluster, from a kubeconfig file), one request, and a watch stream. It knows no kinds: the
 * callers give the paths and read plain JSON, as the API server sends it. A general client would hold
 * the type model of every API group for a controller that uses a handful of verbs.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';

/** Where the service account's token, CA and namespace are mounted in a Pod. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The path prefix of each API group the controller reads or writes. */
export const API = {
  core: 'api/v1',
  apps: 'apis/apps/v1',
  batch: 'apis/batch/v1',
  coordination: 'apis/coordination.k8s.io/v1',
  monitoring: 'apis/monitoring.coreos.com/v1',
} as const;

/** The path of a namespaced collection (`resource`), or of the object `name` in it. */
export function namespacedPath(group: string, namespace: string, resource: string, name?: string): string {
  return `/${group}/namespaces/${namespace}/${resource}${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;
}

/** The API server and the credentials to reach it. */
export interface KubeTarget {
  /** `https://host:port` (or `http:` for a test server), without a trailing slash. */
  readonly server: string;
  /** PEM of the CAs to trust. @default the system's */
  readonly ca?: Buffer;
  /** Client certificate and key (PEM). */
  readonly cert?: Buffer;
  readonly key?: Buffer;
  /** Skip verifying the server's certificate. @default false */
  readonly insecure?: boolean;
  /** The TLS server name to verify. @default the server's host */
  readonly serverName?: string;
  /** A bearer token. */
  readonly token?: string;
  /** A file holding the bearer token, read again as it changes (service account tokens rotate). */
  readonly tokenFile?: string;
  /** A credential plugin (`users[].user.exec`), run when its last answer expires. */
  readonly exec?: ExecConfig;
  /** The namespace of the kubeconfig's current context, or the Pod's own. @default none */
  readonly namespace?: string;
}

interface ExecConfig {
  readonly command: string;
  readonly args: string[];
  readonly env: Record<string, string>;
  readonly apiVersion: string;
  readonly dir: string;
}

/**
 * Where to find the API server, in the order other Kubernetes clients look: the given kubeconfig, the
 * first file of `$KUBECONFIG` that exists, `~/.kube/config`, then the Pod's service account.
 */
export function loadKubeTarget(
  kubeconfig?: string,
  env: NodeJS.ProcessEnv = process.env,
  serviceAccountDir = SERVICE_ACCOUNT_DIR,
): KubeTarget {
  if (kubeconfig) return fromKubeconfig(kubeconfig);
  const listed = env.KUBECONFIG?.split(delimiter).find((p) => p && existsSync(p));
  if (listed) return fromKubeconfig(listed);
  const home = join(env.HOME ?? homedir(), '.kube', 'config');
  if (existsSync(home)) return fromKubeconfig(home);
  if (env.KUBERNETES_SERVICE_HOST && existsSync(join(serviceAccountDir, 'token'))) {
    const host = env.KUBERNETES_SERVICE_HOST.includes(':') ? `[${env.KUBERNETES_SERVICE_HOST}]` : env.KUBERNETES_SERVICE_HOST;
    const nsFile = join(serviceAccountDir, 'namespace');
    const namespace = existsSync(nsFile) ? readFileSync(nsFile, 'utf8').trim() || undefined : undefined;
    return {
      server: `https://${host}:${env.KUBERNETES_SERVICE_PORT ?? '443'}`,
      ca: readFileSync(join(serviceAccountDir, 'ca.crt')),
      tokenFile: join(serviceAccountDir, 'token'),
      ...(namespace && { namespace }),
    };
  }
  throw new Error('no Kubernetes configuration: give --kubeconfig, set KUBECONFIG, or run in a Pod with a service account token');
}

/** The current context of a kubeconfig file (YAML or JSON); relative paths in it are relative to the file. */
export function fromKubeconfig(file: string): KubeTarget {
  // Read once at start-up: the YAML reader is loaded here only, and never in a Pod.
  const { load } = require('js-yaml') as typeof import('js-yaml');
  const doc = load(readFileSync(file, 'utf8')) as Kubeconfig | undefined;
  const fail = (what: string): never => {
    throw new Error(`${file}: ${what}`);
  };
  if (!doc || typeof doc !== 'object') return fail('not a kubeconfig (expected a mapping with clusters, users and contexts)');
  const current = doc['current-context'] ?? fail('no current-context');
  const context = doc.contexts?.find((c) => c.name === current)?.context ?? fail(`no context named ${JSON.stringify(current)}`);
  const cluster =
    doc.clusters?.find((c) => c.name === context.cluster)?.cluster ?? fail(`no cluster named ${JSON.stringify(context.cluster)}`);
  const user =
    context.user === undefined
      ? {}
      : (doc.users?.find((u) => u.name === context.user)?.user ?? fail(`no user named ${JSON.stringify(context.user)}`));
  const dir = dirname(file);
  const path = (p: string) => (isAbsolute(p) ? p : join(dir, p));
  const bytes = (data: string | undefined, p: string | undefined) =>
    data ? Buffer.from(data, 'base64') : p ? readFileSync(path(p)) : undefined;
  const server = cluster.server || fail(`cluster ${JSON.stringify(context.cluster)} has no server`);
  if (user['auth-provider'])
    fail(
      `user ${JSON.stringify(context.user)} uses an auth-provider, which is not supported: use a token, a client certificate or an exec plugin`,
    );
  const exec = user.exec;
  return {
    server: server.replace(/\/+$/, ''),
    ca: bytes(cluster['certificate-authority-data'], cluster['certificate-authority']),
    insecure: cluster['insecure-skip-tls-verify'] === true,
    serverName: cluster['tls-server-name'],
    cert: bytes(user['client-certificate-data'], user['client-certificate']),
    key: bytes(user['client-key-data'], user['client-key']),
    token: user.token,
    tokenFile: user.tokenFile ? path(user.tokenFile) : undefined,
    exec: exec && {
      command: exec.command,
      args: exec.args ?? [],
      env: Object.fromEntries((exec.env ?? []).map((e) => [e.name, e.value])),
      apiVersion: exec.apiVersion ?? 'client.authentication.k8s.io/v1',
      dir,
    },
    ...(context.namespace && { namespace: context.namespace }),
  };
}

interface Kubeconfig {
  'current-context'?: string;
  contexts?: { name: string; context: { cluster: string; user?: string; namespace?: string } }[];
  clusters?: {
    name: string;
    cluster: {
      server?: string;
      'certificate-authority'?: string;
      'certificate-authority-data'?: string;
      'insecure-skip-tls-verify'?: boolean;
      'tls-server-name'?: string;
    };
  }[];
  users?: { name: string; user: KubeconfigUser }[];
}

interface KubeconfigUser {
  token?: string;
  tokenFile?: string;
  'client-certificate'?: string;
  'client-certificate-data'?: string;
  'client-key'?: string;
  'client-key-data'?: string;
  exec?: { command: string; args?: string[]; env?: { name: string; value: string }[]; apiVersion?: string };
  'auth-provider'?: unknown;
}

/** The API server answered with an error status; `body` is its text (usually a `Status`). */
export class KubeHttpError extends Error {
  constructor(
    readonly code: number,
    readonly body: string,
    readonly headers: http.IncomingHttpHeaders,
  ) {
    super(`HTTP ${code}: ${statusMessage(body) ?? 'no message'}`);
  }
}

/** The `message` of a `Status` body, or the body's start. */
export function statusMessage(body: string): string | undefined {
  try {
    const m = (JSON.parse(body) as { message?: unknown }).message;
    if (typeof m === 'string') return m;
  } catch {
    // not JSON: the text itself
  }
  return body.slice(0, 200) || undefined;
}

export interface RequestOptions {
  /** Query parameters; undefined ones are left out. */
  readonly query?: Record<string, string | number | boolean | undefined>;
  /** A JSON body. */
  readonly body?: unknown;
  /** @default 'application/json' (with a body) */
  readonly contentType?: string;
}

/** One event of a watch stream. */
export interface WatchEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  readonly object: any;
}

/** How long a request may wait for an answer (a watch: for its headers). */
const REQUEST_TIMEOUT_MS = 30_000;
/** How often a token file is read again. */
const TOKEN_REFRESH_MS = 60_000;

export class KubeRest {
  private readonly agent: http.Agent;
  private readonly secure: boolean;
  private readonly base: URL;
  private token?: { value: string; until: number };

  constructor(readonly target: KubeTarget) {
    this.base = new URL(target.server);
    this.secure = this.base.protocol === 'https:';
    this.agent = this.secure
      ? new https.Agent({
          keepAlive: true,
          ca: target.ca,
          cert: target.cert,
          key: target.key,
          rejectUnauthorized: !target.insecure,
          servername: target.serverName,
        })
      : new http.Agent({ keepAlive: true });
  }

  /** Sends a request and reads its JSON answer; a status of 300 or more throws `KubeHttpError`. */
  async request<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const res = await this.open(method, path, opts);
    const text = await readText(res);
    if ((res.statusCode ?? 0) >= 300) throw new KubeHttpError(res.statusCode ?? 0, text, res.headers);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /**
   * Watches `path` from `resourceVersion`: `onEvent` gets each event in order. Resolves when the server
   * ends the stream (its timeout), rejects when the request fails or the connection breaks; `abort`
   * ends it at once (resolving).
   */
  watch(path: string, query: RequestOptions['query'], onEvent: (e: WatchEvent) => void): { done: Promise<void>; abort: () => void } {
    let req: http.ClientRequest | undefined;
    let aborted = false;
    const done = (async () => {
      const res = await this.open('GET', path, { query: { ...query, watch: 1 } }, (r) => (req = r));
      if ((res.statusCode ?? 0) >= 300) throw new KubeHttpError(res.statusCode ?? 0, await readText(res), res.headers);
      res.setEncoding('utf8');
      await new Promise<void>((resolve, reject) => {
        let buffered = '';
        res.on('data', (chunk: string) => {
          buffered += chunk;
          let nl: number;
          while ((nl = buffered.indexOf('\n')) >= 0) {
            const line = buffered.slice(0, nl).trim();
            buffered = buffered.slice(nl + 1);
            if (!line) continue;
            try {
              onEvent(JSON.parse(line) as WatchEvent);
            } catch (err) {
              res.destroy(err as Error);
              return;
            }
          }
        });
        res.on('end', () => resolve());
        res.on('error', (err) => (aborted ? resolve() : reject(err)));
        res.on('close', () => (aborted || res.complete ? resolve() : reject(new Error('watch connection closed'))));
      });
    })().catch((err) => {
      if (!aborted) throw err;
    });
    return {
      done,
      abort: () => {
        aborted = true;
        req?.destroy();
      },
    };
  }

  /** Closes idle connections. */
  close(): void {
    this.agent.destroy();
  }

  private headers(): http.OutgoingHttpHeaders {
    const token = this.bearer();
    return { Accept: 'application/json', 'User-Agent': 'tidb-gitops-controller', ...(token && { Authorization: `Bearer ${token}` }) };
  }

  private bearer(): string | undefined {
    const t = this.target;
    if (t.token) return t.token;
    const now = Date.now();
    if (this.token && now < this.token.until) return this.token.value;
    if (t.tokenFile) {
      this.token = { value: readFileSync(t.tokenFile, 'utf8').trim(), until: now + TOKEN_REFRESH_MS };
      return this.token.value;
    }
    if (t.exec) {
      this.token = runExec(t.exec, now);
      return this.token.value;
    }
    return undefined;
  }

  private async open(
    method: string,
    path: string,
    opts: RequestOptions,
    onRequest?: (r: http.ClientRequest) => void,
  ): Promise<http.IncomingMessage> {
    const url = new URL(this.base.pathname.replace(/\/$/, '') + path, this.base);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const headers = this.headers();
    if (body !== undefined)
      Object.assign(headers, { 'Content-Type': opts.contentType ?? 'application/json', 'Content-Length': Buffer.byteLength(body) });
    const send = this.secure ? https.request : http.request;
    return new Promise((resolve, reject) => {
      const req = send(url, { method, headers, agent: this.agent, timeout: REQUEST_TIMEOUT_MS }, (res) => {
        // A watch stays open for minutes: the timeout covers waiting for its headers only.
        req.setTimeout(0);
        resolve(res);
      });
      req.on('timeout', () => req.destroy(new Error(`no answer from ${url.host} in ${REQUEST_TIMEOUT_MS / 1000} s`)));
      req.on('error', reject);
      onRequest?.(req);
      req.end(body);
    });
  }
}

function readText(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

/** Runs a kubeconfig credential plugin; its token is kept until it expires (a minute when it says nothing). */
function runExec(exec: ExecConfig, now: number): { value: string; until: number } {
  const input = JSON.stringify({ apiVersion: exec.apiVersion, kind: 'ExecCredential', spec: { interactive: false } });
  const out = execFileSync(exec.command, exec.args, {
    cwd: exec.dir,
    env: { ...process.env, ...exec.env, KUBERNETES_EXEC_INFO: input },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const status = (JSON.parse(out) as { status?: { token?: string; expirationTimestamp?: string } }).status;
  if (!status?.token)
    throw new Error(`credential plugin ${exec.command} gave no token (client certificates from a plugin are not supported)`);
  const expires = status.expirationTimestamp ? Date.parse(status.expirationTimestamp) - 10_000 : now + TOKEN_REFRESH_MS;
  return { value: status.token, until: expires };
}
