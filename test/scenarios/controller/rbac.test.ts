/**
 * Tests of the RBAC check of test/support/rbac.ts: how requests map onto RBAC attributes, and which
 * rules allow them.
 */
import { KubeSim } from '../../sim/kube-api';
import { rbacViolations, requestAttributes, type PolicyRule, type RbacRole } from '../../support/rbac';

const role = (rules: PolicyRule[], namespace = 'ns'): RbacRole => ({ kind: 'Role', metadata: { name: 'r', namespace }, rules });
const req = (method: string, path: string, query: Record<string, string> = {}) => ({ method, path, query });

const PODS = '/api/v1/namespaces/ns/pods';
const STS = '/apis/apps/v1/namespaces/ns/statefulsets';
const CM = '/api/v1/namespaces/ns/configmaps';

describe('requestAttributes', () => {
  it.each([
    ['GET', `${PODS}/p`, {}, 'get  pods  p ns'],
    ['GET', PODS, {}, 'list  pods   ns'],
    ['GET', PODS, { watch: '1' }, 'watch  pods   ns'],
    ['GET', PODS, { watch: 'true', fieldSelector: 'metadata.name=p' }, 'watch  pods  p ns'],
    ['GET', PODS, { watch: 'false' }, 'list  pods   ns'],
    ['GET', '/api/v1/pods', {}, 'list  pods   '],
    ['POST', PODS, {}, 'create  pods   ns'],
    ['PUT', `${PODS}/p/status`, {}, 'update  pods status p ns'],
    ['PATCH', `${STS}/c-pd`, {}, 'patch apps statefulsets  c-pd ns'],
    ['DELETE', `${PODS}/p`, {}, 'delete  pods  p ns'],
    ['DELETE', PODS, { labelSelector: 'a=b' }, 'deletecollection  pods   ns'],
    ['GET', '/apis/coordination.k8s.io/v1/namespaces/ns/leases/l', {}, 'get coordination.k8s.io leases  l ns'],
    ['GET', '/api/v1/namespaces/ns', {}, 'get  namespaces  ns ns'],
    ['PUT', '/api/v1/namespaces/ns/status', {}, 'update  namespaces status ns ns'],
    ['GET', '/api/v1/watch/namespaces/ns/pods', {}, 'watch  pods   ns'],
    ['POST', `${PODS}/p/eviction`, {}, 'create  pods eviction p ns'],
  ])('%s %s %j -> %s', (method, path, query, expected) => {
    const a = requestAttributes(req(method, path, query));
    expect(a.resourceRequest).toBe(true);
    expect([a.verb, a.apiGroup, a.resource, a.subresource, a.name, a.namespace].join(' ')).toBe(expected);
  });

  it('treats paths outside /api and /apis resources as non-resource requests', () => {
    for (const path of ['/version', '/api', '/api/v1', '/apis', '/apis/apps/v1', '/healthz']) {
      expect(requestAttributes(req('GET', path))).toMatchObject({ resourceRequest: false, verb: 'get', path });
    }
  });
});

