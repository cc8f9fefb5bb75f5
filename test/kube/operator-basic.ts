/**
 * What PingCAP's tidb-operator v1 (branch `release-1.x`, the v1.6 line, head 0045b121) creates for
 * the `basic` example (../shared/examples/basic/tidb-cluster.yaml) in one namespace, as plain
 * JSON objects, in the order the operator creates them, in the state it leaves them when idle.
 *
 * Built from the operator's source, NOT from this project's renderer (nothing here may come from
 * src/render): the tests use it to stand up an operator-managed cluster on a real API server and
 * prove it can be taken over by the rendered manifests without recreating Pods or PVCs.
 *
 * File names in comments are paths in the pingcap/tidb-operator repository at release-1.x, unless
 * they start with k8s.io/ (Go struct field order of k8s.io/api v0.29.15, the version the operator
 * vendors, decides the key order of the JSON it writes into annotations).
 *
 * Conventions of the Go side that shape the objects:
 * - Objects are sent as Go's encoding/json renders the typed structs, so embedded pod templates and
 *   claim templates carry `creationTimestamp: null`, containers `resources: {}` and claim templates
 *   `status: {}` (non-pointer structs are never omitted). The top-level `status` is left out here.
 * - `pingcap.com/last-applied-configuration` (StatefulSets, Services) and
 *   `pingcap.com/last-applied-podtemplate` (discovery Deployment) hold Go's JSON of the spec:
 *   struct fields in declaration order, map keys sorted, `<` `>` `&` escaped as \u003c \u003e \u0026.
 *   The spec objects below are therefore written with keys in Go field order and maps with sorted
 *   keys, and `goJson` turns them into the exact annotation text.
 */
import { createHash } from 'node:crypto';

export type Obj = Record<string, any>;

// ---------------------------------------------------------------------------------------------
// Pinned inputs

export const TC_NAME = 'basic';
/** spec.version of the example. */
export const VERSION = 'v8.5.7';
/** spec.helper.image of the example (used by the TiDB slow-log tailer). */
export const HELPER_IMAGE = 'alpine:3.16.0';
/**
 * The discovery container runs the operator's own image (operator flag `-tidb-discovery-image`,
 * which the Helm chart sets to the operator image: charts/tidb-operator/templates/
 * controller-manager-deployment.yaml). Any tag works for the fixture; v1.6.1 is pinned here.
 */
export const DISCOVERY_IMAGE = 'pingcap/tidb-operator:v1.6.1';

// ---------------------------------------------------------------------------------------------
// Go encoding/json and the ConfigMap digest

/**
 * Go's `json.Marshal` text for a value whose object keys are already in Go order (struct field
 * order, sorted map keys): JSON.stringify plus Go's HTML-safe escaping of < > & and U+2028/U+2029.
 */
export function goJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/**
 * The ConfigMap name suffix with `configUpdateStrategy: RollingUpdate`: the first 7 hex digits of
 * sha256 over Go's json.Marshal of the `data` map (map keys sorted)
 * (`AddConfigMapDigestSuffix` / `Sha256Sum`, pkg/manager/utils/configmap.go).
 */
export function configMapDigestSuffix(data: Record<string, string>): string {
  const sorted: Record<string, string> = {};
  for (const key of Object.keys(data).sort()) sorted[key] = data[key];
  return createHash('sha256').update(goJson(sorted), 'utf8').digest('hex').slice(0, 7);
}

// ---------------------------------------------------------------------------------------------
// ConfigMap data (operator output for this input, kept as data)

/**
 * PD `config-file`: `spec.pd.config: {}` is decoded into the typed PDConfig and re-encoded, which
 * is empty, and no key is forced without TLS (getPDConfigMap, pkg/manager/member/
 * pd_member_manager.go; an empty config gives "" as in TestGetPDConfigMap, pd_member_manager_test.go).
 */
export const PD_CONFIG = '';

/**
 * TiKV `config-file`: the object goes through the typed TiKVConfig (pkg/apis/pingcap/v1alpha1/
 * tikv_config.go: storage.reserve-space, rocksdb.max-open-files, raftdb.max-open-files all exist),
 * then a generic map is encoded by BurntSushi/toml v0.3.1 (pkg/apis/util/config/config.go): sorted
 * keys, blank line between top-level tables, two-space indent per level (format as in
 * TestTiKVConfig, pkg/apis/pingcap/v1alpha1/tikv_config_test.go). transformTiKVConfigMap
 * (tikv_member_manager.go) changes nothing here.
 */
export const TIKV_CONFIG = [
  '[raftdb]',
  '  max-open-files = 256',
  '',
  '[rocksdb]',
  '  max-open-files = 256',
  '',
  '[storage]',
  '  reserve-space = "0MB"',
  '',
].join('\n');

