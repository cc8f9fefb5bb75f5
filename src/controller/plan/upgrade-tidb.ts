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
import { isReady, isTerminating, podRevision } from '../model/objects';
import { podImageTag, tagOf } from '../model/values';
import { podList, podsByOrdinal, unreadyPods } from '../view/lookups';
import type { ComponentState, PlanInput } from '../view/view';
import { act, OK, wait, type Step, type UpgradeChecks } from './action';

/** The three classes tidb-operator sorts a version pair into. */
export type SmoothUpgradeSupport = 'unsupported' | 'auto' | 'switch';

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

/** The TiDB Pod to ask for a DDL pause or resume: the lowest Ready ordinal, as the operator picks it. */
function tidbToAsk(input: PlanInput, c: ComponentState): string | undefined {
  return [...podsByOrdinal(input.cluster.name, c.kind, c.pods).entries()]
    .filter(([, p]) => isReady(p) && !isTerminating(p))
    .sort(([a], [b]) => a - b)[0]?.[1].metadata.name;
}

/**
 * Before a TiDB upgrade restarts its first Pod: DDL paused when the version pair needs it (and not
 * yet paused for this pair). A pause recorded for another pair is resumed first.
 */
function ddlPauseStep(input: PlanInput, c: ComponentState): Step {
  const update = c.sts.status?.updateRevision;
  const old = c.pods.find((p) => podRevision(p) !== update && !isTerminating(p));
  const source = old && podImageTag(old, 'tidb');
  const target = tagOf(c.sts.spec?.template?.spec?.containers?.find((x) => x.name === 'tidb')?.image);
  const record = input.ddlPause;
  const pod = tidbToAsk(input, c);
  if (record && source !== undefined && (record.source !== source || record.target !== target)) {
    if (!pod) return wait('waiting for a Ready TiDB Pod to resume DDL paused for an earlier upgrade');
    return act(`resuming DDL paused for the TiDB upgrade ${record.source} -> ${record.target}, which is no longer the one under way`, {
      type: 'ddl-resume',
      pod,
      stale: true,
    });
  }
  if (record?.state === 'paused' || record?.state === 'unsupported' || source === undefined || target === undefined) return OK;
  if (!record && classifySmoothUpgrade(source, target) !== 'switch') return OK;
  if (!pod) return wait(`waiting for a Ready TiDB Pod to pause DDL before the upgrade ${source} -> ${target}`);
  return act(
    `pausing DDL before the TiDB upgrade ${source} -> ${target}`,
    { type: 'ddl-pause', pod, source, target },
    {
      type: 'Normal',
      reason: 'DDLPause',
      message: `pausing DDL for the TiDB upgrade ${source} -> ${target} (POST /upgrade/start on ${pod})`,
    },
  );
}

/** After a TiDB upgrade: DDL resumed once every TiDB Pod is Ready (the operator's condition). */
export function ddlResumeStep(input: PlanInput, c: ComponentState, replicas: number): Step {
  const record = input.ddlPause!;
  const unready = unreadyPods(input, c, replicas);
  if (unready.length > 0) return wait(`the TiDB upgrade is done; DDL stays paused until ${podList(unready)} Ready`);
  const pod = tidbToAsk(input, c);
  if (!pod) return wait('waiting for a Ready TiDB Pod to resume DDL');
  return act(
    `resuming DDL paused for the TiDB upgrade ${record.source} -> ${record.target}`,
    { type: 'ddl-resume', pod, stale: false },
    {
      type: 'Normal',
      reason: 'DDLResume',
      message: `resuming DDL after the TiDB upgrade ${record.source} -> ${record.target} (POST /upgrade/finish on ${pod})`,
    },
  );
}

export const tidbUpgrade: UpgradeChecks = { begin: ddlPauseStep };
