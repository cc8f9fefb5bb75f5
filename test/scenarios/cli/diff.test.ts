/**
 * `tidb-gitops diff`: the structured report (compareModels) and the command (diffMain and the built
 * CLI). Tests that spawn bin/tidb-gitops.js need `npm run build` first, as test/scenarios/cli/cli.test.ts does.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { diffMain, parseDiffArgs } from '../../../src/cli/diff';
import {
  buildModel,
  compareModels,
  compareVersions,
  diffValues,
  exitCodeFor,
  formatPath,
  imageVersion,
  repoPath,
  toMarkdown,
  type ClusterDiff,
  type ComponentDiff,
  type DiffReport,
  type KubeObject,
} from '../../../src/diff';
import { toYamlStream } from '../../../src/render/output';
import { tempFiles } from '../../support/cli-run';
import { cluster, render, type Obj } from '../../support/render';
import { GIT, requires } from '../../support/requires';
import { TEST_DIR } from '../../support/paths';

const root = join(TEST_DIR, '..');
const basic = readFileSync(join(root, 'examples/basic/tidb-cluster.yaml'), 'utf8');

const cli = (args: string[], cwd = root) =>
  spawnSync(process.execPath, [join(root, 'bin/tidb-gitops.js'), ...args], { cwd, encoding: 'utf8' });

/** Runs diffMain in this process; stdout, stderr and the exit status. */
function run(args: string[], stdin = '') {
  let stdout = '';
  let stderr = '';
  const status = diffMain(args, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s), readStdin: () => stdin, env: process.env });
  return { status, stdout, stderr };
}

/** The report between two inputs (TidbCluster objects or YAML texts; an array for several documents). */
function diff(before: Obj | string | (Obj | string)[], after: Obj | string | (Obj | string)[]): DiffReport {
  const objects = (x: Obj | string | (Obj | string)[]) => (Array.isArray(x) ? x : [x]).flatMap((i) => render(i)) as KubeObject[];
  return compareModels(buildModel(objects(before)), buildModel(objects(after)));
}

function only(report: DiffReport): ClusterDiff {
  expect(report.clusters).toHaveLength(1);
  return report.clusters[0];
}

function component(c: ClusterDiff, name: string): ComponentDiff {
  const d = c.components.find((x) => x.component === name);
  if (!d) throw new Error(`no change for ${name}; changed: ${c.components.map((x) => x.component).join(', ')}`);
  return d;
}

const riskIds = (c: ClusterDiff) => c.risks.map((r) => r.id);

/** `cluster()` with one component's settings merged in. */
function withComponent(kind: string, settings: Obj, base: Obj = cluster()): Obj {
  return { ...base, spec: { ...base.spec, [kind]: { ...base.spec[kind], ...settings } } };
}

const { file, dir: tmpDir } = tempFiles('tidb-gitops-diff-');

