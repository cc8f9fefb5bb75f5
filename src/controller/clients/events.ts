/** Kubernetes Events on the cluster's Pods and StatefulSets, by name (the uid from the informer caches). */
import type { KubeAccess } from './kube';

/** Records an Event on a Pod or, with `onStatefulSet`, on a StatefulSet; failures are logged, never thrown. */
export type EventRecorder = (
  name: string,
  type: 'Normal' | 'Warning',
  reason: string,
  message: string,
  onStatefulSet?: boolean,
) => Promise<void>;

export function eventRecorder(kube: Pick<KubeAccess, 'event' | 'pods' | 'statefulSets'>): EventRecorder {
  return async (name, type, reason, message, onStatefulSet = false) => {
    const target = onStatefulSet
      ? { kind: 'StatefulSet' as const, name, uid: kube.statefulSets().find((s) => s.metadata.name === name)?.metadata.uid }
      : { kind: 'Pod' as const, name, uid: kube.pods().find((p) => p.metadata.name === name)?.metadata.uid };
    await kube.event(target, type, reason, message, Date.now());
  };
}
