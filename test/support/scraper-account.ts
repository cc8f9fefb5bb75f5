/**
 * The credentials a scraper's Kubernetes service discovery uses in the real-API tests: a
 * ServiceAccount `name` whose Role may only read Pods in `namespace`, and a token of it (TokenRequest
 * API) written to a file, as Prometheus's and vmagent's `bearer_token_file` read it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeClient } from '../kube/client';

/** Creates the account; resolves with the token file's path (in `dir`). */
export async function scraperAccount(
  kube: KubeClient,
  namespace: string,
  name: string,
  dir: string,
  verbs: readonly string[] = ['list', 'watch'],
): Promise<string> {
  await kube.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } });
  await kube.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name, namespace },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: [...verbs] }],
  });
  await kube.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: [{ kind: 'ServiceAccount', name, namespace }],
  });
  const token = await kube.ok('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  const file = join(dir, `${name}-token`);
  writeFileSync(file, token.status.token, { mode: 0o600 });
  return file;
}
