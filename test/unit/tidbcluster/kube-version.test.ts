/**
 * The target Kubernetes version: how it is given (CLI, library, Argo CD's KUBE_VERSION, diff), what
 * it unlocks (native sidecar log tailers, volumeAttributesClassName), and that output for each
 * supported target passes that version's schema.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Testing } from 'cdk8s';
import { stringify } from 'yaml';
import { readSettings } from '../../../src/cli/argocd';
import { main } from '../../../src/cli/main';
import { TidbClusterChart } from '../../../src/render/chart';
import { featureCheck, KUBE_FEATURES, parseKubeVersion } from '../../../src/tidbcluster/kube-version';
import { loadTidbClusters } from '../../../src/tidbcluster/load';
import { assertValidK8sObjects, SCHEMA_MINORS } from '../../support/k8s-schema';
import { imageNote } from '../../support/cli-notes';
import { cluster, container, find, parse, render, renderErrors, type Obj } from '../../support/render';

function run(args: string[], stdin = '', env: Record<string, string> = {}): { code: number; stdout: string; stderr: string } {
  let stdout = '';
  let stderr = '';
  const code = main(args, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s), readStdin: () => stdin, env });
  return { code, stdout, stderr };
}

const docs = (yaml: string): Obj[] =>
  yaml
    .split(/^---$/m)
    .map((d) => parse(d))
    .filter(Boolean);

describe('parseKubeVersion', () => {
  test.each([
    ['1.31', 31],
    ['v1.34', 34],
    ['1.34.2', 34],
    ['v1.33.4-eks-1a2b3c4', 33],
    ['v1.32.1+k3s1', 32],
    ['1.35+', 35],
    [' 1.36 ', 36],
    ['v1.37.2', 37],
  ])('reads %j as 1.%i', (text, minor) => {
    expect(parseKubeVersion(text)).toEqual({ minor });
  });

  test('refuses versions older than 1.31, naming the supported range', () => {
    expect(parseKubeVersion('1.30')).toEqual({
      error: 'Kubernetes 1.30 is not supported: this release renders for Kubernetes 1.31 to 1.37',
    });
    expect(parseKubeVersion('v1.27.3')).toEqual({
      error: 'Kubernetes 1.27 is not supported: this release renders for Kubernetes 1.31 to 1.37',
    });
  });

  test('renders a newer minor as the newest known, with a note', () => {
    expect(parseKubeVersion('1.38.1')).toEqual({
      minor: 37,
      note: 'Kubernetes 1.38 is newer than this release knows; rendering for 1.37, whose objects it accepts',
    });
  });

  test.each(['', 'latest', '1', '2.0', '1.x', '1.31.2.3'])('refuses %j', (text) => {
    expect(parseKubeVersion(text)).toHaveProperty('error');
  });
});

describe('featureCheck', () => {
  test('volumeAttributesClassName: beta and off by default before 1.34, GA from 1.34', () => {
    for (const minor of [31, 32, 33]) {
      expect(featureCheck(KUBE_FEATURES.volumeAttributesClass, minor)).toEqual({
        warning: `VolumeAttributesClass is beta and off by default in Kubernetes 1.${minor} (on by default from 1.34): the API server drops this field unless the VolumeAttributesClass feature gate is on`,
      });
    }
    for (const minor of SCHEMA_MINORS.filter((m) => m >= 34))
      expect(featureCheck(KUBE_FEATURES.volumeAttributesClass, minor)).toBeUndefined();
  });

  test('native sidecars are on in every supported version', () => {
    for (const minor of SCHEMA_MINORS) expect(featureCheck(KUBE_FEATURES.nativeSidecars, minor)).toBeUndefined();
  });

  test('a field newer than the target is an error naming the version that adds it', () => {
    expect(featureCheck({ name: 'example feature', since: 35 }, 33)).toEqual({
      error: 'needs Kubernetes 1.35 or newer (example feature); the target is 1.33: set --kube-version',
    });
  });
});

/** Every log tailer there is, as native sidecars, next to user init containers and the sysctl init container. */
function sidecarCluster(tailer: Obj = { useSidecar: true, sleepTimeSeconds: 5 }): Obj {
  const userInit = [{ name: 'user-init', image: 'busybox', command: ['true'] }];
  const sysctl = {
    annotations: { 'tidb.pingcap.com/sysctl-init': 'true' },
    podSecurityContext: { sysctls: [{ name: 'net.core.somaxconn', value: '32768' }] },
  };
  return cluster({
    tikv: {
      replicas: 3,
      requests: { storage: '10Gi' },
      separateRocksDBLog: true,
      separateRaftLog: true,
      logTailer: tailer,
      initContainers: userInit,
      ...sysctl,
    },
    tidb: { replicas: 2, slowLogTailer: tailer, initContainers: userInit },
    tiflash: {
      replicas: 1,
      storageClaims: [{ resources: { requests: { storage: '10Gi' } } }],
      logTailer: tailer,
      initContainers: userInit,
    },
  });
}