/**
 * TiDB `config-file`: `{}` plus the operator's in-memory default `log.file.max-backups = 3`
 * (setTidbSpecDefault, pkg/apis/pingcap/v1alpha1/defaulting/tidbcluster.go).
 */
export const TIDB_CONFIG = ['[log]', '  [log.file]', '    max-backups = 3', ''].join('\n');

/**
 * PD `startup-script`: pdStartScriptTplText (pkg/manager/member/startscript/v1/template.go) rendered
 * by RenderPDStartScript (startscript/v1/render_script.go) with scheme http, data dir /var/lib/pd,
 * no cluster domain, nslookup DNS check, threshold 30 (CRD default of spec.pd.startTimeout). Equal
 * to the "https scheme" case of TestRenderPDStartScript (startscript/v1/template_test.go) with
 * `=https://` turned into `=http://`.
 */
export const PD_START_SCRIPT = [
  '#!/bin/sh',
  '',
  '# This script is used to start pd containers in kubernetes cluster',
  '',
  '# Use DownwardAPIVolumeFiles to store informations of the cluster:',
  '# https://kubernetes.io/docs/tasks/inject-data-application/downward-api-volume-expose-pod-information/#the-downward-api',
  '#',
  '#   runmode="normal/debug"',
  '#',
  '',
  'set -uo pipefail',
  '',
  'ANNOTATIONS="/etc/podinfo/annotations"',
  '',
  'if [[ ! -f "${ANNOTATIONS}" ]]',
  'then',
  '    echo "${ANNOTATIONS} does\'t exist, exiting."',
  '    exit 1',
  'fi',
  'source ${ANNOTATIONS} 2>/dev/null',
  '',
  'runmode=${runmode:-normal}',
  'if [[ X${runmode} == Xdebug ]]',
  'then',
  '    echo "entering debug mode."',
  '    tail -f /dev/null',
  'fi',
  '',
  '# Use HOSTNAME if POD_NAME is unset for backward compatibility.',
  'POD_NAME=${POD_NAME:-$HOSTNAME}',
  '# the general form of variable PEER_SERVICE_NAME is: "<clusterName>-pd-peer"',
  "cluster_name=`echo ${PEER_SERVICE_NAME} | sed 's/-pd-peer//'`",
  'domain="${POD_NAME}.${PEER_SERVICE_NAME}.${NAMESPACE}.svc"',
  'discovery_url="${cluster_name}-discovery.${NAMESPACE}.svc:10261"',
  'encoded_domain_url=`echo ${domain}:2380 | base64 | tr "\\n" " " | sed "s/ //g"`',
  'elapseTime=0',
  'period=1',
  'threshold=30',
  'while true; do',
  'sleep ${period}',
  'elapseTime=$(( elapseTime+period ))',
  '',
  'if [[ ${elapseTime} -ge ${threshold} ]]',
  'then',
  'echo "waiting for pd cluster ready timeout" >&2',
  'exit 1',
  'fi',
  '',
  'if nslookup ${domain} 2>/dev/null',
  'then',
  'echo "nslookup domain ${domain}.svc success"',
  'break',
  'else',
  'echo "nslookup domain ${domain} failed" >&2',
  'fi',
  'done',
  '',
  'ARGS="--data-dir=/var/lib/pd \\',
  '--name=${POD_NAME} \\',
  '--peer-urls=http://0.0.0.0:2380 \\',
  '--advertise-peer-urls=http://${domain}:2380 \\',
  '--client-urls=http://0.0.0.0:2379 \\',
  '--advertise-client-urls=http://${domain}:2379 \\',
  '--config=/etc/pd/pd.toml \\',
  '"',
  '',
  'if [[ -f /var/lib/pd/join ]]',
  'then',
  '# The content of the join file is:',
  '#   demo-pd-0=http://demo-pd-0.demo-pd-peer.demo.svc:2380,demo-pd-1=http://demo-pd-1.demo-pd-peer.demo.svc:2380',
  '# The --join args must be:',
  '#   --join=http://demo-pd-0.demo-pd-peer.demo.svc:2380,http://demo-pd-1.demo-pd-peer.demo.svc:2380',
  'join=`cat /var/lib/pd/join | tr "," "\\n" | awk -F\'=\' \'{print $2}\' | tr "\\n" ","`',
  'join=${join%,}',
  'ARGS="${ARGS} --join=${join}"',
  'elif [[ ! -d /var/lib/pd/member/wal ]]',
  'then',
  'until result=$(wget -qO- -T 3 http://${discovery_url}/new/${encoded_domain_url} 2>/dev/null); do',
  'echo "waiting for discovery service to return start args ..."',
  'sleep $((RANDOM % 5))',
  'done',
  'ARGS="${ARGS}${result}"',
  'fi',
  '',
  'echo "starting pd-server ..."',
  'sleep $((RANDOM % 10))',
  'echo "/pd-server ${ARGS}"',
  'exec /pd-server ${ARGS}',
  '',
].join('\n');

