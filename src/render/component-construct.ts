/**
 * The construct every component (PD and its micro-services, TiKV, TiDB, TiFlash, TiCDC, Pump, TiProxy)
 * extends: it checks its objects at synthesis and creates the ConfigMap, the Services and the
 * StatefulSet from what the component's own functions make, in the order the operator lists them.
 */
import type { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import type { Service, StatefulSet } from '../../imports/k8s';
import type { ResolvedCluster, ResolvedComponent } from '../tidbcluster/resolve';
import { refuseAtSynthesis } from './checked';
import { componentConfigMap } from './configmap';
import { kubeObject } from './kube';

/** What a component renders, made by its own functions from the resolved spec. */
export interface ComponentObjects {
  /** The resolved component: names and labels of the ConfigMap follow its kind. */
  readonly component: ResolvedComponent;
  /**
   * The ConfigMap's data (config file, start script...); none where the component has no ConfigMap
   * (TiCDC whose config holds only the keys that become flags).
   * @default none
   */
  readonly configData?: Record<string, string>;
  /** The client Service, where the component has one. @default none */
  readonly service?: Service;
  /** The headless Service. */
  readonly peerService: Service;
  /** The headless Service comes before the client Service (TiDB's order). @default false */
  readonly peerFirst?: boolean;
  /** The StatefulSet, given the name of the ConfigMap (undefined without one). */
  readonly statefulSet: (configMapName: string | undefined) => StatefulSet;
}

/**
 * A component: ConfigMap (construct id `config`), client Service (`service`), headless Service
 * (`peer`) and StatefulSet (`statefulset`). A subclass passes the function that makes its objects,
 * called once the construct is in the tree.
 */
export abstract class ComponentConstruct extends Construct {
  /** The component's ConfigMap, where it has one. @default none */
  readonly configMap?: ApiObject;
  /** The client Service `<cluster>-<component>`, where the component has one. @default none */
  readonly service?: ApiObject;
  /** The headless Service. */
  readonly peerService: ApiObject;
  /** StatefulSet `<cluster>-<component>`. */
  readonly statefulSet: ApiObject;

  protected constructor(scope: Construct, id: string, cluster: ResolvedCluster, render: (cluster: ResolvedCluster) => ComponentObjects) {
    super(scope, id);
    refuseAtSynthesis(this, cluster.kubeMinor);
    const objects = render(cluster);
    const configMap = objects.configData && componentConfigMap(cluster, objects.component, objects.configData);
    if (configMap) this.configMap = kubeObject(this, 'config', configMap);
    const service = () => objects.service && kubeObject(this, 'service', objects.service);
    if (!objects.peerFirst) this.service = service();
    this.peerService = kubeObject(this, 'peer', objects.peerService);
    if (objects.peerFirst) this.service = service();
    this.statefulSet = kubeObject(this, 'statefulset', objects.statefulSet(configMap?.metadata?.name));
  }
}
