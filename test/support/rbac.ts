/**
 * Checks recorded Kubernetes API requests (KubeSim's `requests`) against RBAC rules, the way the API
 * server's RBAC authorizer decides them: each request becomes request attributes (verb, API group,
 * resource and subresource, name, namespace) as `RequestInfoFactory` in k8s.io/apiserver derives
 * them, and is allowed if one rule of one role covers them.
 *
 * ```ts
 * const role = render(cluster).find((o) => o.kind === 'Role')!;
 * expect(rbacViolations(role, world.kube.requests.filter((r) => r.time >= controllerStart))).toEqual([]);
 * ```
 */

/** An rbac.authorization.k8s.io/v1 PolicyRule. */
export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  /** Only for ClusterRoles: paths such as `/healthz` or `/metrics*`. */
  nonResourceURLs?: string[];
}

/**
 * A Role or ClusterRole (only `rules` is needed). A `kind: 'Role'`, or any role with a
 * `metadata.namespace` that is not a ClusterRole, grants only inside that namespace.
 */
export interface RbacRole {
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  rules: PolicyRule[];
}

/** One HTTP request, as KubeSim records it (`path` without the query). */
export interface ApiRequestLike {
  method: string;
  path: string;
  query?: Readonly<Record<string, string>>;
}

/** What the authorizer is asked about one request. */
export interface RequestAttributes {
  resourceRequest: boolean;
  /** get, list, watch, create, update, patch, delete, deletecollection; for non-resource requests the lower-case method. */
  verb: string;
  /** API group, `''` for the core group. */
  apiGroup: string;
  apiVersion: string;
  /** Plural resource name, e.g. `pods`. */
  resource: string;
  /** e.g. `status`, `eviction`; `''` for none. */
  subresource: string;
  /** `''` for none (creates, lists and watches without a `metadata.name=` field selector). */
  name: string;
  /** `''` for cluster-wide requests. */
  namespace: string;
  path: string;
}

export interface RbacCheckOptions {
  /**
   * Discovery and version documents (`/api`, `/api/v1`, `/apis`, `/apis/<group>[/<version>]`,
   * `/version`, `/openapi/...`) are open to every authenticated user by Kubernetes' default
   * `system:discovery` and `system:public-info-viewer` ClusterRoles; they are allowed unless this is set.
   * @default false
   */
  checkDiscovery?: boolean;
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);
const TRUE_VALUES = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);

/** Whether the query asks for a watch, as Go's `strconv.ParseBool` reads `watch`. */
function watchRequested(query: Readonly<Record<string, string>>): boolean {
  return query.watch !== undefined && TRUE_VALUES.has(query.watch);
}

/** The object name a `fieldSelector` pins with `metadata.name=<n>` or `metadata.name==<n>`, if any. */
function nameFromFieldSelector(selector: string | undefined): string {
  if (!selector) return '';
  for (const term of selector.split(',')) {
    const m = /^\s*metadata\.name\s*==?\s*(.+?)\s*$/.exec(term);
    if (m && !m[1].startsWith('=')) return m[1];
  }
  return '';
}

/** The request attributes of one request, as the API server derives them. */
export function requestAttributes(req: ApiRequestLike): RequestAttributes {
  const query = req.query ?? {};
  const path = req.path;
  const nonResource: RequestAttributes = {
    resourceRequest: false,
    verb: req.method.toLowerCase(),
    apiGroup: '',
    apiVersion: '',
    resource: '',
    subresource: '',
    name: '',
    namespace: '',
    path,
  };
  let parts = path.split('/').filter((p) => p !== '');
  let group: string;
  let version: string;
  if (parts[0] === 'api') {
    if (parts.length < 3) return nonResource;
    [group, version, parts] = ['', parts[1], parts.slice(2)];
  } else if (parts[0] === 'apis') {
    if (parts.length < 4) return nonResource;
    [group, version, parts] = [parts[1], parts[2], parts.slice(3)];
  } else {
    return nonResource;
  }
  let verb: string;
  switch (req.method.toUpperCase()) {
    case 'POST':
      verb = 'create';
      break;
    case 'GET':
    case 'HEAD':
      verb = 'get';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = 'delete';
      break;
    default:
      verb = req.method.toLowerCase();
  }
  // The deprecated `/watch/` path prefix.
  if (parts[0] === 'watch') {
    parts = parts.slice(1);
    verb = 'watch';
  }
  let namespace = '';
  if (parts[0] === 'namespaces') {
    if (parts.length > 1) {
      namespace = parts[1];
      // `/namespaces/<ns>` and `/namespaces/<ns>/status` are about the Namespace object itself.
      if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2])) parts = parts.slice(2);
    }
  }
  const [resource = '', name = '', subresource = ''] = parts;
  const attrs: RequestAttributes = {
    resourceRequest: true,
    verb,
    apiGroup: group,
    apiVersion: version,
    resource,
    subresource,
    name,
    namespace,
    path,
  };
  if (resource === 'namespaces') attrs.namespace = name;
  if (attrs.name === '' && attrs.verb === 'get') {
    attrs.verb = watchRequested(query) ? 'watch' : 'list';
    attrs.name = nameFromFieldSelector(query.fieldSelector);
  }
  if (attrs.name === '' && attrs.verb === 'delete') attrs.verb = 'deletecollection';
  return attrs;
}