/**
 * TiKV `startup-script`: tikvStartScriptTplText (startscript/v1/template.go) rendered by
 * RenderTiKVStartScript (startscript/v1/render_script.go); `enableDynamicConfiguration: true` adds
 * `--advertise-status-addr`. Equal to the "enable AdvertiseAddr" case of TestRenderTiKVStartScript
 * (startscript/v1/template_test.go). Note the two tab-indented lines in the debug block.
 */
export const TIKV_START_SCRIPT = [
  '#!/bin/sh',
  '',
  '# This script is used to start tikv containers in kubernetes cluster',
  '',
  '# Use DownwardAPIVolumeFiles to store informations of the cluster:',
  '# https://kubernetes.io/docs/tasks/inject-data-application/downward-api-volume-expose-pod-information/#the-downward-api',
  '#',
  '#   runmode="normal/debug"',
  '#',
  '',
  'set -uo pipefail',
  '',
  'ANNOTATIONS="/etc/podinfo/annotations"',
  '',
  'if [[ ! -f "${ANNOTATIONS}" ]]',
  'then',
  '    echo "${ANNOTATIONS} does\'t exist, exiting."',
  '    exit 1',
  'fi',
  'source ${ANNOTATIONS} 2>/dev/null',
  '',
  'runmode=${runmode:-normal}',
  'if [[ X${runmode} == Xdebug ]]',
  'then',
  '\techo "entering debug mode."',
  '\ttail -f /dev/null',
  'fi',
  '',
  '# Use HOSTNAME if POD_NAME is unset for backward compatibility.',
  'POD_NAME=${POD_NAME:-$HOSTNAME}',
  'ARGS="--pd=http://${CLUSTER_NAME}-pd:2379 \\',
  '--advertise-addr=${POD_NAME}.${HEADLESS_SERVICE_NAME}.${NAMESPACE}.svc:20160 \\',
  '--addr=0.0.0.0:20160 \\',
  '--status-addr=0.0.0.0:20180 \\',
  '--advertise-status-addr=${POD_NAME}.${HEADLESS_SERVICE_NAME}.${NAMESPACE}.svc:20180 \\',
  '--data-dir=/var/lib/tikv \\',
  '--capacity=${CAPACITY} \\',
  '--config=/etc/tikv/tikv.toml',
  '"',
  '',
  'if [ ! -z "${STORE_LABELS:-}" ]; then',
  '  LABELS=" --labels ${STORE_LABELS} "',
  '  ARGS="${ARGS}${LABELS}"',
  'fi',
  '',
  'echo "starting tikv-server ..."',
  'echo "/tikv-server ${ARGS}"',
  'exec /tikv-server ${ARGS}',
  '',
].join('\n');

/**
 * TiDB `startup-script`: tidbStartScriptTplText (startscript/v1/template.go) rendered by
 * RenderTiDBStartScript (startscript/v1/render_script.go) without plugins or arguments. Equal to
 * the "basic" case of TestRenderTiDBStartScript (startscript/v1/template_test.go).
 */
export const TIDB_START_SCRIPT = [
  '#!/bin/sh',
  '',
  '# This script is used to start tidb containers in kubernetes cluster',
  '',
  '# Use DownwardAPIVolumeFiles to store informations of the cluster:',
  '# https://kubernetes.io/docs/tasks/inject-data-application/downward-api-volume-expose-pod-information/#the-downward-api',
  '#',
  '#   runmode="normal/debug"',
  '#',
  'set -uo pipefail',
  '',
  'ANNOTATIONS="/etc/podinfo/annotations"',
  '',
  'if [[ ! -f "${ANNOTATIONS}" ]]',
  'then',
  '    echo "${ANNOTATIONS} does\'t exist, exiting."',
  '    exit 1',
  'fi',
  'source ${ANNOTATIONS} 2>/dev/null',
  'runmode=${runmode:-normal}',
  'if [[ X${runmode} == Xdebug ]]',
  'then',
  '    echo "entering debug mode."',
  '    tail -f /dev/null',
  'fi',
  '',
  '# Use HOSTNAME if POD_NAME is unset for backward compatibility.',
  'POD_NAME=${POD_NAME:-$HOSTNAME}',
  'ARGS="--store=tikv \\',
  '--advertise-address=${POD_NAME}.${HEADLESS_SERVICE_NAME}.${NAMESPACE}.svc \\',
  '--host=0.0.0.0 \\',
  '--path=${CLUSTER_NAME}-pd:2379 \\',
  '--config=/etc/tidb/tidb.toml',
  '"',
  '',
  'if [[ X${BINLOG_ENABLED:-} == Xtrue ]]',
  'then',
  '    ARGS="${ARGS} --enable-binlog=true"',
  'fi',
  '',
  'SLOW_LOG_FILE=${SLOW_LOG_FILE:-""}',
  'if [[ ! -z "${SLOW_LOG_FILE}" ]]',
  'then',
  '    ARGS="${ARGS} --log-slow-query=${SLOW_LOG_FILE:-}"',
  'fi',
  '',
  'echo "start tidb-server ..."',
  'echo "/tidb-server ${ARGS}"',
  'exec /tidb-server ${ARGS}',
  '',
].join('\n');

