/**
 * Which CRD-valid fields this project acts on. Anything else is an error naming the field, so no
 * setting is ever dropped silently. Inside an accepted field (affinity, containers, config...) every
 * value is carried over as it is.
 */
import { isDeepStrictEqual } from 'node:util';
import type { SchemaIssue } from './crd-schema';
import { DISCOVERY_FIELDS } from './discovery';
import { PDMS_FIELDS } from './pdms';
import { COMPONENTS } from './names';
import { PUMP_FIELDS } from './pump';
import { TICDC_FIELDS } from './ticdc';
import { TIFLASH_FIELDS } from './tiflash';
import { TIPROXY_FIELDS } from './tiproxy';
import type { ComponentFields } from './fields';

/** The component modules beyond PD, TiKV and TiDB (and discovery), each declaring its own fields. */
const COMPONENT_MODULES: Record<string, ComponentFields> = {
  tiflash: TIFLASH_FIELDS,
  ticdc: TICDC_FIELDS,
  pump: PUMP_FIELDS,
  tiproxy: TIPROXY_FIELDS,
  discovery: DISCOVERY_FIELDS,
};

/** Pod-level settings taken at cluster level and per component. */
const POD_SETTINGS = [
  'schedulerName',
  'affinity',
  'priorityClassName',
  'nodeSelector',
  'annotations',
  'labels',
  'tolerations',
  'dnsConfig',
  'dnsPolicy',
  'hostNetwork',
  'imagePullSecrets',
  'podSecurityContext',
  'topologySpreadConstraints',
  'statefulSetUpdateStrategy',
  'podManagementPolicy',
  'configUpdateStrategy',
  'imagePullPolicy',
];

const COMPONENT_COMMON = [
  ...POD_SETTINGS,
  'replicas',
  'baseImage',
  'version',
  'image',
  'requests',
  'limits',
  'claims',
  'config',
  'env',
  'envFrom',
  'initContainers',
  'additionalContainers',
  'additionalVolumes',
  'additionalVolumeMounts',
  'terminationGracePeriodSeconds',
  'securityContext',
  'readinessProbe',
  'automountServiceAccountToken',
  'serviceAccount',
  'storageClassName',
  'volumeAttributesClassName',
  'storageVolumes',
  'maxFailoverCount',
];

export const SUPPORTED: Record<string, readonly string[]> = {
  spec: [
    ...POD_SETTINGS,
    'version',
    'timezone',
    'helper',
    'serviceAccount',
    'enableDynamicConfiguration',
    'clusterDomain',
    'startScriptVersion',
    'startScriptV2FeatureFlags',
    'preferIPv6',
    'services',
    'paused',
    'pvReclaimPolicy',
    'enablePVReclaim',
    'discovery',
    'tlsCluster',
    'acrossK8s',
    'cluster',
    'pdAddresses',
    'pd',
    'pdms',
    'tikv',
    'tidb',
    'tiflash',
    'ticdc',
    'pump',
    'tiproxy',
  ],
  'spec.pd': [
    ...COMPONENT_COMMON,
    'service',
    'dataSubDir',
    'startTimeout',
    'initWaitTime',
    'startUpScriptVersion',
    'enableDashboardInternalProxy',
    'spareVolReplaceReplicas',
    'mountClusterClientSecret',
    'tlsClientSecretName',
    'mode',
  ],
  'spec.tikv': [
    ...COMPONENT_COMMON,
    'privileged',
    'dataSubDir',
    'enableNamedStatusPort',
    'separateRocksDBLog',
    'separateRaftLog',
    'rocksDBLogVolumeName',
    'raftLogVolumeName',
    'logTailer',
    'evictLeaderTimeout',
    'waitLeaderTransferBackTimeout',
    'recoverFailover',
    'failover',
    'storeLabels',
    'scalePolicy',
    'spareVolReplaceReplicas',
    'mountClusterClientSecret',
  ],
  'spec.tidb': [
    ...COMPONENT_COMMON,
    'service',
    'binlogEnabled',
    'separateSlowLog',
    'slowLogVolumeName',
    'slowLogTailer',
    'tokenBasedAuthEnabled',
    'bootstrapSQLConfigMapName',
    'plugins',
    'arguments',
    'lifecycle',
    'customizedStartupProbe',
    'serverLabels',
    'scalePolicy',
    'tlsClient',
    'initializer',
  ],
  ...Object.fromEntries(
    Object.entries(COMPONENT_MODULES).map(([comp, f]) => [
      `spec.${comp}`,
      [...COMPONENT_COMMON.filter((k) => !f.except?.includes(k)), ...f.extra],
    ]),
  ),
  // Each entry of the list (checked by `checkPdmsEntry`).
  'spec.pdms[]': [...COMPONENT_COMMON.filter((k) => !(PDMS_FIELDS.except as readonly string[]).includes(k)), ...PDMS_FIELDS.extra],
};

const COMPONENT_OFF_VALUES: Record<string, readonly unknown[]> = Object.fromEntries(
  Object.entries(COMPONENT_MODULES).flatMap(([comp, f]) =>
    Object.entries(f.offValues ?? {}).map(([path, values]) => [`spec.${comp}.${path}`, values]),
  ),
);