describe('rbacViolations', () => {
  const rules: PolicyRule[] = [
    { apiGroups: ['apps'], resources: ['statefulsets'], verbs: ['get', 'list', 'watch', 'patch'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] },
    { apiGroups: [''], resources: ['configmaps'], resourceNames: ['c-status'], verbs: ['get', 'patch', 'update', 'list', 'watch'] },
  ];

  it('allows what a rule covers', () => {
    expect(
      rbacViolations(role(rules), [
        req('GET', STS),
        req('GET', STS, { watch: 'true', resourceVersion: '10' }),
        req('PATCH', `${STS}/c-pd`),
        req('GET', `${PODS}/c-pd-0`),
        req('POST', CM),
        req('GET', `${CM}/c-status`),
        req('PUT', `${CM}/c-status`),
        // list and watch of one named object, through the field selector, match resourceNames.
        req('GET', CM, { fieldSelector: 'metadata.name=c-status' }),
        req('GET', CM, { watch: '1', fieldSelector: 'metadata.name=c-status' }),
        // Discovery is open to everyone.
        req('GET', '/apis/apps/v1'),
        req('GET', '/version'),
      ]),
    ).toEqual([]);
  });

  it('denies a verb no rule gives', () => {
    expect(rbacViolations(role(rules), [req('DELETE', `${STS}/c-pd`), req('PATCH', `${PODS}/p`), req('DELETE', PODS)])).toEqual([
      'not allowed: delete statefulsets.apps "c-pd" in namespace "ns" (DELETE /apis/apps/v1/namespaces/ns/statefulsets/c-pd)',
      'not allowed: patch pods "p" in namespace "ns" (PATCH /api/v1/namespaces/ns/pods/p)',
      'not allowed: deletecollection pods in namespace "ns" (DELETE /api/v1/namespaces/ns/pods)',
    ]);
  });

  it('denies by resource name, and a list or watch of the whole collection under a resourceNames rule', () => {
    expect(rbacViolations(role(rules), [req('GET', `${CM}/other`), req('GET', CM), req('GET', CM, { watch: 'true' })])).toEqual([
      'not allowed: get configmaps "other" in namespace "ns" (GET /api/v1/namespaces/ns/configmaps/other)',
      'not allowed: list configmaps in namespace "ns" (GET /api/v1/namespaces/ns/configmaps)',
      'not allowed: watch configmaps in namespace "ns" (GET /api/v1/namespaces/ns/configmaps?watch=true)',
    ]);
  });

  it('denies a create that only a resourceNames rule names', () => {
    const leases = [
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['c-discovery'], verbs: ['create', 'get', 'update'] },
    ];
    const path = '/apis/coordination.k8s.io/v1/namespaces/ns/leases';
    expect(rbacViolations(role(leases), [req('GET', `${path}/c-discovery`), req('POST', path)])).toEqual([
      'not allowed: create leases.coordination.k8s.io in namespace "ns" (POST /apis/coordination.k8s.io/v1/namespaces/ns/leases)',
    ]);
  });

  it('denies by API group: a core rule does not cover events.k8s.io, nor apps another group', () => {
    const events = [{ apiGroups: [''], resources: ['events'], verbs: ['create'] }];
    expect(
      rbacViolations(role(events), [
        req('POST', '/api/v1/namespaces/ns/events'),
        req('POST', '/apis/events.k8s.io/v1/namespaces/ns/events'),
      ]),
    ).toEqual(['not allowed: create events.events.k8s.io in namespace "ns" (POST /apis/events.k8s.io/v1/namespaces/ns/events)']);
    expect(rbacViolations(role(rules), [req('GET', '/apis/example.com/v1/namespaces/ns/statefulsets')])).toHaveLength(1);
  });

  it('denies a watch with only get and list, and a subresource the rule does not name', () => {
    const read = [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }];
    expect(rbacViolations(role(read), [req('GET', PODS), req('GET', PODS, { watch: '1' }), req('PATCH', `${PODS}/p/status`)])).toEqual([
      'not allowed: watch pods in namespace "ns" (GET /api/v1/namespaces/ns/pods?watch=1)',
      'not allowed: patch pods/status "p" in namespace "ns" (PATCH /api/v1/namespaces/ns/pods/p/status)',
    ]);
    expect(
      rbacViolations(role([{ apiGroups: [''], resources: ['pods/status'], verbs: ['patch'] }]), [req('PATCH', `${PODS}/p/status`)]),
    ).toEqual([]);
    expect(
      rbacViolations(role([{ apiGroups: [''], resources: ['*/status'], verbs: ['patch'] }]), [req('PATCH', `${PODS}/p/status`)]),
    ).toEqual([]);
    expect(
      rbacViolations(role([{ apiGroups: [''], resources: ['*/status'], verbs: ['patch'] }]), [req('PATCH', `${PODS}/p`)]),
    ).toHaveLength(1);
  });

  it('takes * for groups, resources and verbs', () => {
    const all = [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }];
    expect(rbacViolations(role(all), [req('DELETE', `${STS}/x`), req('PATCH', `${PODS}/p/status`), req('DELETE', CM)])).toEqual([]);
  });

  it('lets a Role grant only in its namespace; a ClusterRole grants everywhere', () => {
    const requests = [req('GET', '/api/v1/namespaces/other/pods'), req('GET', '/api/v1/pods')];
    expect(rbacViolations(role(rules), requests)).toEqual([
      'not allowed: list pods in namespace "other" (GET /api/v1/namespaces/other/pods)',
      'not allowed: list pods cluster-wide (GET /api/v1/pods)',
    ]);
    expect(rbacViolations({ kind: 'ClusterRole', rules }, requests)).toEqual([]);
    expect(rbacViolations([role([]), { kind: 'ClusterRole', rules }], requests)).toEqual([]);
  });

  it('checks non-resource URLs against nonResourceURLs when asked to check discovery too', () => {
    const requests = [req('GET', '/apis/apps/v1'), req('GET', '/metrics')];
    expect(rbacViolations({ kind: 'ClusterRole', rules: [] }, requests)).toEqual([
      'not allowed: get non-resource URL /metrics (GET /metrics)',
    ]);
    expect(rbacViolations({ kind: 'ClusterRole', rules: [] }, requests, { checkDiscovery: true })).toHaveLength(2);
    const urls = [{ verbs: ['get'], nonResourceURLs: ['/apis/*', '/metrics'] }];
    expect(rbacViolations({ kind: 'ClusterRole', rules: urls }, requests, { checkDiscovery: true })).toEqual([]);
  });

  it('gives one line per kind of denied request, with how many there were', () => {
    const watch = req('GET', PODS, { watch: 'true' });
    expect(rbacViolations(role([]), [watch, watch, req('GET', PODS, { watch: '1', resourceVersion: '5' })])).toEqual([
      'not allowed: watch pods in namespace "ns" (GET /api/v1/namespaces/ns/pods?watch=true, 3 requests)',
    ]);
  });

  it('reads the request log of the simulated API server', async () => {
    const sim = await KubeSim.start();
    try {
      const base = sim.url;
      await fetch(`${base}${CM}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ metadata: { name: 'c-status' } }),
      });
      await fetch(`${base}${CM}/c-status`);
      await fetch(`${base}${CM}/c-status`, { method: 'DELETE' });
      await fetch(`${base}${STS}?labelSelector=${encodeURIComponent('app=x')}`);
      expect(sim.requests).toHaveLength(4);
      expect(rbacViolations(role(rules), sim.requests)).toEqual([
        'not allowed: delete configmaps "c-status" in namespace "ns" (DELETE /api/v1/namespaces/ns/configmaps/c-status)',
      ]);
    } finally {
      await sim.close();
    }
  });
});
