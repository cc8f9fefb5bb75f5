/**
 * What the API server's authorizer is asked about a request, and how a denial reads: the request
 * attributes (verb, API group, resource, subresource, namespace, name) as kube-apiserver derives them
 * from the URL, and the 403 Forbidden Status it answers when no rule allows the request. The simulator
 * answers so while it comes back from a restart, before its RBAC caches are filled (`KubeSim.restart`).
 */
import { isWatch } from './kube-http';

/** The authorizer's view of one request. */
export interface RequestAttributes {
  readonly resourceRequest: boolean;
  readonly verb: string;
  readonly path: string;
  readonly apiGroup: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
}

/** Path segments that name a verb (`/api/v1/watch/...`), and the one of them that takes no subresource. */
const SPECIAL_VERBS = new Set(['proxy', 'watch']);
const SPECIAL_VERBS_NO_SUBRESOURCES = new Set(['proxy']);
/** `namespaces/<ns>/<x>` where `<x>` is a subresource of the namespace, not a resource inside it. */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

const METHOD_VERBS: Record<string, string> = { POST: 'create', GET: 'get', HEAD: 'get', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

/**
 * The attributes of a request, as `NewRequestInfo` in kubernetes v1.32
 * `staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go` derives them: `/api/<v>/...` and
 * `/apis/<g>/<v>/...` are resource requests, anything shorter or elsewhere a non-resource one (verb:
 * the lower-case method); GET without a name is `list`, or `watch` with `watch=true`, and takes its name
 * from a `metadata.name=` field selector; DELETE without a name is `deletecollection`.
 */
export function requestAttributes(method: string, path: string, query: Readonly<Record<string, string>>): RequestAttributes {
  const base = {
    resourceRequest: false,
    verb: method.toLowerCase(),
    path,
    apiGroup: '',
    resource: '',
    subresource: '',
    namespace: '',
    name: '',
  };
  let parts = path.split('/').filter((p) => p !== '');
  if (parts.length < 3 || (parts[0] !== 'api' && parts[0] !== 'apis')) return base;
  let apiGroup = '';
  if (parts[0] === 'apis') {
    if (parts.length < 4) return base;
    apiGroup = parts[1];
    parts = parts.slice(2);
  } else {
    parts = parts.slice(1);
  }
  parts = parts.slice(1); // the version
  let verb = METHOD_VERBS[method.toUpperCase()] ?? '';
  if (SPECIAL_VERBS.has(parts[0])) {
    if (parts.length < 2) return base;
    verb = parts[0];
    parts = parts.slice(1);
  }
  let namespace = '';
  if (parts[0] === 'namespaces' && parts.length > 1) {
    namespace = parts[1];
    if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2])) parts = parts.slice(2);
  }
  const [resource = '', pathName = '', sub = ''] = parts;
  const subresource = parts.length >= 3 && !SPECIAL_VERBS_NO_SUBRESOURCES.has(verb) ? sub : '';
  let name = pathName;
  if (name === '' && verb === 'get') {
    verb = isWatch(query) ? 'watch' : 'list';
    name = exactName(query.fieldSelector);
  }
  if (name === '' && verb === 'delete') verb = 'deletecollection';
  return { resourceRequest: true, verb, path, apiGroup, resource, subresource, namespace, name };
}

/** The name a field selector pins with `metadata.name=<name>` (or `==`), else ''. */
function exactName(selector: string | undefined): string {
  for (const term of (selector ?? '').split(',')) {
    const m = /^\s*metadata\.name\s*==?\s*(.*?)\s*$/.exec(term);
    if (m && m[1] !== '' && !m[1].includes('/') && m[1] !== '.' && m[1] !== '..') return m[1];
  }
  return '';
}

/** `responsewriters` escapes these in the message (its `sanitizer`). */
function sanitize(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * The 403 Status kube-apiserver answers when no authorizer allows a request: `ForbiddenStatusError`
 * and `forbiddenMessage` in kubernetes v1.32
 * `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go`, worded through
 * `NewForbidden` (`staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go`). The RBAC authorizer
 * (`plugin/pkg/auth/authorizer/rbac/rbac.go`) adds no reason when no rule matched, so none follows.
 * Details name the resource (without its subresource) and the object, empty fields left out.
 */
export function forbiddenStatus(user: string, a: RequestAttributes): Record<string, unknown> {
  let message: string;
  const details: Record<string, string> = {};
  if (!a.resourceRequest) {
    message = `forbidden: ${sanitize(`User ${JSON.stringify(user)} cannot ${a.verb} path ${JSON.stringify(a.path)}`)}`;
  } else {
    const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    const scope = a.namespace ? `in the namespace ${JSON.stringify(a.namespace)}` : 'at the cluster scope';
    const why = sanitize(
      `User ${JSON.stringify(user)} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.apiGroup)} ${scope}`,
    );
    const qualified = a.apiGroup ? `${a.resource}.${a.apiGroup}` : a.resource;
    message = a.name ? `${qualified} ${JSON.stringify(a.name)} is forbidden: ${why}` : `${qualified} is forbidden: ${why}`;
    if (a.name) details.name = a.name;
    if (a.apiGroup) details.group = a.apiGroup;
    if (a.resource) details.kind = a.resource;
  }
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Forbidden', details, code: 403 };
}