/** The `data` of the three ConfigMaps (keys `config-file`, `startup-script`: getPDConfigMap,
 * getTikVConfigMapForTiKVSpec in utils.go, getTiDBConfigMap). */
export const CONFIG_MAP_DATA: Record<'pd' | 'tikv' | 'tidb', Record<string, string>> = {
  pd: { 'config-file': PD_CONFIG, 'startup-script': PD_START_SCRIPT },
  tikv: { 'config-file': TIKV_CONFIG, 'startup-script': TIKV_START_SCRIPT },
  tidb: { 'config-file': TIDB_CONFIG, 'startup-script': TIDB_START_SCRIPT },
};

/** `<tc>-<component>-<digest>` (configUpdateStrategy RollingUpdate → UpdateConfigMapIfNeed,
 * pkg/manager/utils/config.go, adds the digest suffix). */
export function operatorConfigMapName(component: 'pd' | 'tikv' | 'tidb'): string {
  return `${TC_NAME}-${component}-${configMapDigestSuffix(CONFIG_MAP_DATA[component])}`;
}

// ---------------------------------------------------------------------------------------------
// The CRD and the TidbCluster

/** A minimal CRD for TidbCluster, our own (the operator's manifests/crd/v1/pingcap.com_tidbclusters.yaml
 * is a 35k-line typed schema with `subresources: {}`, i.e. without a status subresource). */
