/** `spec.discovery`: the companion controller's Pod, in the operator's field names. */
import type {
  Container,
  EnvFromSource,
  EnvVar,
  PodSecurityContext,
  ResourceClaim,
  SecurityContext,
  Volume,
  VolumeMount,
} from '../../imports/k8s';
import type { PodSettings, ResourceList } from './spec-parts';

/** The operator's discovery probe settings; the controller's probes are HTTP checks on its metrics port. */
export interface DiscoveryProbeSpec {
  /** Only `tcp`, the one kind tidb-operator's discovery has; it does not change our HTTP check. @default tcp */
  type?: 'tcp';
  /** @default readiness: 0, liveness: 10 */
  initialDelaySeconds?: number;
  /** @default readiness: 5, liveness: 10 */
  periodSeconds?: number;
}

/**
 * `spec.discovery`. Pod-level settings fall back to the cluster's as for every component; the ones
 * that only mean something for a StatefulSet are refused.
 */
export interface DiscoverySpec extends Omit<PodSettings, 'statefulSetUpdateStrategy' | 'podManagementPolicy' | 'configUpdateStrategy'> {
  /**
   * Full image of the controller (a tidb-gitops image: the container runs `tidb-gitops controller`).
   * tidb-operator ignored this field; an operator image here is an error.
   * @default the render option `controllerImage` (`--controller-image`), else ghcr.io/tidb-gitops/tidb-gitops:<this release>
   */
  image?: string;
  /** Tag of the default repository, when `image` is unset (not `spec.version`: that is TiDB's). @default this release */
  version?: string;
  /**
   * Given `requests` or `limits`, both are taken as they are; the defaults apply only when neither is set.
   * @default {cpu: 50m, memory: 96Mi}
   */
  requests?: ResourceList;
  /** @default {memory: 256Mi} (only when requests is unset too) */
  limits?: ResourceList;
  /** Dynamic resource claims of the container. @default [] */
  claims?: ResourceClaim[];
  /** Appended after the controller's env; its names cannot be overridden. @default [] */
  env?: EnvVar[];
  /** @default [] */
  envFrom?: EnvFromSource[];
  /** @default [] */
  initContainers?: Container[];
  /** Appended after the `discovery` container; one named `discovery` is merged into it. @default [] */
  additionalContainers?: Container[];
  /** @default [] */
  additionalVolumes?: Volume[];
  /** Mounted into the `discovery` container. @default [] */
  additionalVolumeMounts?: VolumeMount[];
  /** @default Kubernetes default (30) */
  terminationGracePeriodSeconds?: number;
  /**
   * Container security context.
   * @default {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: {drop: [ALL]}}
   */
  securityContext?: SecurityContext;
  /**
   * Pod security context (falls back to `spec.podSecurityContext`).
   * @default {runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532, seccompProfile: {type: RuntimeDefault}}
   */
  podSecurityContext?: PodSecurityContext;
  /** Timing of the readiness check (`GET /readyz` on port 10263). @default {periodSeconds: 5} */
  readinessProbe?: DiscoveryProbeSpec;
  /** Timing of the liveness check (`GET /healthz` on port 10263). @default {initialDelaySeconds: 10, periodSeconds: 10} */
  livenessProbe?: DiscoveryProbeSpec;
  /**
   * `false` keeps the token out of every container but the controller's, which gets a projected
   * `kube-api-access` volume (it needs the API), as tidb-operator does. @default Kubernetes default (true)
   */
  automountServiceAccountToken?: boolean;
  /** Accepted only when it suspends nothing: there is no StatefulSet to suspend. @default {} */
  suspendAction?: {
    /** @default false */
    suspendStatefulSet?: false;
  };
}
