/**
 * The DDL pause record of a TiDB smooth upgrade (`plan/upgrade-tidb.ts`): written before TiDB is asked
 * to pause DDL, so that a controller that dies meanwhile finds it and resumes DDL once the upgrade is over.
 */
/** The DDL pause this controller asked TiDB for, kept in the status ConfigMap (`smoothUpgrade`). */
export interface DdlPauseRecord {
  readonly source: string;
  readonly target: string;
  /**
   * `starting`: recorded, TiDB not yet known to have paused DDL; `paused`: TiDB said it did;
   * `unsupported`: the TiDB asked has no such API (HTTP 404), so the upgrade goes on without a pause.
   */
  readonly state: 'starting' | 'paused' | 'unsupported';
  readonly since: string;
}

/** Reads back the DDL pause record from a status document written before. */
export function ddlPauseOf(doc: unknown): DdlPauseRecord | undefined {
  const r = (doc as { smoothUpgrade?: Partial<DdlPauseRecord> } | undefined)?.smoothUpgrade;
  if (typeof r !== 'object' || r === null || typeof r.source !== 'string' || typeof r.target !== 'string') return undefined;
  return {
    source: r.source,
    target: r.target,
    state: r.state === 'paused' || r.state === 'unsupported' ? r.state : 'starting',
    since: String(r.since ?? ''),
  };
}
