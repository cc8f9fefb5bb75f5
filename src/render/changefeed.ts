/**
 * A Changefeed document as a ConfigMap `changefeed-<name>`: the changefeed as Git declares it (no
 * credential: the Secret is named, never read here), so that a pull request shows what changes. The
 * controller keeps the changefeed in TiCDC and writes where it stands on this ConfigMap
 * (`tidb-gitops.io/phase`, `tidb-gitops.io/message`), where the Argo CD and Flux health checks read it,
 * as they read a one-shot Backup's.
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import type { ChangefeedInfo } from '../tidbcluster/contract';
import { BACKUP_LABEL, LABEL, names, OPERATION_KEY } from '../tidbcluster/names';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import { namespaced } from './component';

export interface ChangefeedProps {
  readonly cluster: ResolvedCluster;
  readonly feed: ChangefeedInfo;
}

/** The ConfigMap of one Changefeed. */
export class ChangefeedConfigMap extends Construct {
  constructor(scope: Construct, id: string, props: ChangefeedProps) {
    super(scope, id);
    const { cluster, feed } = props;
    const name = names.changefeed(feed.document);
    new ApiObject(this, 'configmap', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: namespaced(cluster, name, {
        [LABEL.name]: 'changefeed',
        [LABEL.managedBy]: BACKUP_LABEL.managedBy,
        [LABEL.instance]: cluster.instance,
        [LABEL.component]: 'changefeed',
        [BACKUP_LABEL.operation]: name,
      }),
      data: { [OPERATION_KEY.changefeed]: `${JSON.stringify(feed, null, 2)}\n` },
    });
  }
}
