/**
 * The REST surface of the simulated API server: maps Kubernetes paths and verbs onto the registry,
 * the store and watch streams, and writes JSON answers (errors as `Status` bodies).
 */
import type { ServerResponse } from 'node:http';
import { KubeApiError } from './kube-errors';
import { type DeleteOptions, parseJson, type Registry } from './kube-registry';
import { apiGroupList, apiResourceList, apiVersionOf, apiVersions, type ResourceType, typeByPath, versionInfo } from './kube-resources';
import { parseFieldSelector, parseLabelSelector } from './kube-selectors';
import type { ObjectStore } from './kube-store';
import type { WatchHub } from './kube-watch';
import { isObject } from './kube-util';

/** What a request is about. */
export type Route =
  | { readonly type: 'document'; readonly body: unknown }
  | {
      readonly type: 'resource';
      readonly rt: ResourceType;
      readonly namespace?: string;
      readonly name?: string;
      readonly subresource?: 'status';
    };

/** The parts of the simulation the REST layer serves from. */
export interface HttpBackend {
  readonly store: ObjectStore;
  readonly registry: Registry;
  readonly watches: WatchHub;
}

/** One request, body already read. */
export interface ApiRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly contentType?: string;
  readonly body: string;
}

/** Whether the query asks for a watch (`watch=true` or `watch=1`). */
export function isWatch(query: Readonly<Record<string, string>>): boolean {
  return query.watch === 'true' || query.watch === '1';
}

/**
 * Resolves a path: discovery documents (`/api`, `/api/v1`, `/apis`, `/apis/<g>/<v>`, `/version`),
 * `.../namespaces/<ns>/<resource>[/<name>[/status]]`, or `.../<resource>` across all namespaces.
 */
export function parseRoute(pathname: string): Route | undefined {
  if (pathname === '/version' || pathname === '/version/') return { type: 'document', body: versionInfo() };
  const segs = pathname.split('/').filter((s) => s !== '');
  let group: string;
  let version: string;
  let rest: string[];
  if (segs[0] === 'api') {
    if (segs.length === 1) return { type: 'document', body: apiVersions() };
    [group, version, rest] = ['', segs[1], segs.slice(2)];
  } else if (segs[0] === 'apis') {
    if (segs.length === 1) return { type: 'document', body: apiGroupList() };
    if (segs.length === 2) return undefined;
    [group, version, rest] = [segs[1], segs[2], segs.slice(3)];
  } else {
    return undefined;
  }
  if (rest.length === 0) {
    const doc = apiResourceList(group, version);
    return doc ? { type: 'document', body: doc } : undefined;
  }
  let namespace: string | undefined;
  let resource: string;
  let name: string | undefined;
  let sub: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3 && rest.length <= 5) {
    [namespace, resource, name, sub] = rest.slice(1);
  } else if (rest.length === 1) {
    resource = rest[0];
  } else {
    return undefined;
  }
  const rt = typeByPath(group, version, resource);
  if (!rt || (sub !== undefined && (sub !== 'status' || !rt.hasStatus))) return undefined;
  return { type: 'resource', rt, namespace, name, subresource: sub === 'status' ? 'status' : undefined };
}