export function tidbClusterCrd(): Obj {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'tidbclusters.pingcap.com' },
    spec: {
      group: 'pingcap.com',
      names: {
        kind: 'TidbCluster',
        listKind: 'TidbClusterList',
        plural: 'tidbclusters',
        singular: 'tidbcluster',
        shortNames: ['tc'],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

/** The TidbCluster as the user applied it (the fields of ../shared/examples/basic/tidb-cluster.yaml;
 * test/real/operator-basic.test.ts checks they agree), in `namespace`. */
export function operatorTidbCluster(namespace: string): Obj {
  return {
    apiVersion: 'pingcap.com/v1alpha1',
    kind: 'TidbCluster',
    metadata: { name: TC_NAME, namespace },
    spec: {
      version: VERSION,
      timezone: 'UTC',
      pvReclaimPolicy: 'Retain',
      enableDynamicConfiguration: true,
      configUpdateStrategy: 'RollingUpdate',
      discovery: {},
      helper: { image: HELPER_IMAGE },
      pd: {
        baseImage: 'pingcap/pd',
        maxFailoverCount: 0,
        replicas: 1,
        requests: { storage: '1Gi' },
        config: {},
      },
      tikv: {
        baseImage: 'pingcap/tikv',
        maxFailoverCount: 0,
        evictLeaderTimeout: '1m',
        replicas: 1,
        requests: { storage: '1Gi' },
        config: {
          storage: { 'reserve-space': '0MB' },
          rocksdb: { 'max-open-files': 256 },
          raftdb: { 'max-open-files': 256 },
        },
      },
      tidb: {
        baseImage: 'pingcap/tidb',
        maxFailoverCount: 0,
        replicas: 1,
        service: { type: 'ClusterIP' },
        config: {},
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Building blocks

type Component = 'discovery' | 'pd' | 'tikv' | 'tidb';

/**
 * `label.New().Instance(<tc>).<Component>()` (pkg/apis/label/label.go), keys sorted as Go marshals
 * maps. Used for metadata labels, selectors, pod labels and ConfigMap labels alike. The instance
 * is `tc.GetInstanceName()` = the TC name (the TC has no app.kubernetes.io/instance label).
 */
function componentLabels(component: Component): Record<string, string> {
  return {
    'app.kubernetes.io/component': component,
    'app.kubernetes.io/instance': TC_NAME,
    'app.kubernetes.io/managed-by': 'tidb-operator',
    'app.kubernetes.io/name': 'tidb-cluster',
  };
}

/** Plus `app.kubernetes.io/used-by` (UsedByPeer / UsedByEndUser, pkg/apis/label/label.go); sorts last. */
function serviceLabels(component: Component, usedBy: 'peer' | 'end-user'): Record<string, string> {
  return { ...componentLabels(component), 'app.kubernetes.io/used-by': usedBy };
}

/** `controller.GetOwnerRef(tc)` (pkg/controller/controller_utils.go). Every object gets exactly this
 * one reference (generic objects get it again, unchanged, from controllerutil.SetControllerReference
 * in pkg/controller/generic_control.go). */
function ownerReferences(tcUid: string): Obj[] {
  return [
    {
      apiVersion: 'pingcap.com/v1alpha1',
      kind: 'TidbCluster',
      name: TC_NAME,
      uid: tcUid,
      controller: true,
      blockOwnerDeletion: true,
    },
  ];
}

function meta(name: string, namespace: string, tcUid: string, labels: Record<string, string>, annotations?: Record<string, string>): Obj {
  return {
    name,
    namespace,
    labels,
    ...(annotations ? { annotations } : {}),
    ownerReferences: ownerReferences(tcUid),
  };
}

/** `controller.AnnProm(port, "/metrics")` (controller_utils.go), keys sorted. */
function promAnnotations(port: number): Record<string, string> {
  return { 'prometheus.io/path': '/metrics', 'prometheus.io/port': String(port), 'prometheus.io/scrape': 'true' };
}

/** A ServicePort in k8s.io/api ServicePort field order (name, protocol, port, targetPort). */
function servicePort(name: string, port: number, targetPort = port): Obj {
  return { name, protocol: 'TCP', port, targetPort };
}

/** A ContainerPort in field order (name, containerPort, protocol). */
function containerPort(name: string, port: number): Obj {
  return { name, containerPort: port, protocol: 'TCP' };
}

function fieldRefEnv(name: string, fieldPath: string): Obj {
  return { name, valueFrom: { fieldRef: { fieldPath } } };
}

/** `annotationsMountVolume()` (pkg/manager/member/utils.go). */
const ANNOTATIONS_MOUNT = { name: 'annotations', readOnly: true, mountPath: '/etc/podinfo' };
const ANNOTATIONS_VOLUME = {
  name: 'annotations',
  downwardAPI: { items: [{ path: 'annotations', fieldRef: { fieldPath: 'metadata.annotations' } }] },
};

/** The `config` and `startup-script` ConfigMap volumes of PD/TiKV/TiDB (one ConfigMap, one item each). */
function configVolumes(cmName: string, tomlFile: string, scriptFile: string): Obj[] {
  return [
    { name: 'config', configMap: { name: cmName, items: [{ key: 'config-file', path: tomlFile }] } },
    { name: 'startup-script', configMap: { name: cmName, items: [{ key: 'startup-script', path: scriptFile }] } },
  ];
}

/** `util.VolumeClaimTemplate` (pkg/util/util.go) as Go marshals a PersistentVolumeClaim: no labels,
 * no storageClassName (the example sets none), `creationTimestamp: null`, `status: {}`. */
function claimTemplate(name: string, storage: string): Obj {
  return {
    metadata: { name, creationTimestamp: null },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
    status: {},
  };
}

/** The ConfigMap as getXConfigMap builds it, named with the digest suffix. */
function configMap(component: 'pd' | 'tikv' | 'tidb', namespace: string, tcUid: string): Obj {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta(operatorConfigMapName(component), namespace, tcUid, componentLabels(component)),
    data: { ...CONFIG_MAP_DATA[component] },
  };
}

/** A Service created by ServiceControl.CreateService after SetServiceLastAppliedConfigAnnotation
 * (pkg/controller/equality.go): annotation = Go JSON of the spec. */
function service(name: string, namespace: string, tcUid: string, labels: Record<string, string>, spec: Obj): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta(name, namespace, tcUid, labels, { 'pingcap.com/last-applied-configuration': goJson(spec) }),
    spec,
  };
}

/** A StatefulSet created after SetStatefulSetLastAppliedConfigAnnotation (pkg/manager/utils/
 * statefulset.go): its only annotation is Go JSON of the spec (getStsAnnotations adds
 * `delete-slots` only when the TC has a delete-slots annotation, which it has not). The operator
 * does not touch it again while idle: StatefulSetEqual (pkg/util/util.go) finds it equal, so
 * `tidb.pingcap.com/owner-generation` (written only on update) never appears. */
function statefulSet(name: string, namespace: string, tcUid: string, component: Component, spec: Obj): Obj {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: meta(name, namespace, tcUid, componentLabels(component), {
      'pingcap.com/last-applied-configuration': goJson(spec),
    }),
    spec,
  };
}

/** StatefulSetSpec in k8s.io/api/apps/v1 field order. `replicas` = desired replicas (PDStsDesiredReplicas
 * etc., pkg/apis/pingcap/v1alpha1/tidbcluster.go: spec replicas, no failover or volume replacement);
 * updateStrategy RollingUpdate with partition = desired replicas + 0 delete slots; podManagementPolicy
 * Parallel (ComponentAccessor.PodManagementPolicy, pkg/apis/pingcap/v1alpha1/component_spec.go). */
function statefulSetSpec(
  component: Component,
  replicas: number,
  podAnnotations: Record<string, string>,
  podSpec: Obj,
  claims: Obj[] | undefined,
  serviceName: string,
): Obj {
  return {
    replicas,
    selector: { matchLabels: componentLabels(component) },
    template: {
      metadata: { creationTimestamp: null, labels: componentLabels(component), annotations: podAnnotations },
      spec: podSpec,
    },
    ...(claims ? { volumeClaimTemplates: claims } : {}),
    serviceName,
    podManagementPolicy: 'Parallel',
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: replicas } },
  };
}

