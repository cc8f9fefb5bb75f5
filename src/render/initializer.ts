/**
 * The cluster's initializer as a ConfigMap `<cluster>-tidb-initializer` (the operator's name): the
 * inline SQL of a TidbInitializer, and the object on which the companion controller notes where the
 * initialization stands (`tidb-gitops.io/phase`, `tidb-gitops.io/message`, and Events), for the same
 * health checks as a one-shot Backup's. What to do reaches the controller in its cluster JSON
 * (`initializer`); it does it once, and a re-sync or a restart does nothing again. No Job is rendered:
 * a Job in Git runs again whenever it is re-created.
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { INIT_SQL_KEY } from '../initializer/read';
import type { ResolvedInitializer } from '../initializer/types';
import { BACKUP_LABEL, LABEL, LABEL_VALUE, names } from '../tidbcluster/names';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import { namespaced } from './component';
import { refuseAtSynthesis } from './checked';

export interface InitializerProps {
  readonly cluster: ResolvedCluster;
  /** The cluster's TidbInitializer. @default none (`spec.tidb.initializer.createPassword` alone) */
  readonly initializer?: ResolvedInitializer;
}

/**
 * The ConfigMap `<cluster>-tidb-initializer`: the controller sets the root password and runs the
 * initial SQL it holds, once.
 */
export class InitializerConfigMap extends Construct {
  /** ConfigMap `<cluster>-tidb-initializer`. */
  readonly configMap: ApiObject;

  constructor(scope: Construct, id: string, props: InitializerProps) {
    super(scope, id);
    refuseAtSynthesis(this, props.cluster.kubeMinor);
    const { cluster, initializer } = props;
    const name = names.initializer(cluster.name);
    this.configMap = new ApiObject(this, 'configmap', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: namespaced(cluster, name, {
        [LABEL.name]: LABEL_VALUE.name,
        [LABEL.managedBy]: BACKUP_LABEL.managedBy,
        [LABEL.instance]: cluster.instance,
        [LABEL.component]: 'tidb-initializer',
        [BACKUP_LABEL.operation]: name,
      }),
      ...(initializer?.initSql !== undefined && { data: { [INIT_SQL_KEY]: initializer.initSql } }),
    });
  }
}
