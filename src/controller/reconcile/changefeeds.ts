/**
 * Each pass, the TiCDC changefeeds Git declares (`Changefeed`; `ControllerClusterInfo.changefeeds`):
 * through the open API v2 of a ready TiCDC capture (any capture forwards to the owner), the
 * changefeeds are listed, planned (plan/changefeeds.ts) and each one's calls made
 * (actions/changefeeds.ts), recording each changefeed it manages once its calls succeeded.
 *
 * Where each stands goes on its ConfigMap (`changefeed-<name>`: `tidb-gitops.io/phase`,
 * `tidb-gitops.io/message`), where the Argo CD and Flux health checks read it, and under `changefeeds`
 * in `status.json` (state, checkpoint, its time and lag, TiCDC's last error). Events on that
 * ConfigMap: `ChangefeedCreated`, `ChangefeedUpdated`, `ChangefeedPaused`, `ChangefeedResumed`,
 * `ChangefeedRemoved` (on the TiCDC StatefulSet: its ConfigMap left with its document),
 * `ChangefeedFailed`. No credential reaches a log, an Event, the ConfigMap or the status. A side task.
 */
import { ANNOTATION, names, PORT } from '../../tidbcluster/names';
import type { ChangefeedsInfo } from '../../tidbcluster/contract/changefeeds';
import { runChangefeedCalls } from '../actions/changefeeds';
import { BackupAccess } from '../clients/backups';
import { type ChangefeedApiOptions, getChangefeed, listChangefeeds, redactText, type ChangefeedStatus } from '../clients/changefeeds';
import type { EventRecorder } from '../clients/events';
import type { ClientTls } from '../clients/http';
import type { KubeAccess } from '../clients/kube';
import { describe } from '../clients/kube-errors';
import { passwordOf, readSecret, type VersionedSecret } from '../clients/secrets';
import { captureAddressPrefix } from '../clients/ticdc';
import type { ClusterInfo } from '../model/cluster';
import { isReady } from '../model/objects';
import { planChangefeeds, type ChangefeedCall, type ChangefeedReport } from '../plan/changefeeds';
import type { StatusRecords } from '../records/store';
import type { Logger } from '../runtime/log';
import { SaidOnce } from './said-once';
import type { SidePass, SideTask } from './side-task';

/** The `changefeeds` part of `status.json`. */
export interface ChangefeedsStatus {
  /** Why nothing was looked at this pass. @default none */
  readonly waiting?: string;
  readonly feeds: readonly ChangefeedReport[];
  /** Changefeeds in TiCDC neither declared nor managed, left alone. */
  readonly unmanaged: readonly string[];
  /** Managed changefeeds whose document left Git with `Retain`: left in TiCDC, no longer changed. */
  readonly kept: readonly string[];
}

export interface ChangefeedsDeps {
  readonly cluster: ClusterInfo;
  readonly kube: Pick<KubeAccess, 'send' | 'path' | 'namespace' | 'event'>;
  readonly event: EventRecorder;
  readonly log: Logger;
  /** The cluster client certificate, for TiCDC's API under cluster TLS. @default none */
  readonly tls?: ClientTls;
  /** Where a TiCDC Pod's API is. @default `http(s)://<pod>.<cluster>-ticdc-peer.<ns>[.svc.<domain>]:8301` */
  readonly ticdcBase?: (pod: string) => string;
}

const EVENT_OF: Readonly<Record<ChangefeedCall, string>> = {
  create: 'ChangefeedCreated',
  update: 'ChangefeedUpdated',
  pause: 'ChangefeedPaused',
  resume: 'ChangefeedResumed',
  remove: 'ChangefeedRemoved',
};

export class ChangefeedsKeeper implements SideTask {
  readonly name = 'changefeeds';
  readonly readsOnly = false;
  private status?: ChangefeedsStatus;
  private readonly access: BackupAccess;
  /** What each ConfigMap was last given (phase and message), so that it is written when it changes. */
  private readonly published = new Map<string, string>();
  /** What was last said per changefeed (a failure, drift), so that a standing one is said once. */
  private readonly announced = new SaidOnce();

  constructor(
    private readonly d: ChangefeedsDeps,
    private readonly records: StatusRecords,
  ) {
    this.access = new BackupAccess(d.kube);
  }

  /** The status of the last pass, for `status.json`. */
  current(): ChangefeedsStatus | undefined {
    return this.status;
  }

