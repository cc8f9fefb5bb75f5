/**
 * The record of the cluster's initializer (root's password, users, the initial SQL), kept in the
 * status ConfigMap. The record, not an object in Git, is what makes it run once: a re-sync, a
 * re-created ConfigMap or a controller restart finds it and does nothing again. A TidbInitializer of
 * another name is another initialization, and runs. The record is bound to the cluster instance it
 * initialized (PD's cluster ID): a cluster made anew under the same name is initialized again.
 */

/**
 * Where the initialization stands. `Waiting`: not started, and why. `Running`: under way, `step` says
 * how far. `Lost`: the controller stopped while the SQL ran, which is never run twice.
 */
export type InitializerPhase = 'Waiting' | 'Running' | 'Complete' | 'Failed' | 'Lost';

/** How far a run got: the steps before `sql` are safe to do again, the SQL and the host change are not. */
export type InitializerStep = 'connect' | 'password' | 'users' | 'sql' | 'host';

export interface InitializerRecord {
  /** The TidbInitializer's name, or `create-password`. */
  readonly name: string;
  readonly phase: InitializerPhase;
  /** Running: the step under way. @default none */
  readonly step?: InitializerStep;
  /** The digest of what ran (`InitializerInfo.digest`). @default none (not started) */
  readonly digest?: string;
  /** Waiting: what it waits for; Complete without running: why. @default none */
  readonly reason?: string;
  /** Failed or Lost: what went wrong. @default none */
  readonly error?: string;
  /** RFC 3339. @default none */
  readonly started?: string;
  /** RFC 3339. @default none */
  readonly finished?: string;
  /** Root's password: `set` by the controller, or `kept` because root had one. @default none */
  readonly root?: 'set' | 'kept';
  /** The users created (those that existed are left as they are). @default none */
  readonly users?: readonly string[];
  /** How many SQL statements ran. @default none */
  readonly statements?: number;
  /** The digest of the document as changed after it ran (not run again). @default none */
  readonly changed?: string;
  /**
   * PD's cluster ID of the cluster it ran in: a cluster made anew since (another ID) has not been
   * initialized. @default none (PD did not say, or recorded before it was kept: taken for this cluster)
   */
  readonly clusterId?: string;
  /** It ran before in another instance of the cluster, which is gone (its cluster ID). @default none */
  readonly formerCluster?: string;
}

const PHASES: readonly InitializerPhase[] = ['Waiting', 'Running', 'Complete', 'Failed', 'Lost'];
const STEPS: readonly InitializerStep[] = ['connect', 'password', 'users', 'sql', 'host'];
const TEXT = ['digest', 'reason', 'error', 'started', 'finished', 'changed', 'clusterId', 'formerCluster'] as const;

/** Reads back the record from a status document written before. */
export function initializerOf(doc: unknown): InitializerRecord | undefined {
  const r = (doc as { initializer?: Partial<InitializerRecord> } | undefined)?.initializer;
  if (typeof r?.name !== 'string' || !PHASES.includes(r.phase as InitializerPhase)) return undefined;
  const out: Record<string, unknown> = { name: r.name, phase: r.phase };
  if (STEPS.includes(r.step as InitializerStep)) out.step = r.step;
  for (const k of TEXT) if (typeof r[k] === 'string') out[k] = r[k];
  if (r.root === 'set' || r.root === 'kept') out.root = r.root;
  if (Array.isArray(r.users) && r.users.every((u) => typeof u === 'string')) out.users = r.users;
  if (typeof r.statements === 'number') out.statements = r.statements;
  return out as unknown as InitializerRecord;
}

/** What the record says, in a line (never a password: none is ever in a record). */
export function initializerMessage(r: InitializerRecord): string {
  switch (r.phase) {
    case 'Waiting':
      return `waiting: ${r.reason ?? 'not started'}`;
    case 'Running':
      return `running (${r.step ?? 'connect'})`;
    case 'Complete': {
      const parts = [
        r.root === 'set' ? "root's password set" : r.root === 'kept' ? 'root already had a password, left as it was' : undefined,
        r.users && r.users.length > 0 ? `users created: ${r.users.join(', ')}` : undefined,
        r.statements !== undefined ? `${r.statements} SQL statement${r.statements === 1 ? '' : 's'} run` : undefined,
      ].filter((p) => p !== undefined);
      const anew = r.formerCluster ? `; in the cluster made anew (it ran before in cluster ${r.formerCluster}, which is gone)` : '';
      return `complete${parts.length > 0 ? `: ${parts.join('; ')}` : ''}${anew}${r.changed ? '; its document changed since and is not run again' : ''}`;
    }
    default:
      return `${r.phase.toLowerCase()}: ${r.error ?? ''}${r.changed ? '; its document changed since and is not run again' : ''}`;
  }
}
