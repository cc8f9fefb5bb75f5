/**
 * A small REST client for the real API server in tests: JSON requests over HTTPS with a client
 * certificate or a bearer token, the four PATCH types, and watches. Test code only, written apart from
 * the controller's own client (src/controller/clients/kube-rest.ts) so that neither checks itself.
 */
import https from 'node:https';
import { readFileSync } from 'node:fs';

export type Obj = Record<string, any>;

export interface KubeAuth {
  readonly ca: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly token?: string;
}

export interface KubeResponse {
  readonly status: number;
  readonly body: any;
  readonly text: string;
}

export type PatchType = 'merge' | 'strategic' | 'json' | 'apply';

const PATCH_CONTENT_TYPE: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
  apply: 'application/apply-patch+yaml',
};

/** Plural resource and API prefix of the kinds the tests touch. */
const RESOURCES: Record<string, { plural: string; namespaced: boolean }> = {
  Pod: { plural: 'pods', namespaced: true },
  Service: { plural: 'services', namespaced: true },
  ConfigMap: { plural: 'configmaps', namespaced: true },
  Secret: { plural: 'secrets', namespaced: true },
  ServiceAccount: { plural: 'serviceaccounts', namespaced: true },
  PersistentVolumeClaim: { plural: 'persistentvolumeclaims', namespaced: true },
  PersistentVolume: { plural: 'persistentvolumes', namespaced: false },
  StorageClass: { plural: 'storageclasses', namespaced: false },
  Event: { plural: 'events', namespaced: true },
  Namespace: { plural: 'namespaces', namespaced: false },
  Node: { plural: 'nodes', namespaced: false },
  StatefulSet: { plural: 'statefulsets', namespaced: true },
  Deployment: { plural: 'deployments', namespaced: true },
  ReplicaSet: { plural: 'replicasets', namespaced: true },
  ControllerRevision: { plural: 'controllerrevisions', namespaced: true },
  CronJob: { plural: 'cronjobs', namespaced: true },
  Job: { plural: 'jobs', namespaced: true },
  Role: { plural: 'roles', namespaced: true },
  RoleBinding: { plural: 'rolebindings', namespaced: true },
  ClusterRole: { plural: 'clusterroles', namespaced: false },
  ClusterRoleBinding: { plural: 'clusterrolebindings', namespaced: false },
  Lease: { plural: 'leases', namespaced: true },
  PodDisruptionBudget: { plural: 'poddisruptionbudgets', namespaced: true },
  NetworkPolicy: { plural: 'networkpolicies', namespaced: true },
  Ingress: { plural: 'ingresses', namespaced: true },
  PriorityClass: { plural: 'priorityclasses', namespaced: false },
  CustomResourceDefinition: { plural: 'customresourcedefinitions', namespaced: false },
  TidbCluster: { plural: 'tidbclusters', namespaced: true },
  PodMonitor: { plural: 'podmonitors', namespaced: true },
  PrometheusRule: { plural: 'prometheusrules', namespaced: true },
};

/** `/api/v1/namespaces/ns/pods[/name]` for an apiVersion and kind. */
export function resourcePath(apiVersion: string, kind: string, namespace?: string, name?: string): string {
  const r = RESOURCES[kind];
  if (!r) throw new Error(`resourcePath: kind ${kind} is not known to the test client`);
  const prefix = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const ns = r.namespaced ? `/namespaces/${namespace ?? 'default'}` : '';
  return `${prefix}${ns}/${r.plural}${name === undefined ? '' : `/${name}`}`;
}

export const pathOf = (o: Obj): string => resourcePath(o.apiVersion, o.kind, o.metadata?.namespace, o.metadata?.name);

export class KubeClient {
  constructor(
    readonly server: string,
    private readonly auth: KubeAuth,
  ) {}

  static fromFiles(server: string, ca: string, user: { cert: string; key: string } | { token: string }): KubeClient {
    const auth: KubeAuth =
      'token' in user
        ? { ca: readFileSync(ca), token: user.token }
        : { ca: readFileSync(ca), cert: readFileSync(user.cert), key: readFileSync(user.key) };
    return new KubeClient(server, auth);
  }

