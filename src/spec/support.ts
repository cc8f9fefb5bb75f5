/**
 * Which CRD-valid fields this project acts on. Anything else is an error naming the field, so no
 * setting is ever dropped silently. Inside an accepted field (affinity, containers, config...) every
 * value is carried over as it is.
 */
import { isDeepStrictEqual } from 'node:util';
import type { SchemaIssue } from './crd-schema';

/** Pod-level settings taken at cluster level and per component. */
const POD_SETTINGS = [
  'schedulerName', 'affinity', 'priorityClassName', 'nodeSelector', 'annotations', 'labels', 'tolerations',
  'dnsConfig', 'dnsPolicy', 'hostNetwork', 'imagePullSecrets', 'podSecurityContext', 'topologySpreadConstraints',
  'statefulSetUpdateStrategy', 'podManagementPolicy', 'configUpdateStrategy', 'imagePullPolicy',
];

const COMPONENT_COMMON = [
  ...POD_SETTINGS,
  'replicas', 'baseImage', 'version', 'image', 'requests', 'limits', 'claims', 'config', 'env', 'envFrom',
  'initContainers', 'additionalContainers', 'additionalVolumes', 'additionalVolumeMounts',
  'terminationGracePeriodSeconds', 'securityContext', 'readinessProbe', 'automountServiceAccountToken',
  'serviceAccount', 'storageClassName', 'storageVolumes', 'maxFailoverCount',
];

export const SUPPORTED: Record<string, readonly string[]> = {
  spec: [
    ...POD_SETTINGS,
    'version', 'timezone', 'helper', 'serviceAccount', 'enableDynamicConfiguration', 'clusterDomain',
    'startScriptVersion', 'startScriptV2FeatureFlags', 'preferIPv6', 'services', 'paused', 'pvReclaimPolicy',
    'enablePVReclaim', 'discovery', 'pd', 'tikv', 'tidb',
  ],
  'spec.pd': [
    ...COMPONENT_COMMON, 'service', 'dataSubDir', 'startTimeout', 'initWaitTime', 'startUpScriptVersion',
    'enableDashboardInternalProxy', 'spareVolReplaceReplicas', 'mountClusterClientSecret', 'tlsClientSecretName',
  ],
  'spec.tikv': [
    ...COMPONENT_COMMON, 'privileged', 'dataSubDir', 'enableNamedStatusPort', 'separateRocksDBLog',
    'separateRaftLog', 'rocksDBLogVolumeName', 'raftLogVolumeName', 'logTailer', 'evictLeaderTimeout',
    'waitLeaderTransferBackTimeout', 'recoverFailover', 'failover', 'storeLabels', 'scalePolicy',
    'spareVolReplaceReplicas', 'mountClusterClientSecret',
  ],
  'spec.tidb': [
    ...COMPONENT_COMMON, 'service', 'binlogEnabled', 'separateSlowLog', 'slowLogVolumeName', 'slowLogTailer',
    'tokenBasedAuthEnabled', 'bootstrapSQLConfigMapName', 'plugins', 'arguments', 'lifecycle',
    'customizedStartupProbe', 'serverLabels', 'scalePolicy',
  ],
};

/** Fields accepted only at the value that means "off". */
export const OFF_VALUES: Record<string, readonly unknown[]> = {
  'spec.tlsCluster': [{}, { enabled: false }],
  'spec.acrossK8s': [false],
  'spec.recoveryMode': [false],
  'spec.enablePVCReplace': [false],
  'spec.pdAddresses': [[]],
  'spec.discovery': [{}],
  'spec.pd.mode': [''],
  'spec.tidb.tlsClient': [{}, { enabled: false }],
  'spec.tikv.logTailer.useSidecar': [false],
  'spec.tidb.slowLogTailer.useSidecar': [false],
};

/** Why a field is refused, where there is more to say than "not supported yet". */
const REASONS: Record<string, string> = {
  volumeAttributesClassName: 'volumeAttributesClassName needs Kubernetes 1.29 or newer; the rendered manifests target 1.27',
  useSidecar: 'native sidecars need Kubernetes 1.28 or newer; the rendered manifests target 1.27',
  image: 'the deprecated image field is ignored by the CRD default baseImage; set baseImage and version instead',
  discovery: 'only `discovery: {}` is accepted for now',
};

/** Returns an issue for every field present that this project does not render yet. */
export function unsupportedFields(doc: { spec?: Record<string, unknown> }): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  const spec = doc.spec;
  if (!spec || typeof spec !== 'object') return issues;
  checkObject('spec', spec, issues);
  for (const comp of ['pd', 'tikv', 'tidb']) {
    const value = spec[comp];
    if (value && typeof value === 'object') checkObject(`spec.${comp}`, value as Record<string, unknown>, issues);
  }
  for (const parent of ['spec.tikv.logTailer', 'spec.tidb.slowLogTailer']) {
    const value = getPath(doc, parent);
    if (value && typeof value === 'object' && 'useSidecar' in value) {
      checkOff(`${parent}.useSidecar`, (value as Record<string, unknown>).useSidecar, issues);
    }
  }
  return issues;
}

function checkObject(path: string, obj: Record<string, unknown>, issues: SchemaIssue[]): void {
  const allowed = SUPPORTED[path];
  for (const [key, value] of Object.entries(obj)) {
    const full = `${path}.${key}`;
    if (full in OFF_VALUES) {
      checkOff(full, value, issues);
    } else if (!allowed.includes(key) || (key === 'image' && obj.baseImage !== '')) {
      // `image` only counts where baseImage is explicitly empty; otherwise the CRD default wins over it.
      issues.push({ path: full, message: `not supported yet: ${REASONS[key] ?? 'remove it, or render this cluster another way until it is'}` });
    }
  }
}

function checkOff(path: string, value: unknown, issues: SchemaIssue[]): void {
  if (OFF_VALUES[path].some((off) => isDeepStrictEqual(off, value))) return;
  const key = path.slice(path.lastIndexOf('.') + 1);
  issues.push({ path, message: `not supported yet: ${REASONS[key] ?? 'only its default (off) value is accepted for now'}` });
}

function getPath(root: unknown, path: string): unknown {
  let cur: unknown = root;
  for (const part of path.split('.')) {
    if (!cur || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}
