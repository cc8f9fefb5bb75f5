/**
 * What an executor is given: the clients it acts through, the records it keeps, and the plan step
 * it carries out. Executors are thin: one module per family of actions, each handler doing the
 * requests one action stands for and nothing the planner could decide.
 */
import type { ComponentKind } from '../../tidbcluster/names';
import type { EventRecorder } from '../clients/events';
import type { ClientTls } from '../clients/http';
import type { KubeAccess } from '../clients/kube';
import type { PdClient } from '../clients/pd';
import type { ClusterInfo } from '../model/cluster';
import type { Pod } from '../model/objects';
import type { Action } from '../plan/action';
import type { StatusRecords } from '../records/store';
import type { Logger } from '../runtime/log';
import type { Metrics } from '../runtime/metrics';

/** What every executor may use, for the whole life of the controller. */
export interface ActionDeps {
  readonly cluster: ClusterInfo;
  readonly kube: KubeAccess;
  /** The PD the controller works with (the first of its PD URLs). */
  readonly pd: PdClient;
  /** The cluster client certificate, for the servers' own APIs under cluster TLS. @default none */
  readonly tls?: ClientTls;
  readonly records: StatusRecords;
  readonly metrics: Metrics;
  readonly event: EventRecorder;
  /** The API server refused to grow a component's claims: shown as a refusal until Git's sizes change. */
  readonly noteVolumeRefusal: (kind: ComponentKind, message: string) => void;
}

/** One action under way. */
export interface ActionContext extends ActionDeps {
  readonly kind: ComponentKind;
  /** The plan's reason, logged when the action is done. */
  readonly reason: string;
  /** The cluster's Pods, as this pass saw them. */
  readonly pods: readonly Pod[];
  /** When this pass began. */
  readonly now: number;
  /** A logger that names the component and the action. */
  readonly log: Logger;
}

/**
 * Carries out one action. Resolves true (or nothing) once it is done, false while it is still under
 * way (asked again on the next pass); a thrown error is logged and the action is tried again.
 */
export type Handler<T extends Action['type']> = (
  action: Extract<Action, { readonly type: T }>,
  ctx: ActionContext,
) => Promise<boolean | void>;

/** A handler for every action the planner may ask for. */
export type Handlers = { readonly [T in Action['type']]: Handler<T> };

/** RFC 3339 with milliseconds (Go's RFC 3339 parser, the operator's, accepts the fraction). */
export const rfc3339 = (ms: number): string => new Date(ms).toISOString();