  /** One request; resolves with any status. */
  request(method: string, path: string, opts: { body?: unknown; contentType?: string; timeoutMs?: number } = {}): Promise<KubeResponse> {
    const payload = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    return new Promise((resolve, reject) => {
      const req = https.request(
        `${this.server}${path}`,
        {
          method,
          ca: this.auth.ca,
          cert: this.auth.cert,
          key: this.auth.key,
          agent: false,
          timeout: opts.timeoutMs ?? 30_000,
          headers: {
            accept: 'application/json',
            ...(this.auth.token ? { authorization: `Bearer ${this.auth.token}` } : {}),
            ...(payload !== undefined
              ? { 'content-type': opts.contentType ?? 'application/json', 'content-length': Buffer.byteLength(payload) }
              : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let body: any = text;
            try {
              body = JSON.parse(text);
            } catch {
              // not JSON (a plain /readyz answer)
            }
            resolve({ status: res.statusCode ?? 0, body, text });
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** Like `request`, but a status outside 2xx is an error that names the request and the answer. */
  async ok(method: string, path: string, opts: { body?: unknown; contentType?: string } = {}): Promise<any> {
    const res = await this.request(method, path, opts);
    if (res.status < 200 || res.status >= 300)
      throw new KubeRequestError(`${method} ${path}: HTTP ${res.status}: ${res.body?.message ?? res.text.slice(0, 300)}`, res.status);
    return res.body;
  }

  /** The object, or undefined on 404. */
  async get(path: string): Promise<Obj | undefined> {
    const res = await this.request('GET', path);
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw new KubeRequestError(`GET ${path}: HTTP ${res.status}: ${res.body?.message ?? res.text}`, res.status);
    return res.body;
  }

  async list(path: string, query = ''): Promise<Obj[]> {
    return (await this.ok('GET', `${path}${query ? `?${query}` : ''}`)).items ?? [];
  }

  create(o: Obj, query = ''): Promise<Obj> {
    return this.ok('POST', `${resourcePath(o.apiVersion, o.kind, o.metadata?.namespace)}${query ? `?${query}` : ''}`, { body: o });
  }

  patch(path: string, type: PatchType, body: unknown, query = ''): Promise<Obj> {
    return this.ok('PATCH', `${path}${query ? `?${query}` : ''}`, { body, contentType: PATCH_CONTENT_TYPE[type] });
  }

  /** Server-side apply of one object, forced, as Flux (and Argo CD with ServerSideApply=true) does. */
  apply(o: Obj, fieldManager: string): Promise<Obj> {
    return this.patch(pathOf(o), 'apply', o, `fieldManager=${encodeURIComponent(fieldManager)}&force=true`);
  }

  /** Deletes; 404 counts as done. */
  async delete(path: string, body?: Obj): Promise<void> {
    const res = await this.request('DELETE', path, { body });
    if (res.status !== 404 && (res.status < 200 || res.status >= 300))
      throw new KubeRequestError(`DELETE ${path}: HTTP ${res.status}: ${res.body?.message ?? res.text}`, res.status);
  }

  /**
   * Watches a collection, relisting when the watch ends or its resourceVersion expires: `onEvent`
   * gets every ADDED, MODIFIED and DELETED object (a relist sends ADDED for what exists). Returns a
   * stop function.
   */
  watch(path: string, query: string, onEvent: (type: string, o: Obj) => void): () => void {
    let stopped = false;
    let current: ReturnType<typeof https.request> | undefined;
    const known = new Map<string, Obj>();
    const keyOf = (o: Obj) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;
    const run = async (): Promise<void> => {
      while (!stopped) {
        let rv: string;
        try {
          const list = await this.ok('GET', `${path}${query ? `?${query}` : ''}`);
          rv = list.metadata?.resourceVersion ?? '';
          const seen = new Set<string>();
          for (const o of list.items ?? []) {
            seen.add(keyOf(o));
            known.set(keyOf(o), o);
            onEvent('ADDED', o);
          }
          for (const [k, o] of known) {
            if (!seen.has(k)) {
              known.delete(k);
              onEvent('DELETED', o);
            }
          }
        } catch {
          await new Promise((r) => setTimeout(r, 200));
          continue;
        }
        await new Promise<void>((resolve) => {
          const sep = query ? '&' : '';
          const req = https.request(
            `${this.server}${path}?${query}${sep}watch=1&allowWatchBookmarks=false&resourceVersion=${rv}`,
            {
              ca: this.auth.ca,
              cert: this.auth.cert,
              key: this.auth.key,
              agent: false,
              headers: { accept: 'application/json', ...(this.auth.token ? { authorization: `Bearer ${this.auth.token}` } : {}) },
            },
            (res) => {
              let buffer = '';
              res.setEncoding('utf8');
              res.on('data', (chunk: string) => {
                buffer += chunk;
                let nl: number;
                while ((nl = buffer.indexOf('\n')) >= 0) {
                  const line = buffer.slice(0, nl);
                  buffer = buffer.slice(nl + 1);
                  if (!line.trim()) continue;
                  const ev = JSON.parse(line) as { type: string; object: Obj };
                  if (ev.type === 'ERROR') {
                    req.destroy();
                    return;
                  }
                  if (ev.type === 'DELETED') known.delete(keyOf(ev.object));
                  else known.set(keyOf(ev.object), ev.object);
                  onEvent(ev.type, ev.object);
                }
              });
              res.on('end', resolve);
              res.on('error', () => resolve());
            },
          );
          current = req;
          req.on('error', () => resolve());
          req.on('close', () => resolve());
          req.end();
        });
      }
    };
    void run();
    return () => {
      stopped = true;
      current?.destroy();
    };
  }
}

export class KubeRequestError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}
