/**
 * Risks of a change to the cluster's initializer: one added or renamed runs as root in the live
 * database, once; one changed after it ran does nothing. Read from what the controller is told (the
 * `initializer` of its cluster JSON), which is all that decides what it does.
 */
import { CONTROLLER_ENV, parseControllerClusterInfo, type InitializerInfo } from '../tidbcluster/contract';
import { kindOf, type ClusterModel } from './model';
import { RISK, type Risk } from './report';

/** The initializer in the controller Deployment's cluster JSON, if any. */
function initializerOf(cluster: ClusterModel | undefined): InitializerInfo | undefined {
  for (const o of cluster?.objects.values() ?? []) {
    if (kindOf(o) !== 'Deployment') continue;
    const containers =
      (o as { spec?: { template?: { spec?: { containers?: { env?: { name?: string; value?: string }[] }[] } } } }).spec?.template?.spec
        ?.containers ?? [];
    for (const c of containers) {
      const value = c.env?.find((e) => e.name === CONTROLLER_ENV.cluster)?.value;
      if (value === undefined) continue;
      try {
        return parseControllerClusterInfo(value).initializer;
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** What the initializer does, in a clause. */
function describe(i: InitializerInfo): string {
  const parts = [
    i.passwordSecret &&
      (i.rootOnly
        ? `sets root's password from the Secret ${i.passwordSecret} while root has none`
        : `sets root's password and creates the users of the Secret ${i.passwordSecret} (root's only while it has none)`),
    i.sql && `runs the SQL of the ConfigMap ${i.sql.configMap}`,
    i.permitHost !== '%' && `lets root log in from ${i.permitHost} only`,
  ].filter(Boolean);
  return parts.join(', ');
}

export function initializerRisks(before: ClusterModel | undefined, after: ClusterModel): Risk[] {
  const now = initializerOf(after);
  if (!now) return [];
  const was = initializerOf(before);
  if (was?.name === now.name) {
    if (was.digest === now.digest) return [];
    return [
      {
        id: RISK.initializer,
        component: 'initializer',
        message: `The initializer ${now.name} changed: it runs once, so if it already ran this change does nothing (give it a new name to run it again, which runs its SQL again); if it has not, it runs as changed: it ${describe(now)}.`,
      },
    ];
  }
  const running = [...(before?.components.values() ?? [])].some((c) => c.workload);
  if (!running && !was) return [];
  return [
    {
      id: RISK.initializer,
      component: 'initializer',
      message: `${was ? `The initializer ${was.name} is replaced by ${now.name}, a new one: it` : `The initializer ${now.name} is added to a running cluster: once this lands, the controller logs in to TiDB as root and`} ${describe(now)}, once.`,
    },
  ];
}