/** Component reasons, keyed by full path (`spec.pump.readinessProbe`): the same field may differ per component. */
const COMPONENT_REASONS: Record<string, string> = {
  ...Object.fromEntries(
    Object.entries(COMPONENT_MODULES).flatMap(([comp, f]) =>
      Object.entries(f.reasons ?? {}).map(([key, reason]) => [`spec.${comp}.${key}`, reason]),
    ),
  ),
  ...Object.fromEntries(Object.entries(PDMS_FIELDS.reasons).map(([key, reason]) => [`spec.pdms[].${key}`, reason])),
};

const SUSPEND_OFF = [{}, { suspendStatefulSet: false }];

/** Fields accepted only at the value that means "off". */
export const OFF_VALUES: Record<string, readonly unknown[]> = {
  // TSO and scheduling are entries of spec.pdms, not fields of spec.
  ...Object.fromEntries(
    ['spec', ...COMPONENTS.filter((c) => c !== 'tso' && c !== 'scheduling').map((c) => `spec.${c}`)].map((p) => [
      `${p}.suspendAction`,
      SUSPEND_OFF,
    ]),
  ),
  ...Object.fromEntries(Object.entries(PDMS_FIELDS.offValues).map(([key, values]) => [`spec.pdms[].${key}`, values])),
  'spec.recoveryMode': [false],
  'spec.enablePVCReplace': [false],
  'spec.enablePVReclaim': [false],
  ...COMPONENT_OFF_VALUES,
};

/** Why a field is refused, where there is more to say than "not supported yet". */
const REASONS: Record<string, string> = {
  image: 'the deprecated image field is ignored by the CRD default baseImage; set baseImage and version instead',
  tici: 'TiCI is not rendered',
  suspendAction: 'to stop a component, lower its replicas (the StatefulSet and its volumes stay)',
  enablePVReclaim:
    'claims of scaled-in Pods are kept, annotated tidb.pingcap.com/pvc-defer-deleting, until their ordinal comes back; delete them yourself to free the volumes',
};

/** Why the field at `path` is refused, or undefined for the generic message. */
export function refusalReason(path: string): string | undefined {
  return COMPONENT_REASONS[path] ?? REASONS[path.slice(path.lastIndexOf('.') + 1)];
}

/** Returns an issue for every field present that this project does not render yet. */
export function unsupportedFields(doc: { spec?: Record<string, unknown> }): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  const spec = doc.spec;
  if (!spec || typeof spec !== 'object') return issues;
  checkObject('spec', spec, issues);
  // Each micro-service of the list by the same rules, reported at its list path (`spec.pdms[0].startTimeout`).
  if (Array.isArray(spec.pdms)) {
    spec.pdms.forEach((entry, i) => {
      if (entry && typeof entry === 'object') checkObject('spec.pdms[]', entry as Record<string, unknown>, issues, `spec.pdms[${i}]`);
    });
  }
  for (const path of Object.keys(SUPPORTED)) {
    const value = path === 'spec' ? undefined : spec[path.slice('spec.'.length)];
    if (value && typeof value === 'object') checkObject(path, value as Record<string, unknown>, issues);
  }
  // Deeper "off only" fields (checkObject sees the top two levels).
  for (const path of Object.keys(OFF_VALUES)) {
    const cut = path.lastIndexOf('.');
    const parent = path.slice(0, cut);
    if (parent === 'spec' || parent in SUPPORTED) continue;
    const value = getPath(doc, parent);
    const key = path.slice(cut + 1);
    if (value && typeof value === 'object' && key in value) checkOff(path, (value as Record<string, unknown>)[key], issues);
  }
  return issues;
}

/** The fields of `obj` against the rules of `rule` (a key of SUPPORTED), reported at `at`. */
function checkObject(rule: string, obj: Record<string, unknown>, issues: SchemaIssue[], at = rule): void {
  const allowed = SUPPORTED[rule];
  for (const [key, value] of Object.entries(obj)) {
    const full = `${rule}.${key}`;
    if (full in OFF_VALUES) {
      checkOff(full, value, issues, `${at}.${key}`);
    } else if (!allowed.includes(key) || (key === 'image' && allowed.includes('baseImage') && obj.baseImage !== '')) {
      // A component's `image` only counts where baseImage is explicitly empty; otherwise the CRD default wins over it.
      issues.push({
        path: `${at}.${key}`,
        message: `not supported yet: ${refusalReason(full) ?? 'remove it, or render this cluster another way until it is'}`,
      });
    }
  }
}

function checkOff(rule: string, value: unknown, issues: SchemaIssue[], at = rule): void {
  if (OFF_VALUES[rule].some((off) => isDeepStrictEqual(off, value))) return;
  issues.push({ path: at, message: `not supported yet: ${refusalReason(rule) ?? 'only its default (off) value is accepted for now'}` });
}

function getPath(root: unknown, path: string): unknown {
  let cur: unknown = root;
  for (const part of path.split('.')) {
    if (!cur || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}