/** Whether `path` is a discovery or version document every authenticated user may read. */
function isDiscovery(a: RequestAttributes): boolean {
  if (a.resourceRequest || a.verb !== 'get') return false;
  const p = a.path.replace(/\/+$/, '') || '/';
  return (
    p === '/api' ||
    /^\/api\/[^/]+$/.test(p) ||
    p === '/apis' ||
    /^\/apis\/[^/]+(\/[^/]+)?$/.test(p) ||
    p === '/version' ||
    p.startsWith('/openapi/') ||
    p === '/healthz' ||
    p === '/livez' ||
    p === '/readyz'
  );
}

const matchesAny = (list: string[] | undefined, value: string): boolean => (list ?? []).some((x) => x === '*' || x === value);

/** Whether one rule allows the request, by the rules of k8s.io/kubernetes/pkg/apis/rbac/v1 helpers. */
export function ruleAllows(rule: PolicyRule, a: RequestAttributes): boolean {
  if (!matchesAny(rule.verbs, a.verb)) return false;
  if (!a.resourceRequest) {
    return (rule.nonResourceURLs ?? []).some((u) => u === '*' || u === a.path || (u.endsWith('*') && a.path.startsWith(u.slice(0, -1))));
  }
  if (!matchesAny(rule.apiGroups, a.apiGroup)) return false;
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const resourceOk = (rule.resources ?? []).some(
    (r) => r === '*' || r === combined || (a.subresource !== '' && r === `*/${a.subresource}`),
  );
  if (!resourceOk) return false;
  const names = rule.resourceNames ?? [];
  // A request without a name (create, list or watch of a collection) matches no resourceNames rule.
  return names.length === 0 || names.includes(a.name);
}

/** Whether a role grants in the request's namespace: a Role only in its own. */
function roleApplies(role: RbacRole, a: RequestAttributes): boolean {
  const namespaced = role.kind === 'Role' || (role.kind !== 'ClusterRole' && role.metadata?.namespace !== undefined);
  if (!namespaced) return true;
  if (!a.resourceRequest) return false;
  return a.namespace !== '' && (role.metadata?.namespace === undefined || role.metadata.namespace === a.namespace);
}

/** The request attributes in words: `patch statefulsets.apps "c-pd" in namespace "ns"`. */
export function describeAttributes(a: RequestAttributes): string {
  if (!a.resourceRequest) return `${a.verb} non-resource URL ${a.path}`;
  const resource = `${a.resource}${a.subresource ? `/${a.subresource}` : ''}${a.apiGroup ? `.${a.apiGroup}` : ''}`;
  const name = a.name ? ` "${a.name}"` : '';
  const where = a.namespace ? ` in namespace "${a.namespace}"` : ' cluster-wide';
  return `${a.verb} ${resource}${name}${where}`;
}

/**
 * One readable line per kind of request no rule of the role(s) allows, in order of first occurrence:
 * `not allowed: watch pods in namespace "ns" (GET /api/v1/namespaces/ns/pods?watch=true, 3 requests)`.
 * Requests that come to the same attributes share a line, which names the first of them and how many
 * there were. An empty list means the role allows every request.
 */
export function rbacViolations(role: RbacRole | RbacRole[], requests: readonly ApiRequestLike[], opts: RbacCheckOptions = {}): string[] {
  const roles = Array.isArray(role) ? role : [role];
  const denied = new Map<string, { example: ApiRequestLike; count: number }>();
  for (const req of requests) {
    const a = requestAttributes(req);
    if (!opts.checkDiscovery && isDiscovery(a)) continue;
    if (roles.some((r) => roleApplies(r, a) && r.rules.some((rule) => ruleAllows(rule, a)))) continue;
    const key = describeAttributes(a);
    const seen = denied.get(key);
    if (seen) seen.count++;
    else denied.set(key, { example: req, count: 1 });
  }
  return [...denied].map(([what, { example, count }]) => {
    const q = new URLSearchParams(example.query ?? {}).toString();
    const times = count > 1 ? `, ${count} requests` : '';
    return `not allowed: ${what} (${example.method} ${example.path}${q ? `?${q}` : ''}${times})`;
  });
}

/**
 * The requests of a simulated world that its rendered Role does not allow, leaving out the writes a
 * test made itself under `ownManager` (as a user or the kubelet would).
 */
export function worldViolations(
  world: { objects: readonly Record<string, any>[]; kube: { requests: readonly (ApiRequestLike & { fieldManager?: string })[] } },
  ownManager?: string,
): string[] {
  const role = world.objects.find((o) => o.kind === 'Role') as RbacRole | undefined;
  if (!role) return ['the rendered objects have no Role'];
  return rbacViolations(
    role,
    world.kube.requests.filter((r) => ownManager === undefined || r.fieldManager !== ownManager),
  );
}