/** Writes a JSON answer. */
export function sendJson(res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

/** Serves one request; every failure becomes a `Status` answer. */
export function serveApi(backend: HttpBackend, req: ApiRequest, res: ServerResponse): void {
  try {
    dispatch(backend, req, res);
  } catch (e) {
    const err = e instanceof KubeApiError ? e : new KubeApiError(500, e instanceof Error ? e.message : String(e));
    if (!res.headersSent) sendJson(res, err.code, err.toStatus());
    else res.end();
  }
}

function methodNotAllowed(): KubeApiError {
  return new KubeApiError(405, 'the server does not allow this method on the requested resource', 'MethodNotAllowed');
}

function dispatch(b: HttpBackend, req: ApiRequest, res: ServerResponse): void {
  const route = parseRoute(req.path);
  if (!route) throw new KubeApiError(404, 'the server could not find the requested resource', 'NotFound');
  if (route.type === 'document') {
    if (req.method !== 'GET') throw methodNotAllowed();
    return sendJson(res, 200, route.body);
  }
  const { rt, namespace, name, subresource } = route;
  const q = req.query;
  const dryRun = q.dryRun === 'All';
  switch (req.method) {
    case 'GET': {
      if (name !== undefined) return sendJson(res, 200, b.registry.get(rt, namespace!, name));
      const filter = { rt, namespace, labels: parseLabelSelector(q.labelSelector), fields: parseFieldSelector(q.fieldSelector) };
      if (isWatch(q)) {
        return b.watches.open(res, filter, {
          resourceVersion: q.resourceVersion,
          allowBookmarks: q.allowWatchBookmarks === 'true',
          timeoutSeconds: q.timeoutSeconds !== undefined ? Number(q.timeoutSeconds) : undefined,
          sendInitialEvents: q.sendInitialEvents === 'true',
        });
      }
      const items = b.store.list(rt, namespace).filter((o) => filter.labels(o) && filter.fields(o));
      return sendJson(res, 200, {
        kind: `${rt.kind}List`,
        apiVersion: apiVersionOf(rt),
        metadata: { resourceVersion: b.store.resourceVersion },
        // The API server leaves apiVersion and kind out of list items.
        items: items.map(({ apiVersion: _v, kind: _k, ...rest }) => rest),
      });
    }
    case 'POST':
      if (name !== undefined || namespace === undefined) throw methodNotAllowed();
      return sendJson(res, 201, b.registry.create(rt, namespace, parseJson(req.body), { dryRun, fieldManager: q.fieldManager }));
    case 'PUT':
      if (name === undefined) throw methodNotAllowed();
      return sendJson(
        res,
        200,
        b.registry.replace(rt, namespace!, name, parseJson(req.body), { subresource, dryRun, fieldManager: q.fieldManager }),
      );
    case 'PATCH': {
      if (name === undefined) throw methodNotAllowed();
      const { object, created } = b.registry.patch(rt, namespace!, name, req.contentType ?? '', req.body, {
        subresource,
        dryRun,
        fieldManager: q.fieldManager,
        force: q.force === 'true',
      });
      return sendJson(res, created ? 201 : 200, object);
    }
    case 'DELETE': {
      if (subresource !== undefined || namespace === undefined) throw methodNotAllowed();
      const opts = deleteOptions(q, req.body, dryRun);
      if (name !== undefined) return sendJson(res, 200, b.registry.delete(rt, namespace, name, opts));
      // DELETE on a collection: every object the selectors match.
      const labels = parseLabelSelector(q.labelSelector);
      const fields = parseFieldSelector(q.fieldSelector);
      const doomed = b.store.list(rt, namespace).filter((o) => labels(o) && fields(o));
      for (const o of doomed) b.registry.delete(rt, namespace, o.metadata.name, opts);
      return sendJson(res, 200, {
        kind: `${rt.kind}List`,
        apiVersion: apiVersionOf(rt),
        metadata: { resourceVersion: b.store.resourceVersion },
        items: doomed,
      });
    }
    default:
      throw methodNotAllowed();
  }
}

/** DeleteOptions from the query and/or a JSON body (the body wins). */
function deleteOptions(q: Readonly<Record<string, string>>, rawBody: string, dryRun: boolean): DeleteOptions {
  const body = rawBody.trim() === '' ? {} : parseJson(rawBody);
  const b = isObject(body) ? body : {};
  const grace = b.gracePeriodSeconds ?? (q.gracePeriodSeconds !== undefined ? Number(q.gracePeriodSeconds) : undefined);
  let propagationPolicy: string | undefined = b.propagationPolicy ?? q.propagationPolicy;
  if (propagationPolicy === undefined && (b.orphanDependents === true || q.orphanDependents === 'true')) propagationPolicy = 'Orphan';
  return {
    gracePeriodSeconds: typeof grace === 'number' && Number.isFinite(grace) ? grace : undefined,
    propagationPolicy,
    preconditions: isObject(b.preconditions) ? b.preconditions : undefined,
    dryRun: dryRun || (Array.isArray(b.dryRun) && b.dryRun.includes('All')),
  };
}