  async run({ view }: SidePass): Promise<void> {
    const info = this.declared();
    if (!info) {
      this.status = undefined;
      return;
    }
    const pods = view.components.find((c) => c.kind === 'ticdc')?.pods ?? [];
    const pod = pods
      .filter(isReady)
      .map((p) => p.metadata.name)
      .sort()[0];
    if (pod === undefined) return this.wait(info, 'no TiCDC Pod is ready');
    const base =
      this.d.ticdcBase?.(pod) ?? `${this.d.cluster.tls ? 'https' : 'http'}://${captureAddressPrefix(this.d.cluster, pod)}:${PORT.ticdc}`;
    const options: ChangefeedApiOptions = { flavour: info.architecture, ...(this.d.tls && { tls: this.d.tls }) };
    const secrets = new Map<string, VersionedSecret>();
    const known: string[] = [];
    try {
      for (const f of info.feeds) {
        const s = f.credentials?.secret;
        if (s === undefined || secrets.has(s)) continue;
        const got = await readSecret(this.d.kube, s);
        if (got) secrets.set(s, got);
      }
      for (const s of secrets.values()) for (const v of Object.values(s.data)) known.push(passwordOf(v));
      const observed = new Map<string, ChangefeedStatus>();
      // TiCDC's errors may quote a credential (the new architecture echoes the raw sink URI): hidden before they are said.
      const redacted = (f: ChangefeedStatus): ChangefeedStatus =>
        f.error ? { ...f, error: { ...f.error, message: redactText(f.error.message, known) } } : f;
      for (const f of await listChangefeeds(base, options)) if (f.state !== 'removed') observed.set(f.id, redacted(f));
      // The list shows no sink URI or config: a changefeed to adopt (never applied) is read whole, to compare with Git.
      for (const f of info.feeds) {
        const listed = observed.get(f.id);
        if (!listed || this.records.changefeeds[f.id]?.applied) continue;
        const full = await getChangefeed(base, f.id, options);
        if (full) observed.set(f.id, redacted({ ...listed, ...full }));
      }
      await this.keep(info, base, options, observed, secrets, known);
    } catch (err) {
      const why = redactText(describe(err), known);
      this.d.log.warn('could not bring the changefeeds up to date; tried again next pass', { pod, error: why });
      await this.wait(info, `TiCDC's API cannot be read: ${why}`);
    }
  }

  private async keep(
    info: ChangefeedsInfo,
    base: string,
    options: ChangefeedApiOptions,
    observed: ReadonlyMap<string, ChangefeedStatus>,
    secrets: ReadonlyMap<string, VersionedSecret>,
    known: readonly string[],
  ): Promise<void> {
    const versions = new Map([...secrets].map(([n, s]) => [n, { version: s.version, keys: Object.keys(s.data) }]));
    const plan = planChangefeeds({ feeds: info.feeds, observed, records: this.records.changefeeds, secrets: versions, now: Date.now() });
    const credential = (secret: string, key: string) => {
      const v = secrets.get(secret)?.data[key];
      return v === undefined ? undefined : passwordOf(v);
    };
    const failed = new Map<string, string>();
    for (const step of plan.steps) {
      const document = step.feed?.document ?? this.records.changefeeds[step.id]?.document;
      if (step.calls.length > 0) {
        const out = await runChangefeedCalls(step, { base, options, credential, known });
        if (!out.ok) {
          const error = `${out.call} failed: ${out.error}`;
          failed.set(step.id, error);
          await this.announce(step.id, document, `changefeed ${step.id}: ${error}`);
          continue;
        }
        for (const call of step.calls) {
          this.d.log.info(`changefeed ${step.id}: ${call}`, { changefeed: step.id });
          await this.eventOn(call === 'remove' ? undefined : document, 'Normal', EVENT_OF[call], `changefeed ${step.id}: ${call}`);
        }
        this.announced.forget(step.id);
      }
      await this.records.setChangefeed(step.id, step.record);
    }
    const feeds = plan.feeds.map((f): ChangefeedReport => {
      const error = failed.get(f.id);
      return error === undefined ? f : { ...f, phase: 'Failed', message: error };
    });
    for (const f of feeds) await this.publish(f);
    this.status = { feeds, unmanaged: plan.unmanaged, kept: plan.kept };
  }

  /** What Git declares; with none declared but some still managed, none, so that those with `Delete` are removed. */
  private declared(): ChangefeedsInfo | undefined {
    const { changefeeds } = this.d.cluster;
    if (changefeeds) return changefeeds;
    if (Object.keys(this.records.changefeeds).length === 0) return undefined;
    return { architecture: 'tiflow', feeds: [] };
  }

  /** Where a changefeed stands, on its ConfigMap for the health checks; written only when it changes. */
  private async publish(f: ChangefeedReport): Promise<void> {
    const name = names.changefeed(f.document);
    const want = { [ANNOTATION.operationPhase]: f.phase, [ANNOTATION.operationMessage]: f.message.slice(0, 1000) };
    const key = JSON.stringify(want);
    if (this.published.get(name) === key) return;
    try {
      await this.access.annotateConfigMap(name, want);
      this.published.set(name, key);
    } catch (err) {
      this.d.log.warn("cannot annotate the changefeed's ConfigMap for the health checks", { changefeed: f.id, error: describe(err) });
    }
  }

  /** A Warning said once for as long as the same thing stands. */
  private async announce(id: string, document: string | undefined, message: string): Promise<void> {
    if (!this.announced.news(id, message)) return;
    this.d.log.warn(message, { changefeed: id });
    await this.eventOn(document, 'Warning', 'ChangefeedFailed', message);
  }

  /** An Event on the changefeed's ConfigMap, or on the TiCDC StatefulSet when its document left Git. */
  private async eventOn(document: string | undefined, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    if (!document || !this.d.cluster.changefeeds?.feeds.some((f) => f.document === document))
      return this.d.event(names.statefulSet(this.d.cluster.name, 'ticdc'), type, reason, message, true);
    await this.d.kube.event({ kind: 'ConfigMap', name: names.changefeed(document) }, type, reason, message, Date.now());
  }

  private wait(info: ChangefeedsInfo, why: string): void {
    const feeds = info.feeds.map(
      (f): ChangefeedReport => ({ document: f.document, id: f.id, phase: 'Waiting', message: `waiting: ${why}` }),
    );
    this.status = { waiting: why, feeds, unmanaged: this.status?.unmanaged ?? [], kept: this.status?.kept ?? [] };
    for (const f of feeds) void this.publish(f);
  }
}
