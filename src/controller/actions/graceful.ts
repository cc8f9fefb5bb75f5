/**
 * What a Pod hands over before it goes or restarts, as far as its server can: a TiCDC capture's
 * tables and ownership, a Pump node's place among the pumps, a TiKV store's log backup data. Each is
 * a step of a longer procedure: a step still under way is not a failure, and the next pass asks
 * again; the Pod is annotated once the procedure is done.
 */
import { names, PORT } from '../../tidbcluster/names';
import { takePumpOffline } from '../clients/pump';
import { captureAddressPrefix, captureVersion, drainCapture, gracefulUpgradeSupported, resignOwnerOf } from '../clients/ticdc';
import { FLUSH_NOW_SINCE, flushLogBackup, tikvGrpcTarget, type FlushOutcome } from '../clients/tikv';
import {
  LOG_BACKUP_FLUSHED_ANNOTATION,
  RETIRED_ANNOTATION,
  TICDC_DRAINED_ANNOTATION,
  TICDC_SHUTDOWN_BEGIN_ANNOTATION,
} from '../model/annotations';
import { captureHints, podImageTag, versionAtLeast } from '../model/values';
import { rfc3339, type ActionContext, type Handlers } from './context';

export const gracefulActions: Pick<Handlers, 'retire' | 'drain-capture' | 'flush-log-backup'> = {
  /** One step of retiring a TiCDC capture or Pump node before scale-in; done once the Pod is marked so. */
  async retire(action, ctx) {
    const c = ctx.cluster;
    const podName = action.pod;
    const scheme = c.tls ? 'https' : 'http';
    let outcome: { done: boolean; detail: string };
    if (action.how === 'ticdc') {
      await markDrainBegin(ctx, podName);
      const host = captureAddressPrefix(c, podName);
      const hints = captureHints(ctx.pods.find((p) => p.metadata.name === podName));
      outcome = await drainCapture(`${scheme}://${host}:${PORT.ticdc}`, { tls: ctx.tls, captureAddress: host, ...hints });
    } else {
      const peer = names.peerService(c.name, 'pump');
      const advertised = `${podName}.${peer}${names.pumpAdvertiseZone(c.namespace, c.clusterDomain, c.acrossK8s)}:${PORT.pump}`;
      const base = (name: string) =>
        `${scheme}://${name}.${peer}.${c.namespace}.svc${c.clusterDomain ? `.${c.clusterDomain}` : ''}:${PORT.pump}`;
      const peers = ctx.pods
        .map((x) => x.metadata.name!)
        .filter((n) => n !== podName && n.startsWith(`${names.statefulSet(c.name, 'pump')}-`));
      outcome = await takePumpOffline(base(podName), [podName, ...peers].map(base), advertised, {
        tls: ctx.tls,
        unregisteredIsDone: action.unregisteredIsDone,
      });
    }
    ctx.log.info(outcome.detail, { pod: podName, done: outcome.done });
    if (!outcome.done) return false;
    await ctx.kube.annotatePod(podName, { [RETIRED_ANNOTATION]: rfc3339(ctx.now) });
  },

  /**
   * One step of draining a TiCDC capture before its Pod restarts in an upgrade: the begin time on the
   * Pod first, then the version check, the drain, and the resign of the next Pod's ownership; the Pod
   * is annotated once all are done.
   */
  async 'drain-capture'(action, ctx) {
    const c = ctx.cluster;
    const scheme = c.tls ? 'https' : 'http';
    await markDrainBegin(ctx, action.pod);
    const host = captureAddressPrefix(c, action.pod);
    const base = `${scheme}://${host}:${PORT.ticdc}`;
    const opts = { tls: ctx.tls };
    const running = await captureVersion(base, opts);
    if (!gracefulUpgradeSupported(running, action.targetVersion)) {
      ctx.log.info(
        `the capture of ${action.pod} runs ${running ?? 'a version without /api/v1/status'} and cannot hand its tables over to ${action.targetVersion}; restarting it without a drain`,
        { pod: action.pod },
      );
    } else {
      const drained = await drainCapture(base, {
        ...opts,
        captureAddress: host,
        ...captureHints(ctx.pods.find((p) => p.metadata.name === action.pod)),
      });
      ctx.log.info(drained.detail, { pod: action.pod, done: drained.done });
      if (!drained.done) return false;
      if (action.next) {
        const nextHost = captureAddressPrefix(c, action.next);
        const moved = await resignOwnerOf(`${scheme}://${nextHost}:${PORT.ticdc}`, nextHost, opts);
        ctx.log.info(moved.detail, { pod: action.next, done: moved.done });
        if (!moved.done) return false;
      }
    }
    await ctx.kube.annotatePod(action.pod, { [TICDC_DRAINED_ANNOTATION]: rfc3339(ctx.now) });
  },

  /** Asks a TiKV's log backup to flush before its Pod goes; the Pod restarts whatever the answer. */
  async 'flush-log-backup'(action, ctx) {
    const outcome = await flushLogBackup(tikvGrpcTarget(ctx.cluster, action.pod), ctx.tls);
    if (!outcome.ok) {
      ctx.log.warn(`${ctx.reason}: ${outcome.detail}; restarting it anyway`, { pod: action.pod, store: action.storeId });
      await ctx.event(
        action.pod,
        'Warning',
        'FailedLogBackupFlush',
        `log backup did not flush on store ${action.storeId}: ${outcome.detail}; restarting ${action.pod} anyway`,
      );
    } else {
      const detail = outcome.supported ? outcome.detail : unimplementedFlush(ctx, action.pod, outcome);
      ctx.log.info(`${ctx.reason}: ${detail}`, { pod: action.pod, store: action.storeId, tasks: outcome.tasks });
    }
    await ctx.kube.annotatePod(action.pod, { [LOG_BACKUP_FLUSHED_ANNOTATION]: action.revision });
  },
};

