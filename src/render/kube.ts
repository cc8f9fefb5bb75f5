import { ApiObject, type ApiObjectProps } from 'cdk8s';
import type { Construct } from 'constructs';

/** A Kubernetes object of a known JSON shape (`imports/k8s.ts`), added to the construct tree. */
export function kubeObject<T extends { apiVersion?: string; kind?: string }>(scope: Construct, id: string, obj: T): ApiObject {
  if (!obj.apiVersion || !obj.kind) throw new Error(`${scope.node.path}/${id}: an object needs apiVersion and kind`);
  return new ApiObject(scope, id, obj as unknown as ApiObjectProps);
}
