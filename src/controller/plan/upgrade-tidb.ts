/**
 * TiDB's smooth upgrade: for a TiDB version change between releases that support it, DDL is paused
 * on the whole cluster (`POST /upgrade/start` on one TiDB) before the first TiDB Pod restarts, and
 * resumed (`POST /upgrade/finish`) once every TiDB runs the new revision and is Ready, as
 * tidb-operator does (`pkg/manager/member/smooth_upgrade.go`). The TiDB side is
 * pingcap/tidb `pkg/server/handler/upgrade_handler.go`.
 *
 * The pause is recorded in the status ConfigMap before TiDB is asked (state `starting`), and marked
 * `paused` once TiDB said so; a controller that dies in between asks again (TiDB answers a duplicate
 * start as a success), and one that dies after the pause finds the record and resumes DDL when the
 * upgrade is over. A record whose versions no longer match the upgrade under way (Git changed its
 * mind) is finished first, then the new pair is judged afresh.
 */
import type { Pod } from '../model/objects';
import { httpRequest, type ClientTls } from '../clients/pd';

/** The three classes tidb-operator sorts a version pair into. */
export type SmoothUpgradeSupport = 'unsupported' | 'auto' | 'switch';

/** The DDL pause this controller asked TiDB for, kept in the status ConfigMap (`smoothUpgrade`). */
export interface DdlPauseRecord {
  readonly source: string;
  readonly target: string;
  /** `starting`: recorded, TiDB not yet known to have paused DDL; `paused`: TiDB said it did. */
  readonly state: 'starting' | 'paused';
  readonly since: string;
}

type Version = { core: [number, number, number]; pre: string };

/** `v7.5.1` or `v8.5.0-alpha`; undefined for anything else (`nightly`, a tag without "v"). */
function parseVersion(tag: string): Version | undefined {
  const m = /^v(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(tag);
  return m ? { core: [Number(m[1]), Number(m[2]), Number(m[3])], pre: m[4] ?? '' } : undefined;
}

/** Semantic version order: a pre-release comes before its release. */
function compare(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a.core[i] !== b.core[i]) return a.core[i] - b.core[i];
  if (a.pre === b.pre) return 0;
  if (a.pre === '') return 1;
  if (b.pre === '') return -1;
  return a.pre < b.pre ? -1 : 1;
}

/**
 * tidb-operator's classification of a TiDB upgrade from `source` to `target` (image tags):
 * `switch` pairs need the DDL pause (within v7.1.2 to before v7.2.0, or from there or from v7.4.0 on
 * to v7.4.0 and newer); `auto` pairs pause DDL by themselves (v7.1.0 to v7.3.0); anything else
 * (older sources, downgrades, tags that are not versions) is `unsupported`.
 */
export function classifySmoothUpgrade(source: string, target: string): SmoothUpgradeSupport {
  const s = parseVersion(source);
  const t = parseVersion(target);
  if (!s || !t) return 'unsupported';
  const v = (text: string) => parseVersion(text)!;
  const eq = (x: Version, text: string) => compare(x, v(text)) === 0;
  const gte = (x: Version, text: string) => compare(x, v(text)) >= 0;
  const lt = (x: Version, text: string) => compare(x, v(text)) < 0;
  if (lt(s, 'v7.1.0') || compare(t, s) <= 0) return 'unsupported';
  const auto =
    (eq(s, 'v7.1.0') && (eq(t, 'v7.1.1') || eq(t, 'v7.2.0') || eq(t, 'v7.3.0'))) ||
    (eq(s, 'v7.1.1') && (eq(t, 'v7.2.0') || eq(t, 'v7.3.0'))) ||
    (eq(s, 'v7.2.0') && eq(t, 'v7.3.0'));
  if (auto) return 'auto';
  const in712 = (x: Version) => gte(x, 'v7.1.2') && lt(x, 'v7.2.0');
  if ((in712(s) && in712(t)) || ((in712(s) || gte(s, 'v7.4.0')) && gte(t, 'v7.4.0'))) return 'switch';
  return 'unsupported';
}

/** The tag of a container image; undefined for a digest reference or an image without a tag (as the operator reads it). */
export function tagOf(image: string | undefined): string | undefined {
  if (!image || image.includes('@')) return undefined;
  const colon = image.lastIndexOf(':');
  return colon > image.lastIndexOf('/') && colon < image.length - 1 ? image.slice(colon + 1) : undefined;
}

/** The tag a Pod's container runs. */
export const podImageTag = (pod: Pod, container: string): string | undefined => tagOf(pod.spec?.containers?.find((c) => c.name === container)?.image);

/** Reads back the DDL pause record from a status document written before. */
export function ddlPauseOf(doc: unknown): DdlPauseRecord | undefined {
  const r = (doc as { smoothUpgrade?: Partial<DdlPauseRecord> } | undefined)?.smoothUpgrade;
  if (typeof r !== 'object' || r === null || typeof r.source !== 'string' || typeof r.target !== 'string') return undefined;
  return { source: r.source, target: r.target, state: r.state === 'paused' ? 'paused' : 'starting', since: String(r.since ?? '') };
}

/**
 * TiDB's answers that mean the cluster is where it was asked to go (pingcap/tidb `upgrade_handler.go`;
 * releases before v7.5.0 say "duplicated op", later ones "duplicated operation").
 */
const DONE: Record<'start' | 'finish', RegExp> = {
  start: /^(success!|It's a duplicated op(eration)? and the cluster is already in upgrading state\.)$/,
  finish: /^(success!|It's a duplicated op(eration)? and the cluster is already in normal state\.)$/,
};

/**
 * `POST <base>/upgrade/{start,finish}` (`base`: the Pod's status URL, topology.ts `tidbStatusBase`); resolves when TiDB says the cluster is in the state asked for
 * (a JSON string body, the new state or a duplicate), rejects otherwise. TiDB's start waits up to
 * 10 s for the DDL owner, so start gets 30 s, as with the operator.
 */
export async function tidbUpgradeOp(base: string, op: 'start' | 'finish', tls?: ClientTls): Promise<void> {
  const url = `${base}/upgrade/${op}`;
  const res = await httpRequest(url, { method: 'POST', tls, timeoutMs: op === 'start' ? 30_000 : 5_000 });
  let text = res.body.trim();
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'string') text = parsed;
  } catch {
    // Not JSON: compared as it is.
  }
  if (res.status !== 200 || !DONE[op].test(text)) throw new Error(`POST ${url}: HTTP ${res.status} ${JSON.stringify(res.body.slice(0, 200))}`);
}