describe('version bump of examples/basic', () => {
  const bumped = basic.replace('version: v8.5.7', 'version: v8.5.9');

  it('restarts every component for its image, one Pod at a time by the controller, without scaling; each one-replica restart is downtime', () => {
    const c = only(diff(basic, bumped));
    expect(c.id).toBe('basic');
    expect(c.change).toBe('changed');
    expect(c.components.map((d) => d.component)).toEqual(['pd', 'tikv', 'tidb']);
    for (const name of ['pd', 'tikv', 'tidb']) {
      const d = component(c, name);
      expect(d.workload).toBe(`StatefulSet basic-${name}`);
      expect(d.restart).toEqual({
        by: 'controller',
        causes: [{ path: `containers[${name}].image`, change: 'changed', from: `pingcap/${name}:v8.5.7`, to: `pingcap/${name}:v8.5.9` }],
      });
      expect(d.images).toEqual([{ container: name, from: `pingcap/${name}:v8.5.7`, to: `pingcap/${name}:v8.5.9` }]);
      expect(d.replicas).toBeUndefined();
      expect(d.config).toEqual([]);
    }
    // The StatefulSets change only in their template, which the component sections cover.
    expect(c.objects).toEqual([]);
    // examples/basic runs one Pod of each: every restart stops what it serves.
    expect(c.risks.map((r) => [r.id, r.component])).toEqual([
      ['single-replica-restart', 'pd'],
      ['single-replica-restart', 'tikv'],
      ['single-replica-restart', 'tidb'],
    ]);
    expect(c.risks[0].message).toBe(
      'PD has one replica: its restart takes down the whole cluster: without PD no transaction gets a timestamp and no request finds its region, so every query fails, until the new Pod is up. Run more replicas to restart without downtime.',
    );
  });

  it('prints the summary and the image fields, and exits 4 with --exit-code (changes with risks)', () => {
    const r = cli(['diff', 'examples/basic/tidb-cluster.yaml', file('bump/new.yaml', bumped), '--exit-code']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(4);
    expect(r.stdout).toContain('- **basic**: pd, tikv, tidb rolling restart; 3 risks\n');
    expect(r.stdout).toContain('  - `containers[tikv].image`: `pingcap/tikv:v8.5.7` -> `pingcap/tikv:v8.5.9`\n');
    expect(r.stdout).toContain('driven by the companion controller `basic-discovery`');
    expect(r.stdout).not.toContain('Scale');
    expect(r.stdout).toContain('- **single-replica-restart**: TiDB has one replica: its restart takes down every SQL connection');
  });

  it('exits 0 without --exit-code once the report is printed', () => {
    expect(run(['examples/basic/tidb-cluster.yaml', file('bump/new.yaml', bumped)]).status).toBe(0);
  });
});

describe('config changes', () => {
  const tikvConfig = (strategy: string, files: number) =>
    withComponent('tikv', { configUpdateStrategy: strategy, config: { rocksdb: { 'max-open-files': files } } });

  it('RollingUpdate: a new ConfigMap name, so a rolling restart applies it; the old ConfigMap is replaced', () => {
    const c = only(diff(tikvConfig('RollingUpdate', 256), tikvConfig('RollingUpdate', 512)));
    const tikv = component(c, 'tikv');
    expect(c.components.map((d) => d.component)).toEqual(['tikv']);
    const [cfg] = tikv.config;
    expect(cfg).toMatchObject({ strategy: 'RollingUpdate', appliedBy: 'rolling-restart', scripts: [], otherData: [] });
    expect(cfg.keys).toEqual([{ file: 'config-file', key: 'rocksdb.max-open-files', change: 'changed', from: '256', to: '512' }]);
    expect(cfg.from).toMatch(/^demo-tikv-[0-9a-f]{7}$/);
    expect(cfg.to).toMatch(/^demo-tikv-[0-9a-f]{7}$/);
    expect(cfg.from).not.toBe(cfg.to);
    const volume = tikv.restart!.causes.find((x) => x.path === 'volumes[config].configMap.name');
    expect(volume).toEqual({ path: 'volumes[config].configMap.name', change: 'changed', from: cfg.from, to: cfg.to });
    expect(c.objects).toEqual([{ kind: 'ConfigMap', name: cfg.from, namespace: 'ns', change: 'replaced', replacedBy: cfg.to }]);
    // Three stores and three copies of each region: no spare store while each restarts.
    expect(riskIds(c)).toEqual(['tikv-no-spare-store']);
    expect(c.risks[0].message).toContain('every TiKV store restarts, one at a time, with 3 stores and replication.max-replicas 3');
    expect(
      riskIds(
        only(
          diff(tikvConfig('RollingUpdate', 256), {
            ...tikvConfig('RollingUpdate', 512),
            spec: { ...tikvConfig('RollingUpdate', 512).spec, tikv: { ...tikvConfig('RollingUpdate', 512).spec.tikv, replicas: 4 } },
          }),
        ),
      ),
    ).not.toContain('tikv-no-spare-store');
    const md = toMarkdown(diff(tikvConfig('RollingUpdate', 256), tikvConfig('RollingUpdate', 512)));
    expect(md).toContain(`  - \`config\` volume: ConfigMap \`${cfg.from}\` -> \`${cfg.to}\`\n`);
    expect(md).toContain('RollingUpdate: applied by the rolling restart above');
    expect(md).toContain(`- replaced: ConfigMap \`${cfg.from}\` by \`${cfg.to}\``);
  });

  // A key TiKV reads only at its start (`#[online_config(skip)]`).
  const restartKey = (size: number) => withComponent('tikv', { config: { rocksdb: { 'max-manifest-file-size': size } } });

  it('InPlace: same ConfigMap, nothing restarts; the processes read it at their next restart', () => {
    const c = only(diff(restartKey(256), restartKey(512)));
    const tikv = component(c, 'tikv');
    expect(tikv.restart).toBeUndefined();
    expect(tikv.config).toEqual([
      {
        from: 'demo-tikv',
        to: 'demo-tikv',
        strategy: 'InPlace',
        appliedBy: 'next-restart',
        keys: [{ file: 'config-file', key: 'rocksdb.max-manifest-file-size', change: 'changed', from: '256', to: '512' }],
        scripts: [],
        otherData: [],
      },
    ]);
    expect(c.objects).toEqual([{ kind: 'ConfigMap', name: 'demo-tikv', namespace: 'ns', change: 'changed', fields: ['data.config-file'] }]);
    const md = toMarkdown(diff(restartKey(256), restartKey(512)));
    expect(md).toContain('- **ns/demo**: tikv config in place (read at next restart); no risks');
    expect(md).toContain(
      'InPlace: nothing restarts now; the running Pods see the new file, but the processes read it only at their next restart',
    );
  });

  it('lists added and removed keys, and TiFlash files by name', () => {
    const tiflash = (config: Obj) => ({
      ...cluster(),
      spec: { ...cluster().spec, tiflash: { replicas: 1, storageClaims: [{ resources: { requests: { storage: '10Gi' } } }], config } },
    });
    const c = only(
      diff(tiflash({ config: { flash: { a: 1 } } }), tiflash({ config: { flash: { b: 'x' } }, proxy: { log: { level: 'warn' } } })),
    );
    const keys = component(c, 'tiflash').config[0].keys;
    expect(keys).toEqual([
      { file: 'config_templ.toml', key: 'flash.a', change: 'removed', from: '1' },
      { file: 'config_templ.toml', key: 'flash.b', change: 'added', to: '"x"' },
      { file: 'proxy_templ.toml', key: 'log.level', change: 'added', to: '"warn"' },
    ]);
  });

  it('says a startup script changed instead of listing it', () => {
    const c = only(diff(cluster(), cluster({ startScriptVersion: 'v2' })));
    const pd = component(c, 'pd');
    expect(pd.config[0].scripts).toEqual(['startup-script']);
    expect(toMarkdown(diff(cluster(), cluster({ startScriptVersion: 'v2' })))).toContain('  - startup script changed\n');
  });
});

describe('scaling', () => {
  it('tikv 3 -> 5: a scale-out without restart or risk', () => {
    const report = diff(cluster(), withComponent('tikv', { replicas: 5 }));
    const c = only(report);
    expect(c.components).toEqual([
      {
        component: 'tikv',
        change: 'changed',
        workload: 'StatefulSet demo-tikv',
        replicas: { from: 3, to: 5 },
        images: [],
        config: [],
        settings: [],
      },
    ]);
    expect(c.risks).toEqual([]);
    expect(exitCodeFor(report)).toBe(3);
    expect(toMarkdown(report)).toContain('- **ns/demo**: tikv 3 -> 5; no risks\n');
  });

  it('tikv 3 -> 2 with max-replicas 3: a scale-in the controller refuses', () => {
    const report = diff(cluster(), withComponent('tikv', { replicas: 2 }));
    const c = only(report);
    expect(riskIds(c)).toEqual(['scale-in', 'tikv-max-replicas']);
    expect(c.risks[1].message).toContain("TiKV 3 -> 2 is below PD's replication.max-replicas (3): the controller refuses this scale-in");
    expect(exitCodeFor(report)).toBe(4);
  });

  it("reads max-replicas from PD's config", () => {
    const pd5 = withComponent('pd', { config: '[replication]\nmax-replicas = 5\n' });
    const c = only(diff(withComponent('tikv', { replicas: 6 }, pd5), withComponent('tikv', { replicas: 4 }, pd5)));
    expect(riskIds(c)).toEqual(['scale-in', 'tikv-max-replicas']);
    expect(c.risks[1].message).toContain('(5)');
    // 4 -> 3 stays at max-replicas 3: a plain scale-in.
    expect(riskIds(only(diff(withComponent('tikv', { replicas: 4 }), cluster())))).toEqual(['scale-in']);
  });

  it('pd 3 -> 4: an even member count', () => {
    const c = only(diff(cluster(), withComponent('pd', { replicas: 4 })));
    expect(riskIds(c)).toEqual(['pd-even']);
    expect(c.risks[0]).toMatchObject({ component: 'pd' });
    expect(c.risks[0].message).toContain('PD 3 -> 4: an even number of PD members');
  });

  it('pd 3 -> 1: fewer than 3 members, and a PD scale-in', () => {
    expect(riskIds(only(diff(cluster(), withComponent('pd', { replicas: 1 }))))).toEqual(['pd-few', 'scale-in']);
  });

  it('reads the desired count from the replicas annotation, not spec.replicas', () => {
    const [sts] = render(withComponent('tikv', { replicas: 7 })).filter((o) => o.kind === 'StatefulSet' && o.metadata.name === 'demo-tikv');
    expect(sts.spec.replicas).toBeUndefined();
    expect(buildModel([sts]).clusters.get('ns/demo')!.components.get('tikv')!.replicas).toBe(7);
  });
});

describe('StatefulSet fields Kubernetes does not let change', () => {
  it('a claim template a 1.34+ server stores without creationTimestamp is the one rendered for 1.33 with its null', () => {
    const rendered = render(cluster(), { kubeVersion: '1.33' }) as Obj[];
    // What a 1.34+ API server gives back: Go's empty time left out, where older ones write null.
    const live = rendered.map((o) =>
      o.kind === 'StatefulSet'
        ? {
            ...o,
            spec: {
              ...o.spec,
              volumeClaimTemplates: o.spec.volumeClaimTemplates?.map(({ metadata: { creationTimestamp: _t, ...metadata }, ...t }: Obj) => ({
                ...t,
                metadata,
              })),
            },
          }
        : o,
    );
    expect(rendered.some((o) => o.spec?.volumeClaimTemplates?.[0]?.metadata?.creationTimestamp === null)).toBe(true);
    expect(compareModels(buildModel(live as KubeObject[]), buildModel(rendered as KubeObject[])).clusters.flatMap((c) => c.risks)).toEqual(
      [],
    );
  });

  it('a storage request change is a pvc-template risk that names the claim and the values', () => {
    const c = only(diff(cluster(), withComponent('tikv', { requests: { storage: '200Gi' } })));
    expect(riskIds(c)).toEqual(['pvc-template']);
    const [r] = c.risks;
    expect(r.component).toBe('tikv');
    expect(r.message).toContain(
      'StatefulSet demo-tikv: volumeClaimTemplates change (tikv: spec.resources.requests.storage 100Gi -> 200Gi)',
    );
    expect(r.message).toContain(
      'Volumes grow: the API server refuses this StatefulSet until the companion controller has grown each claim',
    );
    expect(c.objects.filter((o) => o.kind === 'StatefulSet')).toEqual([
      {
        kind: 'StatefulSet',
        name: 'demo-tikv',
        namespace: 'ns',
        change: 'changed',
        fields: ['spec.volumeClaimTemplates'],
        values: [
          { path: 'spec.volumeClaimTemplates[tikv].spec.resources.requests.storage', change: 'changed', from: '100Gi', to: '200Gi' },
        ],
      },
    ]);
    // The new sizes are the controller's to act on now, not a config read at some later restart.
    expect(c.components.find((d) => d.component === 'discovery')!.config.map((x) => [x.to, x.appliedBy])).toEqual([
      ['demo-volume-sizes', 'controller'],
    ]);
    const md = toMarkdown(diff(cluster(), withComponent('tikv', { requests: { storage: '200Gi' } })));
    expect(md).toContain(
      '- **Config** (ConfigMap `demo-volume-sizes`, read by the controller within its next pass, which then acts on the claims as Risks says):',
    );
    expect(md).not.toContain('config in place');
  });

  it('a smaller storage request is refused; another template change still needs the StatefulSet deleted by hand', () => {
    const shrink = only(diff(cluster(), withComponent('tikv', { requests: { storage: '50Gi' } })));
    expect(shrink.risks[0].message).toContain('tikv: spec.resources.requests.storage 100Gi -> 50Gi). Refused: volumes cannot shrink.');
    const objects = render(cluster()) as KubeObject[];
    const edited = JSON.parse(JSON.stringify(objects)) as Obj[];
    edited.find((o) => o.kind === 'StatefulSet' && o.metadata.name === 'demo-tikv')!.spec.volumeClaimTemplates[0].spec.storageClassName =
      'fast';
    const other = only(compareModels(buildModel(objects), buildModel(edited)));
    expect(other.risks[0].message).toContain('kubectl delete statefulset demo-tikv --cascade=orphan');
  });

  it('selector and serviceName changes of foreign manifests', () => {
    const objects = render(cluster()) as KubeObject[];
    const edited = JSON.parse(JSON.stringify(objects)) as Obj[];
    const pd = edited.find((o) => o.kind === 'StatefulSet' && o.metadata.name === 'demo-pd')!;
    pd.spec.serviceName = 'other-peer';
    pd.spec.selector.matchLabels.extra = 'x';
    const c = only(compareModels(buildModel(objects), buildModel(edited)));
    expect(riskIds(c)).toEqual(['selector', 'service-name']);
    expect(c.risks[1].message).toContain('spec.serviceName changes (demo-pd-peer -> other-peer)');
  });
});

describe('components and clusters added or removed', () => {
  it('removing TiFlash deletes its StatefulSet: a risk; discovery learns the new component list', () => {
    const withTiflash = {
      ...cluster(),
      spec: { ...cluster().spec, tiflash: { replicas: 1, storageClaims: [{ resources: { requests: { storage: '10Gi' } } }] } },
    };
    const report = diff(withTiflash, cluster());
    const c = only(report);
    expect(component(c, 'tiflash')).toMatchObject({ change: 'removed', workload: 'StatefulSet demo-tiflash', replicas: { from: 1 } });
    expect(riskIds(c)).toEqual(['component-removed']);
    expect(c.risks[0].message).toContain('TiFlash is removed: StatefulSet demo-tiflash is deleted and its Pods stop');
    const removed = c.objects.filter((o) => o.change === 'removed').map((o) => `${o.kind} ${o.name}`);
    expect(removed).toEqual([
      'ConfigMap demo-tiflash',
      'PodDisruptionBudget demo-tiflash',
      'Service demo-tiflash-peer',
      'StatefulSet demo-tiflash',
    ]);
    const discovery = component(c, 'discovery');
    expect(discovery.restart!.by).toBe('deployment');
    expect(discovery.restart!.causes.map((x) => x.path)).toEqual(['containers[discovery].env[TIDB_GITOPS_CLUSTER].value > components']);
    expect(toMarkdown(report)).toContain('#### TiFlash (StatefulSet demo-tiflash): removed');
  });

  it('a new cluster: everything added, summary with replica counts', () => {
    const report = diff([], cluster());
    const c = only(report);
    expect(c.change).toBe('added');
    expect(c.components.map((d) => [d.component, d.change, d.replicas?.to])).toEqual([
      ['pd', 'added', 3],
      ['tikv', 'added', 3],
      ['tidb', 'added', 2],
      ['discovery', 'added', 1],
    ]);
    expect(c.objects.every((o) => o.change === 'added')).toBe(true);
    expect(toMarkdown(report)).toContain('- **ns/demo**: new cluster (pd 3, tikv 3, tidb 2, discovery 1); no risks');
  });

  it('a removed cluster is one risk', () => {
    const c = only(diff(cluster(), []));
    expect(c.change).toBe('removed');
    expect(riskIds(c)).toEqual(['cluster-removed']);
    expect(c.risks[0].message).toContain('StatefulSets (demo-pd, demo-tikv, demo-tidb)');
  });

  it('orders clusters by namespace and name, components pd, tikv, tiflash, tidb, ...', () => {
    const bump = (ns: string, name: string, version: string) => cluster({ version }, { namespace: ns, name });
    const report = diff(
      [bump('b', 'x', 'v8.5.7'), bump('a', 'y', 'v8.5.7'), bump('a', 'x', 'v8.5.7')],
      [bump('b', 'x', 'v8.5.8'), bump('a', 'y', 'v8.5.8'), bump('a', 'x', 'v8.5.8')],
    );
    expect(report.clusters.map((c) => c.id)).toEqual(['a/x', 'a/y', 'b/x']);
    expect(report.clusters[0].components.map((d) => d.component)).toEqual(['pd', 'tikv', 'tidb']);
  });
});

describe('PD micro-services', () => {
  const ms = (spec: Obj = {}) =>
    cluster({
      pd: { ...cluster().spec.pd, mode: 'ms' },
      pdms: [
        { name: 'tso', replicas: 2 },
        { name: 'scheduling', replicas: 2 },
      ],
      ...spec,
    });

  it('switching a running PD to its micro-services, or back, is a pd-mode risk, which says whether PD restarts', () => {
    const to = only(diff(cluster(), ms()));
    expect(riskIds(to)).toEqual(['pd-mode']);
    expect(to.risks[0].message).toContain('API server of its micro-services (tso, scheduling)');
    // The default in-place ConfigMap restarts nothing: the report says so.
    expect(component(to, 'pd').restart).toBeUndefined();
    expect(to.risks[0].message).toContain('each member switches only when it next restarts');
    // The controller restarts too: it is told about the new components.
    expect(to.components.map((d) => d.component)).toEqual(['pd', 'tso', 'scheduling', 'discovery']);
    const rolling = only(diff(cluster({ configUpdateStrategy: 'RollingUpdate' }), ms({ configUpdateStrategy: 'RollingUpdate' })));
    expect(component(rolling, 'pd').restart).toBeDefined();
    expect(rolling.risks[0].message).toContain('every PD member restarts in the new mode');
    const back = only(diff(ms(), cluster()));
    expect(riskIds(back)).toEqual(['component-removed', 'component-removed', 'pd-mode']);
    expect(back.risks[2].message).toContain('(tso, scheduling) are removed');
  });

  it('a new cluster with micro-services, or a change within them, is no mode change', () => {
    expect(diff([], ms()).clusters[0].risks.map((r) => r.id)).not.toContain('pd-mode');
    const scaled = only(
      diff(
        ms(),
        ms({
          pdms: [
            { name: 'tso', replicas: 3 },
            { name: 'scheduling', replicas: 2 },
          ],
        }),
      ),
    );
    expect(riskIds(scaled)).toEqual([]);
    expect(component(scaled, 'tso').replicas).toEqual({ from: 2, to: 3 });
  });

  it('their versions count in the version skew', () => {
    const c = only(
      diff(
        ms(),
        ms({
          pdms: [
            { name: 'tso', replicas: 2, version: 'v8.5.8' },
            { name: 'scheduling', replicas: 2 },
          ],
        }),
      ),
    );
    expect(riskIds(c)).toEqual(['version-skew']);
    expect(c.risks[0].message).toContain('PD TSO v8.5.8');
  });
});

describe('versions', () => {
  it('a downgrade and a version skew', () => {
    const c = only(diff(cluster(), withComponent('tikv', { version: 'v8.5.6' })));
    expect(riskIds(c)).toEqual(['downgrade', 'version-skew', 'tikv-no-spare-store']);
    expect(c.risks[0].message).toContain('goes down from v8.5.7 to v8.5.6');
    expect(c.risks[1].message).toContain('PD v8.5.7, TiKV v8.5.6, TiDB v8.5.7');
  });

  it('no skew risk when all three move together, nor when an old skew stays untouched', () => {
    expect(riskIds(only(diff(cluster(), cluster({ version: 'v8.5.8' }))))).toEqual(['tikv-no-spare-store']);
    const skewed = withComponent('tidb', { version: 'v8.5.8' });
    expect(riskIds(only(diff(skewed, withComponent('tidb', { replicas: 3, version: 'v8.5.8' }))))).toEqual([]);
  });

  it('compares tags as semantic versions', () => {
    const v = (image: string) => imageVersion(image)!;
    expect(compareVersions(v('pingcap/tikv:v8.5.10'), v('pingcap/tikv:v8.5.9'))).toBeGreaterThan(0);
    expect(compareVersions(v('x:v8.5.0-beta.2'), v('x:v8.5.0'))).toBeLessThan(0);
    expect(compareVersions(v('x:v8.5.0-beta.10'), v('x:v8.5.0-beta.2'))).toBeGreaterThan(0);
    expect(imageVersion('pingcap/tikv:latest')).toBeUndefined();
    expect(imageVersion('registry:5000/pingcap/tikv')).toBeUndefined();
  });
});

describe('controller settings', () => {
  it('a settings change is reported without a restart', () => {
    const c = only(diff(cluster(), withComponent('tikv', { evictLeaderTimeout: '5m' })));
    const tikv = component(c, 'tikv');
    expect(tikv.restart).toBeUndefined();
    expect(tikv.settings).toEqual([{ path: 'evictLeaderTimeout', change: 'changed', from: '1500m', to: '5m' }]);
  });
});

describe('value paths', () => {
  it('matches named list items by name, not position', () => {
    const before = {
      containers: [
        {
          name: 'a',
          env: [
            { name: 'X', value: '1' },
            { name: 'Y', value: '2' },
          ],
        },
      ],
    };
    const after = {
      containers: [
        {
          name: 'a',
          env: [
            { name: 'NEW', value: '0' },
            { name: 'X', value: '1' },
            { name: 'Y', value: '3' },
          ],
        },
      ],
    };
    expect(diffValues(before, after).map((c) => [formatPath(c.path), c.from, c.to])).toEqual([
      ['containers[a].env[NEW]', undefined, { name: 'NEW', value: '0' }],
      ['containers[a].env[Y].value', '2', '3'],
    ]);
  });

  it('resolves REV:PATH paths as git does', () => {
    expect(repoPath('clusters/a', 'sub/')).toBe('clusters/a');
    expect(repoPath('./a', 'sub/')).toBe('sub/a');
    expect(repoPath('../x/', 'sub/')).toBe('x');
    expect(repoPath('', 'sub/')).toBe('');
    expect(repoPath('../..', 'sub/')).toBeUndefined();
  });
});

describe('tidb-gitops diff inputs', () => {
  it('rendered manifests (a dist/ directory) give the same report as the TidbCluster they came from', () => {
    const before = file('dist-case/old.yaml', stringify(cluster()));
    const rendered = file('dist-case/dist/demo.k8s.yaml', toYamlStream(render(cluster())));
    const after = file(
      'dist-case/new.yaml',
      stringify(withComponent('tikv', { replicas: 5, config: { storage: { 'reserve-space': '2GB' } } })),
    );
    const fromInput = run([before, after]);
    const fromDist = run([join(tmpDir(), 'dist-case/dist'), after]);
    expect(fromInput.status).toBe(0);
    expect(fromDist.stderr).toBe('');
    expect(fromDist.stdout).toBe(fromInput.stdout);
    expect(fromInput.stdout).toContain('- **ns/demo**: tikv 3 -> 5; tikv config in place (read at next restart); no risks');
    expect(run([rendered, before, '--exit-code'])).toMatchObject({
      status: 0,
      stdout: '## tidb-gitops diff\n\nNo changes to the rendered manifests.\n',
    });
  });

  it('mixes TidbClusters and foreign objects; objects of no cluster are listed on their own', () => {
    const extra = (data: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  x: "${data}"\n`;
    const r = run([file('mixed/old.yaml', `${basic}---\n${extra('1')}`), file('mixed/new.yaml', `${basic}---\n${extra('2')}`)]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('**0 clusters changed, objects outside any cluster changed, no risks.**');
    expect(r.stdout).toContain('- **Objects outside any cluster**: 1 object changed\n');
    expect(r.stdout).toContain('### Objects outside any cluster');
    // A few short values: each with its old and new value.
    expect(r.stdout).toContain('- changed: ConfigMap `settings` (data.x: `1` -> `2`)');
  });

  it('honours -n like render', () => {
    const r = run([
      'examples/basic',
      file('ns/new.yaml', basic.replace('replicas: 1\n    service', 'replicas: 2\n    service')),
      '-n',
      'db',
    ]);
    expect(r.stdout).toContain('- **db/basic**: tidb 1 -> 2; no risks');
  });

  it('honours --controller-image like render', () => {
    const dist = file('image/dist.yaml', toYamlStream(render(basic)));
    const r = run([dist, 'examples/basic', '--controller-image', 'registry.example.com/tidb-gitops:9.9.9']);
    expect(r.stdout).toContain('- **basic**: discovery restart; no risks');
    expect(r.stdout).toMatch(/- \*\*Image\*\* `discovery`: `[^`]+` -> `registry\.example\.com\/tidb-gitops:9\.9\.9`\n/);
  });

  it('identical inputs: "No changes", exit 0 even with --exit-code', () => {
    const r = cli(['diff', 'examples/basic', 'examples/basic/tidb-cluster.yaml', '--exit-code']);
    expect(r).toMatchObject({ status: 0, stderr: '', stdout: '## tidb-gitops diff\n\nNo changes to the rendered manifests.\n' });
  });

  it('fails with exit 1 on an invalid TidbCluster, naming file and path, with nothing on stdout', () => {
    const bad = file('bad/bad.yaml', basic.replace('replicas: 1\n    service', 'replicas: "three"\n    service'));
    const r = cli(['diff', 'examples/basic', bad]);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`${bad}: document 1: spec.tidb.replicas (line `);
    expect(r.stderr).toContain('expected an integer, got "three"');
    expect(r.stderr).toContain('1 problem found; no report was made');
  });

  it('fails with exit 1 on a path that does not exist', () => {
    const r = run(['examples/basic', join(tmpDir(), 'missing.yaml')]);
    expect(r).toMatchObject({ status: 1, stdout: '' });
    expect(r.stderr).toContain(`${join(tmpDir(), 'missing.yaml')}: no such file or directory`);
  });

  it('fails with exit 1 when the same object comes twice', () => {
    const r = run(['examples/basic', file('twice/a.yaml', `${toYamlStream(render(basic))}---\n${basic}`)]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/duplicate object ServiceAccount basic-discovery, also rendered from .*a\.yaml: document 21/);
  });

  it('reads one side from stdin with -', () => {
    expect(run(['-', 'examples/basic'], basic).stdout).toContain('No changes to the rendered manifests.');
  });

  it.each([
    [[], 'diff needs two arguments, OLD and NEW, got 0'],
    [['examples/basic'], 'diff needs two arguments, OLD and NEW, got 1'],
    [['a', 'b', 'c'], 'diff needs two arguments, OLD and NEW, got 3'],
    [['a', 'b', '--bogus'], 'unknown option "--bogus"'],
    [['a', 'b', '-n'], '-n needs a namespace'],
    [['-', '-'], 'only one of OLD and NEW can be -'],
  ])('usage error %j exits 2', (args, message) => {
    const r = run(args);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(message);
  });

  it('--help prints the usage with the exit codes on stdout', () => {
    const r = cli(['diff', '--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Usage: tidb-gitops diff [options] OLD NEW');
    expect(r.stdout).toContain('--exit-code');
    expect(parseDiffArgs(['--exit-code', 'a', '--', '-b'])).toEqual({
      old: 'a',
      new: '-b',
      namespace: undefined,
      controllerImage: undefined,
      exitCode: true,
    });
  });
});

requires(GIT).describe('tidb-gitops diff REV:PATH', () => {
  let repo: string;
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'pipe' });

  beforeAll(() => {
    repo = mkdtempSync(join(tmpdir(), 'tidb-gitops-diff-git-'));
    git('init', '-q');
    git('config', 'user.email', 'test@example.com');
    git('config', 'user.name', 'test');
    mkdirSync(join(repo, 'clusters/basic'), { recursive: true });
    mkdirSync(join(repo, 'docs'));
    writeFileSync(join(repo, 'clusters/basic/tidb-cluster.yaml'), basic);
    writeFileSync(join(repo, 'docs/readme.md'), 'not yaml');
    git('add', '.');
    git('-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'one');
    writeFileSync(join(repo, 'clusters/basic/tidb-cluster.yaml'), basic.replace('version: v8.5.7', 'version: v8.5.8'));
    mkdirSync(join(repo, 'clusters/new'));
    writeFileSync(join(repo, 'clusters/new/demo.yaml'), stringify(cluster()));
    git('add', '.');
    git('-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'two');
  });
  afterAll(() => rmSync(repo, { recursive: true, force: true }));

  it('compares two revisions of a directory', () => {
    const r = cli(['diff', 'HEAD~1:clusters', 'HEAD:clusters', '--exit-code'], repo);
    expect(r.stderr).toBe('');
    // examples/basic runs one Pod of each: each restart is downtime.
    expect(r.status).toBe(4);
    expect(r.stdout).toContain('**2 clusters changed, 3 risks.**');
    expect(r.stdout).toContain('- **basic**: pd, tikv, tidb rolling restart; 3 risks');
    expect(r.stdout).toContain('- **ns/demo**: new cluster (pd 3, tikv 3, tidb 2, discovery 1); no risks');
  });

  it('a path missing in the old revision counts as empty, with a note', () => {
    const r = cli(['diff', 'HEAD~1:clusters/new', 'HEAD:clusters/new'], repo);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe(
      'HEAD~1:clusters/new: clusters/new does not exist in HEAD~1; OLD counts as empty, so everything on the other side is added\n',
    );
    expect(r.stdout).toContain('- **ns/demo**: new cluster');
  });

  it('REV:./PATH is relative to the current directory, and a revision compares with the work tree', () => {
    const r = cli(['diff', 'HEAD~1:./basic/tidb-cluster.yaml', 'basic/tidb-cluster.yaml'], join(repo, 'clusters'));
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('- **basic**: pd, tikv, tidb rolling restart; 3 risks');
  });

  it('names git files as REV:PATH in input errors', () => {
    writeFileSync(join(repo, 'bad.yaml'), basic.replace('replicas: 1\n    service', 'replicas: "three"\n    service'));
    git('add', 'bad.yaml');
    git('-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'bad');
    const r = cli(['diff', 'HEAD~1:clusters/basic', 'HEAD:bad.yaml'], repo);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('HEAD:bad.yaml: document 1: spec.tidb.replicas (line ');
  });

  it('fails with exit 1 on a revision that does not exist', () => {
    const r = cli(['diff', 'nope:clusters', 'HEAD:clusters'], repo);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('nope:clusters: no such file or directory, and "nope" is not a git revision');
  });

  it('fails with exit 1 outside a git repository', () => {
    const r = cli(['diff', 'HEAD:clusters', 'examples/basic'], tmpDir());
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('HEAD:clusters: no such file or directory, and git cannot read it as REV:PATH');
  });
});