// ---------------------------------------------------------------------------------------------
// Discovery (pkg/manager/member/tidb_discovery_manager.go)

function discoveryObjects(ns: string, uid: string): Obj[] {
  const name = `${TC_NAME}-discovery`; // controller.DiscoveryMemberName
  const labels = componentLabels('discovery');
  // getTidbDiscoveryDeployment: BuildPodSpec (component_spec.go) gives restartPolicy Always and
  // dnsPolicy ClusterFirst; `spec.discovery: {}` leaves the ComponentSpec nil, so the pull policy
  // is the cluster's (IfNotPresent, CRD default / defaulting/tidbcluster.go), TZ is
  // tc.Timezone() ("UTC"), resources come from spec.discovery (none), no probes, no volumes.
  const podSpec = {
    containers: [
      {
        name: 'discovery',
        image: DISCOVERY_IMAGE,
        command: ['/usr/local/bin/tidb-discovery'],
        ports: [containerPort('discovery', 10261), containerPort('proxy', 10262)],
        env: [fieldRefEnv('MY_POD_NAMESPACE', 'metadata.namespace'), { name: 'TZ', value: 'UTC' }, { name: 'TC_NAME', value: TC_NAME }],
        resources: {},
        imagePullPolicy: 'IfNotPresent',
      },
    ],
    restartPolicy: 'Always',
    dnsPolicy: 'ClusterFirst',
    serviceAccountName: name,
  };
  // getTidbDiscoveryService: ClusterIP, ports discovery/proxy, selector = the Deployment's pod labels.
  const serviceSpec = {
    ports: [servicePort('discovery', 10261), servicePort('proxy', 10262)],
    selector: labels,
    type: 'ClusterIP',
  };
  return [
    // Reconcile creates Role, ServiceAccount, RoleBinding, Deployment, Service in this order.
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: meta(name, ns, uid, labels),
      rules: [
        { apiGroups: ['pingcap.com'], resources: ['tidbclusters'], resourceNames: [TC_NAME], verbs: ['get'] },
        { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] },
      ],
    },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(name, ns, uid, labels) },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: meta(name, ns, uid, labels),
      // The subject has no namespace: a RoleBinding's ServiceAccount subject defaults to its own namespace.
      subjects: [{ kind: 'ServiceAccount', name }],
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      // controller.LastAppliedPodTemplate = Go JSON of the pod spec (pkg/controller/equality.go).
      metadata: meta(name, ns, uid, labels, { 'pingcap.com/last-applied-podtemplate': goJson(podSpec) }),
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        // Pod annotations = spec.discovery/spec annotations: none, so the (empty) map is omitted.
        template: { metadata: { creationTimestamp: null, labels }, spec: podSpec },
        strategy: { type: 'Recreate' },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      // Created through TypedControl.CreateOrUpdateService (pkg/controller/generic_control.go)
      // WITHOUT the annotation; the next reconcile finds no last-applied spec, treats the Service
      // as changed, and adds `pingcap.com/last-applied-configuration` (keeping the clusterIP). This
      // is the idle state.
      metadata: meta(name, ns, uid, labels, { 'pingcap.com/last-applied-configuration': goJson(serviceSpec) }),
      spec: serviceSpec,
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// PD (pkg/manager/member/pd_member_manager.go)