/**
 * What an UNIMPLEMENTED answer to FlushNow means, by the release the Pod runs. From v8.5.6 on, only
 * that log backup is off (`log-backup.enable`: the LogBackup service is not registered). Before, the
 * method is missing even while a task runs: the TiKV keeps what it has not flushed in its swap files,
 * which it truncates when it starts again (backup-stream `tempfiles.rs`, `TempFilePool::new`), and the
 * store that next leads each region scans it again from the task's checkpoint
 * (`subscription_manager.rs`, `get_last_checkpoint_of`): nothing is lost, but the checkpoint lags.
 */
function unimplementedFlush(ctx: ActionContext, podName: string, outcome: FlushOutcome): string {
  const pod = ctx.pods.find((p) => p.metadata.name === podName);
  const tag = pod && podImageTag(pod, 'tikv');
  switch (versionAtLeast(tag, FLUSH_NOW_SINCE)) {
    case true:
      return `${podName} has no log backup service to flush (log-backup.enable is off)`;
    case false:
      return (
        `${podName} runs TiKV ${tag}, which cannot flush log backup on demand (FlushNow came in ${FLUSH_NOW_SINCE}): ` +
        'restarting it without a flush; what it has not flushed yet is scanned again from the task checkpoint by the stores ' +
        'that lead its regions next, so the log backup checkpoint may lag by up to its flush interval (log-backup.max-flush-interval, default 3m) and more while they scan'
      );
    default:
      return `${outcome.detail}: log backup is off, or ${podName}'s TiKV (${tag ?? 'no image tag'}) predates FlushNow (${FLUSH_NOW_SINCE}) and restarts without a flush`;
  }
}

/** The time a capture began to hand its tables over, noted once: `gracefulShutdownTimeout` counts from it. */
async function markDrainBegin(ctx: ActionContext, pod: string): Promise<void> {
  const found = ctx.pods.find((x) => x.metadata.name === pod);
  if (!found?.metadata.annotations?.[TICDC_SHUTDOWN_BEGIN_ANNOTATION])
    await ctx.kube.annotatePod(pod, { [TICDC_SHUTDOWN_BEGIN_ANNOTATION]: rfc3339(ctx.now) });
}