const names = (list: Obj[] | undefined): string[] => (list ?? []).map((c) => c.name);

describe('native sidecar log tailers (logTailer.useSidecar)', () => {
  test.each(SCHEMA_MINORS.map((m) => `1.${m}`))('are init containers with restartPolicy Always, valid for %s', (kubeVersion) => {
    const objects = render(sidecarCluster(), { kubeVersion });
    const pod = (c: string) => find(objects, 'StatefulSet', `demo-${c}`).spec.template.spec;
    // tidb-operator's order (tikv_member_manager.go, tidb_member_manager.go, tiflash_member_manager.go).
    expect(names(pod('tikv').initContainers)).toEqual(['init', 'rocksdblog', 'raftlog', 'user-init']);
    expect(names(pod('tikv').containers)).toEqual(['tikv']);
    expect(names(pod('tidb').initContainers)).toEqual(['slowlog', 'user-init']);
    expect(names(pod('tidb').containers)).toEqual(['tidb']);
    expect(names(pod('tiflash').initContainers)).toEqual(['init', 'user-init', 'serverlog', 'errorlog', 'clusterlog']);
    expect(names(pod('tiflash').containers)).toEqual(['tiflash']);
  });

  test('each traps SIGTERM, waits sleepTimeSeconds and runs tail in the background', () => {
    const objects = render(sidecarCluster());
    const tikv = container(find(objects, 'StatefulSet', 'demo-tikv'), 'rocksdblog');
    expect(tikv.restartPolicy).toBe('Always');
    expect(tikv.command).toEqual([
      'sh',
      '-c',
      'trap "sleep 5; exit 0" TERM; touch /var/lib/tikv/rocksdb.info; tail -n0 -F /var/lib/tikv/rocksdb.info & wait $!',
    ]);
    const slowlog = container(find(objects, 'StatefulSet', 'demo-tidb'), 'slowlog');
    expect(slowlog.command[2]).toBe(
      'trap "sleep 5; exit 0" TERM; touch /var/log/tidb/slowlog; tail -n0 -F /var/log/tidb/slowlog & wait $!',
    );
    const serverlog = container(find(objects, 'StatefulSet', 'demo-tiflash'), 'serverlog');
    expect(serverlog).toMatchObject({ restartPolicy: 'Always', volumeMounts: [{ name: 'data0', mountPath: '/data0' }] });
  });

  test('without sleepTimeSeconds the trap only exits', () => {
    const objects = render(sidecarCluster({ useSidecar: true }));
    expect(container(find(objects, 'StatefulSet', 'demo-tikv'), 'raftlog').command[2]).toBe(
      'trap "exit 0" TERM; touch /var/lib/tikv/raftdb.info; tail -n0 -F /var/lib/tikv/raftdb.info & wait $!',
    );
  });

  test('useSidecar: false keeps plain sidecar containers', () => {
    const objects = render(sidecarCluster({ useSidecar: false }));
    const tikv = find(objects, 'StatefulSet', 'demo-tikv').spec.template.spec;
    expect(names(tikv.containers)).toEqual(['rocksdblog', 'raftlog', 'tikv']);
    expect(tikv.containers[0].restartPolicy).toBeUndefined();
    expect(tikv.containers[0].command[2]).toBe('touch /var/lib/tikv/rocksdb.info; tail -n0 -F /var/lib/tikv/rocksdb.info;');
  });

  test('the TiDB startup-probe copier comes after the native slowlog sidecar and before the user init containers', () => {
    const spec = cluster({
      tidb: {
        replicas: 1,
        slowLogTailer: { useSidecar: true },
        initContainers: [{ name: 'user-init', image: 'busybox' }],
        customizedStartupProbe: { image: 'example/probe:1', binaryName: 'probe' },
      },
    });
    const pod = find(render(spec), 'StatefulSet', 'demo-tidb').spec.template.spec;
    expect(names(pod.initContainers)).toEqual(['slowlog', 'probe', 'user-init']);
  });

  test('sleepTimeSeconds without useSidecar, or negative, is refused with its path', () => {
    expect(renderErrors(cluster({ tidb: { replicas: 1, slowLogTailer: { sleepTimeSeconds: 3 } } }))).toContain(
      'spec.tidb.slowLogTailer.sleepTimeSeconds (line 19): only read by native sidecars: set spec.tidb.slowLogTailer.useSidecar: true, or remove it',
    );
    expect(renderErrors(cluster({ tidb: { replicas: 1, slowLogTailer: { useSidecar: true, sleepTimeSeconds: -1 } } }))).toContain(
      'spec.tidb.slowLogTailer.sleepTimeSeconds (line 20): expected a whole number of seconds, 0 or more, got -1',
    );
  });
});

