/**
 * The cluster's initializer (root's password, users, the initial SQL): what it needs this pass, from
 * its record and the TiDB Pods. Pure. It runs once: a record that says it ran is final, and a run
 * the controller was stopped in is taken up again only where doing so cannot do anything twice
 * (logging in, the password while root has none, users that do not exist yet), never once the SQL
 * started. It ran in one instance of the cluster: one made anew under the same name (PD's cluster ID
 * differs) has a root without a password and none of the users, and is initialized again.
 */
import type { InitializerInfo } from '../../tidbcluster/contract';
import type { InitializerRecord } from '../records/initializer';

export interface InitializerInput {
  readonly info: InitializerInfo;
  readonly record?: InitializerRecord;
  /** A TiDB Pod that is Ready, to log in to; undefined while there is none. */
  readonly readyPod?: string;
  /** PD's cluster ID; undefined while it cannot be read (a record is then taken for this cluster's). @default none */
  readonly clusterId?: string;
}

export type InitializerPlan =
  /** Nothing to do. */
  | { readonly kind: 'none' }
  /** Write this record; `news` is an Event's worth. */
  | { readonly kind: 'record'; readonly record: InitializerRecord; readonly news?: 'waiting' | 'changed' | 'lost' }
  /**
   * Log in to this Pod and carry it out; `resume`: a run the controller was stopped in, before its SQL;
   * `formerCluster`: it ran before in another instance of the cluster.
   */
  | { readonly kind: 'run'; readonly pod: string; readonly resume?: InitializerRecord; readonly formerCluster?: string };

const FINAL = ['Complete', 'Failed', 'Lost'];

/** Why an initializer marked `skip` for an existing cluster is Complete. */
export const SKIPPED = 'marked done in Git (tidb-gitops.io/existing-cluster: skip): nothing was run';

export function planInitializer(input: InitializerInput): InitializerPlan {
  const { info, readyPod } = input;
  // A record of another name is another document's, and one of another instance of the cluster is
  // that instance's: this one has not run.
  const own = input.record?.name === info.name ? input.record : undefined;
  const elsewhere =
    own !== undefined &&
    FINAL.includes(own.phase) &&
    own.clusterId !== undefined &&
    input.clusterId !== undefined &&
    own.clusterId !== input.clusterId;
  const r = elsewhere ? undefined : own;
  const former = elsewhere ? own.clusterId : own?.formerCluster;
  if (r && FINAL.includes(r.phase)) {
    if (r.digest === undefined || r.digest === info.digest || r.changed === info.digest) return { kind: 'none' };
    return { kind: 'record', record: { ...r, changed: info.digest }, news: 'changed' };
  }
  if (r?.phase === 'Running') {
    if (r.step === 'sql' || r.step === 'host') {
      const what = r.step === 'sql' ? 'the initial SQL ran' : "root's host was changed";
      return {
        kind: 'record',
        record: {
          ...r,
          phase: 'Lost',
          error: `the controller stopped while ${what}; it is not run again: see in the database what ran, and finish by hand`,
        },
        news: 'lost',
      };
    }
    return readyPod === undefined ? { kind: 'none' } : { kind: 'run', pod: readyPod, resume: r };
  }
  if ((r === undefined || r.phase === 'Waiting') && former === undefined && info.existingCluster === 'skip') {
    // Git says it ran before, in tidb-operator: done, with nothing run.
    return { kind: 'record', record: { name: info.name, phase: 'Complete', digest: info.digest, reason: SKIPPED } };
  }
  if (readyPod === undefined) {
    const reason = 'no TiDB Pod is ready';
    if (r?.reason === reason) return { kind: 'none' };
    return {
      kind: 'record',
      record: { name: info.name, phase: 'Waiting', reason, ...(former !== undefined && { formerCluster: former }) },
      ...(r === undefined && { news: 'waiting' as const }),
    };
  }
  return { kind: 'run', pod: readyPod, ...(former !== undefined && { formerCluster: former }) };
}
