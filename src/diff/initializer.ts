/**
 * Risks of a change to the cluster's initializer: one added or renamed runs as root in the live
 * database, once; one changed after it ran does nothing. Read from what the controller is told (the
 * `initializer` of its cluster JSON), which is all that decides what it does.
 */
import type { InitializerInfo } from '../tidbcluster/contract';
import { controllerInfoOf } from './controller-info';
import type { ClusterModel } from './model';
import { RISK, type Risk } from './report';

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
  const now = controllerInfoOf(after)?.initializer;
  if (!now) return [];
  const was = controllerInfoOf(before)?.initializer;
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