function pdObjects(ns: string, uid: string): Obj[] {
  const setName = `${TC_NAME}-pd`;
  const peer = `${TC_NAME}-pd-peer`;
  const cm = operatorConfigMapName('pd');
  const podSpec = {
    volumes: [ANNOTATIONS_VOLUME, ...configVolumes(cm, 'pd.toml', 'pd_start_script.sh')],
    containers: [
      {
        name: 'pd',
        image: `pingcap/pd:${VERSION}`, // tc.PDImage(): baseImage:version
        command: ['/bin/sh', '/usr/local/bin/pd_start_script.sh'],
        ports: [containerPort('server', 2380), containerPort('client', 2379)],
        env: [
          fieldRefEnv('NAMESPACE', 'metadata.namespace'),
          { name: 'PEER_SERVICE_NAME', value: peer },
          { name: 'SERVICE_NAME', value: setName },
          { name: 'SET_NAME', value: setName },
          { name: 'TZ', value: 'UTC' }, // tc.Spec.Timezone as is
        ],
        resources: {}, // controller.ContainerResource strips `storage` from requests
        volumeMounts: [
          ANNOTATIONS_MOUNT,
          { name: 'config', readOnly: true, mountPath: '/etc/pd' },
          { name: 'startup-script', readOnly: true, mountPath: '/usr/local/bin' },
          { name: 'pd', mountPath: '/var/lib/pd' }, // constants.PDDataVolumeMountPath
        ],
        imagePullPolicy: 'IfNotPresent',
      },
    ],
    restartPolicy: 'Always',
    dnsPolicy: 'ClusterFirst',
  };
  return [
    // Sync: Service, headless Service, then (inside syncPDStatefulSetForTidbCluster) the ConfigMap
    // and the StatefulSet.
    service(setName, ns, uid, serviceLabels('pd', 'end-user'), {
      ports: [servicePort('client', 2379)],
      selector: componentLabels('pd'),
      type: 'ClusterIP', // controller.GetServiceType: ClusterIP without spec.services / spec.pd.service
    }),
    service(peer, ns, uid, serviceLabels('pd', 'peer'), {
      ports: [servicePort('tcp-peer-2380', 2380), servicePort('tcp-peer-2379', 2379)],
      selector: componentLabels('pd'),
      clusterIP: 'None',
      publishNotReadyAddresses: true,
    }),
    configMap('pd', ns, uid),
    statefulSet(setName, ns, uid, 'pd', statefulSetSpec('pd', 1, promAnnotations(2379), podSpec, [claimTemplate('pd', '1Gi')], peer)),
  ];
}

// ---------------------------------------------------------------------------------------------
// TiKV (pkg/manager/member/tikv_member_manager.go)

function tikvObjects(ns: string, uid: string): Obj[] {
  const setName = `${TC_NAME}-tikv`;
  const peer = `${TC_NAME}-tikv-peer`;
  const cm = operatorConfigMapName('tikv');
  const podSpec = {
    volumes: [ANNOTATIONS_VOLUME, ...configVolumes(cm, 'tikv.toml', 'tikv_start_script.sh')],
    containers: [
      {
        // No rocksdblog/raftlog tailers: separateRocksDBLog/separateRaftLog default false.
        name: 'tikv',
        image: `pingcap/tikv:${VERSION}`,
        command: ['/bin/sh', '/usr/local/bin/tikv_start_script.sh'],
        ports: [containerPort('server', 20160)], // no `status` port without enableNamedStatusPort
        env: [
          fieldRefEnv('NAMESPACE', 'metadata.namespace'),
          { name: 'CLUSTER_NAME', value: TC_NAME },
          { name: 'HEADLESS_SERVICE_NAME', value: peer },
          { name: 'CAPACITY', value: '0' }, // controller.TiKVCapacity: no limits.storage
          { name: 'TZ', value: 'UTC' },
        ],
        resources: {},
        volumeMounts: [
          ANNOTATIONS_MOUNT,
          { name: 'tikv', mountPath: '/var/lib/tikv' }, // constants.TiKVDataVolumeMountPath
          { name: 'config', readOnly: true, mountPath: '/etc/tikv' },
          { name: 'startup-script', readOnly: true, mountPath: '/usr/local/bin' },
        ],
        imagePullPolicy: 'IfNotPresent',
        // No spec.tikv.securityContext: {privileged: tc.TiKVContainerPrivilege()} = explicit false.
        securityContext: { privileged: false },
      },
    ],
    restartPolicy: 'Always',
    dnsPolicy: 'ClusterFirst',
  };
  return [
    // Sync (after PD is available): peer Service, then the ConfigMap and the StatefulSet.
    service(peer, ns, uid, serviceLabels('tikv', 'peer'), {
      ports: [servicePort('peer', 20160)],
      selector: componentLabels('tikv'),
      clusterIP: 'None',
      publishNotReadyAddresses: true,
    }),
    configMap('tikv', ns, uid),
    statefulSet(
      setName,
      ns,
      uid,
      'tikv',
      statefulSetSpec('tikv', 1, promAnnotations(20180), podSpec, [claimTemplate('tikv', '1Gi')], peer),
    ),
  ];
}

