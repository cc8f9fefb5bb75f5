/**
 * The resource types the simulated API server serves, and the discovery documents that describe
 * them (clients such as kubectl read `/api/v1` or `/apis/<group>/<version>` to map a
 * kind onto its REST path).
 */

/** One namespaced REST resource, e.g. `apps/v1 statefulsets`. */
export interface ResourceType {
  /** API group; `''` for the core group. */
  readonly group: string;
  readonly version: string;
  /** Plural lower-case name used in paths. */
  readonly resource: string;
  readonly kind: string;
  /** Whether the type has a `/status` subresource (main-resource writes then keep the stored status). */
  readonly hasStatus: boolean;
}

function rt(group: string, version: string, resource: string, kind: string, hasStatus = false): ResourceType {
  return { group, version, resource, kind, hasStatus };
}

/** Every type served. All are namespaced. */
export const RESOURCE_TYPES: readonly ResourceType[] = [
  rt('', 'v1', 'pods', 'Pod', true),
  rt('', 'v1', 'configmaps', 'ConfigMap'),
  rt('', 'v1', 'secrets', 'Secret'),
  rt('', 'v1', 'services', 'Service', true),
  rt('', 'v1', 'serviceaccounts', 'ServiceAccount'),
  rt('', 'v1', 'events', 'Event'),
  rt('', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim', true),
  rt('apps', 'v1', 'statefulsets', 'StatefulSet', true),
  rt('apps', 'v1', 'deployments', 'Deployment', true),
  rt('coordination.k8s.io', 'v1', 'leases', 'Lease'),
  rt('events.k8s.io', 'v1', 'events', 'Event'),
  rt('rbac.authorization.k8s.io', 'v1', 'roles', 'Role'),
  rt('rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding'),
  rt('policy', 'v1', 'poddisruptionbudgets', 'PodDisruptionBudget', true),
];

/** `v1` or `<group>/<version>`, as objects spell it. */
export function apiVersionOf(t: ResourceType): string {
  return t.group ? `${t.group}/${t.version}` : t.version;
}

/** A stable key for one resource type, e.g. `apps/statefulsets`. */
export function typeKey(t: ResourceType): string {
  return `${t.group}/${t.resource}`;
}

/** The type served at `<group>/<version>/<resource>`, if any. */
export function typeByPath(group: string, version: string, resource: string): ResourceType | undefined {
  return RESOURCE_TYPES.find((t) => t.group === group && t.version === version && t.resource === resource);
}

/** The type of an object with this `apiVersion` and `kind`, if served. */
export function typeByApiVersionKind(apiVersion: string, kind: string): ResourceType | undefined {
  return RESOURCE_TYPES.find((t) => apiVersionOf(t) === apiVersion && t.kind === kind);
}

/** Every served type with this kind (core first); `Event` has two. */
export function typesByKind(kind: string): ResourceType[] {
  return RESOURCE_TYPES.filter((t) => t.kind === kind);
}

const VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];

/** The `APIResourceList` for one group version, or undefined if none is served there. */
export function apiResourceList(group: string, version: string): Record<string, unknown> | undefined {
  const types = RESOURCE_TYPES.filter((t) => t.group === group && t.version === version);
  if (types.length === 0) return undefined;
  const resources: Record<string, unknown>[] = [];
  for (const t of types) {
    resources.push({
      name: t.resource,
      singularName: t.kind.toLowerCase(),
      namespaced: true,
      kind: t.kind,
      verbs: VERBS,
    });
    if (t.hasStatus) {
      resources.push({ name: `${t.resource}/status`, singularName: '', namespaced: true, kind: t.kind, verbs: ['get', 'patch', 'update'] });
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources };
}

/** The `APIGroupList` served at `/apis`. */
export function apiGroupList(): Record<string, unknown> {
  const groups = [...new Set(RESOURCE_TYPES.filter((t) => t.group).map((t) => `${t.group}/${t.version}`))].map((gv) => {
    const [name, version] = gv.split('/');
    const preferred = { groupVersion: gv, version };
    return { name, versions: [preferred], preferredVersion: preferred };
  });
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

/** The `APIVersions` document served at `/api`. */
export function apiVersions(): Record<string, unknown> {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1' }],
  };
}

/** The `/version` document: the simulator models Kubernetes 1.32 behaviour, and says so. */
export function versionInfo(): Record<string, unknown> {
  return {
    major: '1',
    minor: '32',
    gitVersion: 'v1.32.0-sim',
    gitCommit: '',
    gitTreeState: 'clean',
    buildDate: '2024-12-11T00:00:00Z',
    goVersion: 'go1.23',
    compiler: 'gc',
    platform: 'linux/amd64',
  };
}