describe('volumeAttributesClassName', () => {
  const spec = cluster({
    pd: { replicas: 3, requests: { storage: '10Gi' }, volumeAttributesClassName: 'gold' },
    tikv: {
      replicas: 3,
      requests: { storage: '100Gi' },
      volumeAttributesClassName: 'gold',
      storageVolumes: [
        { name: 'raft', storageSize: '10Gi', volumeAttributesClassName: 'platinum' },
        { name: 'wal', storageSize: '10Gi', volumeAttributesClassName: '' },
      ],
    },
    tiflash: {
      replicas: 1,
      storageClaims: [
        { resources: { requests: { storage: '10Gi' } }, volumeAttributesClassName: 'silver' },
        { resources: { requests: { storage: '10Gi' } } },
      ],
    },
    pump: { replicas: 1, requests: { storage: '10Gi' }, volumeAttributesClassName: 'bronze' },
  });
  const claims = (objects: Obj[], name: string) =>
    Object.fromEntries(
      find(objects, 'StatefulSet', name).spec.volumeClaimTemplates.map((c: Obj) => [c.metadata.name, c.spec.volumeAttributesClassName]),
    );

  test.each(SCHEMA_MINORS.map((m) => `1.${m}`))('is set on the claim templates as tidb-operator sets it, valid for %s', (kubeVersion) => {
    const objects = render(spec, { kubeVersion });
    expect(claims(objects, 'demo-pd')).toEqual({ pd: 'gold' });
    // A storage volume's own class wins; an empty one falls back to the component's (pkg/util/util.go).
    expect(claims(objects, 'demo-tikv')).toEqual({ tikv: 'gold', 'tikv-raft': 'platinum', 'tikv-wal': 'gold' });
    expect(claims(objects, 'demo-tiflash')).toEqual({ data0: 'silver', data1: undefined });
    expect(claims(objects, 'demo-pump')).toEqual({ data: 'bronze' });
  });

  test('warns, with path and line, while the target has it beta and off by default (1.31 to 1.33)', () => {
    const text = stringify(spec);
    for (const kubeVersion of ['1.31', '1.33']) {
      const [c] = loadTidbClusters(text, 'c.yaml', { kubeVersion }).clusters;
      // Five fields (tikv-wal's empty class takes the component's, which is warned about already).
      expect(c.warnings.map((w) => /: (spec\.\S+) \(line/.exec(w)?.[1])).toEqual([
        'spec.pd.volumeAttributesClassName',
        'spec.tikv.volumeAttributesClassName',
        'spec.tikv.storageVolumes[0].volumeAttributesClassName',
        'spec.tiflash.storageClaims[0].volumeAttributesClassName',
        'spec.pump.volumeAttributesClassName',
      ]);
      expect(c.warnings[0]).toBe(
        `c.yaml: document 1: spec.pd.volumeAttributesClassName (line 12): warning: VolumeAttributesClass is beta and off by default in Kubernetes ${kubeVersion} (on by default from 1.34): the API server drops this field unless the VolumeAttributesClass feature gate is on`,
      );
    }
    for (const kubeVersion of ['1.34', '1.37']) expect(loadTidbClusters(text, 'c.yaml', { kubeVersion }).clusters[0].warnings).toEqual([]);
  });
});

describe('claim templates as the target stores them', () => {
  it("carry Go's empty creationTimestamp (null) up to 1.33, and none from 1.34, where the server leaves it out", () => {
    const templates = (kubeVersion: string) =>
      render(cluster({ tikv: { replicas: 3, requests: { storage: '1Gi' } } }), { kubeVersion })
        .filter((o) => o.kind === 'StatefulSet')
        .flatMap((o) => o.spec.volumeClaimTemplates ?? []);
    expect(templates('1.33').length).toBeGreaterThan(1);
    for (const t of templates('1.33')) expect(t.metadata).toEqual({ name: t.metadata.name, creationTimestamp: null });
    for (const v of ['1.34', '1.37']) for (const t of templates(v)) expect(t.metadata).toEqual({ name: t.metadata.name });
  });
});

describe('render --kube-version', () => {
  const input = stringify(sidecarCluster());

  test('output for each target passes that version schema, is byte-identical across runs, and says its target', () => {
    for (const minor of SCHEMA_MINORS) {
      const a = run(['render', '-', '--kube-version', `1.${minor}`], input);
      expect(a).toMatchObject({ code: 0, stderr: imageNote('demo') });
      expect(run(['render', '-', `--kube-version=v1.${minor}.0`], input).stdout).toBe(a.stdout);
      const objects = docs(a.stdout);
      assertValidK8sObjects(objects, minor);
      const settings = JSON.parse(find(objects, 'StatefulSet', 'demo-tikv').metadata.annotations['tidb-gitops.io/settings']);
      expect(settings.kubeVersion).toBe(`1.${minor}`);
    }
  });

  test('defaults to 1.31, the oldest supported', () => {
    expect(run(['render', '-'], input).stdout).toBe(run(['render', '-', '--kube-version', '1.31'], input).stdout);
  });

  test('an unsupported version is a usage error; a newer one renders for 1.37 with a note', () => {
    const old = run(['render', '-', '--kube-version', '1.29'], input);
    expect(old).toMatchObject({ code: 2, stdout: '' });
    expect(old.stderr).toContain('--kube-version: Kubernetes 1.29 is not supported: this release renders for Kubernetes 1.31 to 1.37');
    const newer = run(['render', '-', '--kube-version', '1.38'], input);
    expect(newer.code).toBe(0);
    expect(newer.stderr).toBe(
      `note: Kubernetes 1.38 is newer than this release knows; rendering for 1.37, whose objects it accepts\n${imageNote('demo')}`,
    );
    expect(newer.stdout).toBe(run(['render', '-', '--kube-version', '1.37'], input).stdout);
  });

  test('prints the volumeAttributesClassName warning on stderr and still renders', () => {
    const text = stringify(cluster({ pd: { replicas: 1, requests: { storage: '1Gi' }, volumeAttributesClassName: 'gold' } }));
    const r = run(['render', '-', '--kube-version', '1.32'], text);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(
      '<stdin>: document 1: spec.pd.volumeAttributesClassName (line 12): warning: VolumeAttributesClass is beta and off by default in Kubernetes 1.32 (on by default from 1.34): the API server drops this field unless the VolumeAttributesClass feature gate is on\n' +
        imageNote('demo'),
    );
    expect(r.stdout).toContain('volumeAttributesClassName: gold');
  });
});

describe('the other ways in', () => {
  test('TidbClusterChart takes kubeVersion', () => {
    const app = Testing.app();
    const chart = new TidbClusterChart(app, 'demo', { cluster: sidecarCluster() as never, kubeVersion: '1.35' });
    expect(chart.resolved.kubeMinor).toBe(35);
    const objects = Testing.synth(chart) as Obj[];
    assertValidK8sObjects(objects, 35);
    expect(() => new TidbClusterChart(new App(), 'x', { cluster: sidecarCluster() as never, kubeVersion: '1.20' })).toThrow(
      'kubeVersion: Kubernetes 1.20 is not supported',
    );
  });

  test('Argo CD: KUBE_VERSION, which Argo CD passes, unless a kube-version setting (or RenderSettings) overrides it', () => {
    // Argo CD's own value is the last resort, below the environment and the inputs' RenderSettings.
    expect(readSettings({ KUBE_VERSION: '1.34.2' }).settings).toMatchObject({
      kubeVersion: undefined,
      fallback: { kubeVersion: '1.34.2' },
    });
    expect(readSettings({ KUBE_VERSION: '1.34.2', PARAM_KUBE_VERSION: '1.32' }).settings.kubeVersion).toBe('1.32');
    expect(readSettings({ KUBE_VERSION: '1.34.2', ARGOCD_ENV_KUBE_VERSION: '1.33' }).settings.kubeVersion).toBe('1.33');
    expect(readSettings({}).settings.kubeVersion).toBeUndefined();
    expect(readSettings({ KUBE_VERSION: '1.28.9' }).errors).toEqual([
      'KUBE_VERSION: Kubernetes 1.28 is not supported: this release renders for Kubernetes 1.31 to 1.37',
    ]);
  });

  test('diff reports a change of target like any other setting', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kube-version-'));
    try {
      const file = join(dir, 'c.yaml');
      writeFileSync(file, stringify(cluster()));
      const changed = run(['diff', '--old-kube-version', '1.31', '--kube-version', '1.34', file, file]);
      expect(changed).toMatchObject({ code: 0, stderr: '' });
      for (const c of ['PD', 'TiKV', 'TiDB']) {
        expect(changed.stdout).toContain(
          `#### ${c} (StatefulSet demo-${c.toLowerCase()})\n\n- **Controller settings** (\`tidb-gitops.io/settings\`), read by the controller without a restart:\n  - \`kubeVersion\`: \`1.31\` -> \`1.34\`\n`,
        );
      }
      expect(changed.stdout).not.toMatch(/rolling restart|Pod template/);
      const same = run(['diff', '--kube-version', '1.34', file, file, '--exit-code']);
      expect(same.code).toBe(0);
      expect(run(['diff', '--kube-version', '1.30', file, file])).toMatchObject({ code: 2, stdout: '' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