// ---------------------------------------------------------------------------------------------
// TiDB (pkg/manager/member/tidb_member_manager.go)

function tidbObjects(ns: string, uid: string): Obj[] {
  const setName = `${TC_NAME}-tidb`;
  const peer = `${TC_NAME}-tidb-peer`;
  const cm = operatorConfigMapName('tidb');
  const slowLogFile = '/var/log/tidb/slowlog'; // defaultSlowLogFile (separateSlowLog defaults to true)
  const podSpec = {
    volumes: [
      ANNOTATIONS_VOLUME,
      ...configVolumes(cm, 'tidb.toml', 'tidb_start_script.sh'),
      { name: 'slowlog', emptyDir: {} }, // defaultSlowLogVolume
    ],
    containers: [
      {
        name: 'slowlog', // v1alpha1.ContainerSlowLogTailer, placed before tidb
        image: HELPER_IMAGE, // tc.HelperImage(): spec.helper.image
        command: ['sh', '-c', `touch ${slowLogFile}; tail -n0 -F ${slowLogFile};`],
        resources: {},
        volumeMounts: [{ name: 'slowlog', mountPath: '/var/log/tidb' }],
        imagePullPolicy: 'IfNotPresent', // tc.HelperImagePullPolicy(): falls back to spec.imagePullPolicy
      },
      {
        name: 'tidb',
        image: `pingcap/tidb:${VERSION}`,
        command: ['/bin/sh', '/usr/local/bin/tidb_start_script.sh'],
        ports: [containerPort('server', 4000), containerPort('status', 10080)],
        env: [
          { name: 'CLUSTER_NAME', value: TC_NAME },
          { name: 'TZ', value: 'UTC' },
          { name: 'BINLOG_ENABLED', value: 'false' }, // IsTiDBBinlogEnabled: no pump
          { name: 'SLOW_LOG_FILE', value: slowLogFile },
          fieldRefEnv('POD_NAME', 'metadata.name'),
          fieldRefEnv('NAMESPACE', 'metadata.namespace'),
          { name: 'HEADLESS_SERVICE_NAME', value: peer },
        ],
        resources: {},
        volumeMounts: [
          ANNOTATIONS_MOUNT,
          { name: 'config', readOnly: true, mountPath: '/etc/tidb' },
          { name: 'startup-script', readOnly: true, mountPath: '/usr/local/bin' },
          { name: 'slowlog', mountPath: '/var/log/tidb' },
        ],
        // buildTiDBReadinessProbHandler: TCP 4000, always present, initialDelaySeconds 10.
        readinessProbe: { tcpSocket: { port: 4000 }, initialDelaySeconds: 10 },
        imagePullPolicy: 'IfNotPresent',
      },
    ],
    restartPolicy: 'Always',
    dnsPolicy: 'ClusterFirst',
  };
  return [
    // Sync (after TiKV is available): headless Service, Service (spec.tidb.service is set), then
    // the ConfigMap and the StatefulSet.
    service(peer, ns, uid, serviceLabels('tidb', 'peer'), {
      ports: [servicePort('status', 10080)],
      selector: componentLabels('tidb'),
      clusterIP: 'None',
      publishNotReadyAddresses: true,
    }),
    service(setName, ns, uid, serviceLabels('tidb', 'end-user'), {
      // getNewTiDBServiceOrNil: mysql-client 4000 (GetPortName/GetServicePort), then status 10080
      // (exposeStatus defaults to true); no nodePorts for ClusterIP.
      ports: [servicePort('mysql-client', 4000), servicePort('status', 10080)],
      selector: componentLabels('tidb'),
      type: 'ClusterIP',
    }),
    configMap('tidb', ns, uid),
    // No volumeClaimTemplates: TiDB has none without storageVolumes.
    statefulSet(setName, ns, uid, 'tidb', statefulSetSpec('tidb', 1, promAnnotations(10080), podSpec, undefined, peer)),
  ];
}

// ---------------------------------------------------------------------------------------------

/**
 * Every namespaced object the operator creates for the example, in creation order: the TC sync
 * (pkg/controller/tidbcluster/tidb_cluster_control.go) runs discovery, then PD (and requeues
 * "waiting for PD cluster running" after creating the PD StatefulSet), then — once PD is available
 * — TiKV, then — once TiKV is available — TiDB. No TiDB initializer (no spec.tidb.initializer), no
 * monitor (TidbMonitor is a separate CR), no Pump/TiFlash/TiCDC/TiProxy (not in the spec).
 */
export function operatorObjects(namespace: string, tcUid: string): Obj[] {
  return [
    ...discoveryObjects(namespace, tcUid),
    ...pdObjects(namespace, tcUid),
    ...tikvObjects(namespace, tcUid),
    ...tidbObjects(namespace, tcUid),
  ];
}
