/**
 * Deletes the config revisions nothing needs any more (the decision is plan/configmaps.ts). It lists
 * ConfigMaps only when a StatefulSet's spec or revisions moved since the last look, or when a kept
 * one's grace period ends, so an idle cluster costs no requests.
 */
import { COMPONENTS, LABEL, names, type ComponentKind } from '../../tidbcluster/names';
import type { EventRecorder } from '../clients/events';
import type { KubeAccess } from '../clients/kube';
import type { ClusterInfo } from '../model/cluster';
import { staleConfigMaps } from '../plan/configmaps';
import type { Logger } from '../runtime/log';
import type { Metrics } from '../runtime/metrics';

export interface ConfigCollectorDeps {
  readonly cluster: ClusterInfo;
  readonly kube: KubeAccess;
  readonly metrics: Metrics;
  readonly log: Logger;
  readonly event: EventRecorder;
  readonly acting: () => boolean;
  readonly options: { readonly configGraceMs?: number };
}

export class ConfigCollector {
  /** StatefulSet specs and revisions at the last look; a change means a new look. */
  private fingerprint?: string;
  private recheckAt?: number;

  constructor(private readonly d: ConfigCollectorDeps) {}

  async collect(now: number): Promise<void> {
    const { kube } = this.d;
    const statefulSets = kube.statefulSets();
    const fingerprint = JSON.stringify(
      statefulSets
        .map((s) => [
          s.metadata.name,
          s.metadata.generation,
          s.status?.observedGeneration,
          s.status?.currentRevision,
          s.status?.updateRevision,
        ])
        .sort(),
    );
    if (fingerprint === this.fingerprint && !(this.recheckAt !== undefined && now >= this.recheckAt)) return;
    const result = staleConfigMaps({
      cluster: this.d.cluster,
      statefulSets,
      pods: kube.pods(),
      configMaps: await kube.listConfigMaps(),
      now,
      graceMs: this.d.options.configGraceMs,
    });
    for (const cm of result.stale) {
      const name = cm.metadata.name!;
      if (!this.d.acting()) return;
      if (!(await kube.deleteConfigMap(name, cm.metadata.uid, cm.metadata.resourceVersion))) continue;
      const kind = cm.metadata.labels?.[LABEL.component] ?? '';
      this.d.log.info('deleted an old config revision', { configMap: name, component: kind });
      this.d.metrics.inc('tidb_gitops_configmaps_deleted_total', { component: kind });
      const sts = COMPONENTS.includes(kind as ComponentKind) ? names.statefulSet(this.d.cluster.name, kind as ComponentKind) : undefined;
      if (sts && statefulSets.some((s) => s.metadata.name === sts)) {
        await this.d.event(
          sts,
          'Normal',
          'ConfigMapDeleted',
          `Deleted ConfigMap ${name}: no Pod, StatefulSet revision or current spec uses it`,
          true,
        );
      }
    }
    // A rollout under way is looked at again when it ends, which changes the fingerprint; a revision
    // kept for its grace period, on the first idle pass after the period.
    this.fingerprint = fingerprint;
    this.recheckAt = result.recheckAt;
  }
}
