/**
 * Bad input, end to end: the BUILT CLI (bin/tidb-gitops.js -> lib/tidb-gitops.js) runs as a child
 * process on small inline YAML written to a temp dir. Every case checks the exit code, that stdout
 * is empty, the exact message fragments on stderr (file, document, path, line, message) and, for
 * cases run with `-o $D/out`, that nothing at all was written.
 *
 * In every string of a case, `$D` stands for that case's own temp dir.
 * `npm test` builds first; to run this file alone: `npm run build && npx jest test/scenarios/cli/bad-input.test.ts`.
 */
import { execFileSync, spawnSync } from 'child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { imageNote } from '../../support/cli-notes';
import { dirname, join, resolve } from 'path';
import { TEST_DIR } from '../../support/paths';

const ROOT = resolve(TEST_DIR, '..');
const BIN = join(ROOT, 'bin', 'tidb-gitops.js');
const BUNDLE = join(ROOT, 'lib', 'tidb-gitops.js');

/** Inline YAML: drops the first newline and the common indentation, so line 1 is the first line written. */
function y(strings: TemplateStringsArray, ...values: unknown[]): string {
  const text = String.raw({ raw: strings }, ...values)
    .replace(/^\n/, '')
    .replace(/[ \t]+$/, '');
  const indents = text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => /^ */.exec(l)![0].length);
  const cut = Math.min(...indents);
  return text
    .split('\n')
    .map((l) => l.slice(cut))
    .join('\n');
}

/** A cluster that renders (lines 1-11). */
const DEMO = y`
  apiVersion: pingcap.com/v1alpha1
  kind: TidbCluster
  metadata:
    name: demo
  spec:
    pd:
      replicas: 1
    tikv:
      replicas: 3
    tidb:
      replicas: 1
`;

interface Case {
  name: string;
  /** Files to create under $D (sub-directories are created; a Buffer is written as it is). */
  files?: Record<string, string | Buffer>;
  /** Arguments after `node bin/tidb-gitops.js`; `$D` is replaced. */
  args: string[];
  stdin?: string;
  exit: 1 | 2;
  /** Each must occur in stderr. */
  stderr: string[];
  /** None may occur in stderr. */
  notStderr?: string[];
  /** The last stderr line must be `<n> problem(s) found; nothing was rendered`, and n error lines precede it. */
  problems?: number;
  /** Also pass `-o $D/out` and check that $D/out holds no file afterwards. */
  out?: boolean;
  /** Files (relative to $D) created before the run whose bytes must be unchanged after it. */
  keep?: Record<string, string>;
}

/** Ten levels of ten aliases each: 10^10 values from under a kilobyte (a "billion laughs" document). */
const ALIAS_BOMB = [
  'a0: &a0 [x, x, x, x, x, x, x, x, x, x]',
  ...Array.from({ length: 9 }, (_, i) => `a${i + 1}: &a${i + 1} [${Array(10).fill(`*a${i}`).join(', ')}]`),
];
const bombUnder = (indent: string) => ALIAS_BOMB.map((l) => `${indent}${l}`).join('\n');

/** DEMO with `extra` lines under spec (indented by two) and `pd`/`tidb` extras inside their mappings. */
const demoWith = (spec: string, pd = '', tidb = '') =>
  `apiVersion: pingcap.com/v1alpha1\nkind: TidbCluster\nmetadata:\n  name: demo\nspec:\n${spec}  pd:\n    replicas: 1\n${pd}  tikv:\n    replicas: 3\n  tidb:\n    replicas: 1\n${tidb}`;

const CASES: Case[] = [
  // ---- what the API server refuses though the JSON schema allows it ---------------------------------
  {
    name: 'label keys and values, selectors and annotation keys the API server refuses (with -o)',
    files: {
      'labels.yaml': demoWith(
        '  labels:\n    "bad key!": a\n    ok: "bad value!"\n  annotations:\n    "two/slashes/here": x\n',
        '    nodeSelector:\n      "-zone": a\n',
        `    labels:\n      long: ${'v'.repeat(64)}\n`,
      ),
    },
    args: ['render', '$D/labels.yaml'],
    out: true,
    exit: 1,
    stderr: [
      '$D/labels.yaml: document 1: spec.labels["bad key!"] (line 7): "bad key!" is not a valid key',
      '$D/labels.yaml: document 1: spec.labels.ok (line 8): "bad value!" is not a valid label value',
      '$D/labels.yaml: document 1: spec.annotations["two/slashes/here"] (line 10): "two/slashes/here" is not a valid key: at most one "/"',
      '$D/labels.yaml: document 1: spec.pd.nodeSelector["-zone"] (line 14): "-zone" is not a valid key',
      '$D/labels.yaml: document 1: spec.tidb.labels.long (line 20): label value has 64 characters, at most 63',
    ],
    notStderr: ['internal error', '    at '],
    problems: 5,
  },
  {
    name: 'upgrade annotations the operator would log and ignore: refused where they are read',
    files: {
      'annos.yaml': y`
        apiVersion: pingcap.com/v1alpha1
        kind: TidbCluster
        metadata:
          name: demo
          annotations:
            tidb.pingcap.com/tikv-min-ready-seconds: "30s"
            tidb.pingcap.com/pd-check-quorum-before-upgrade: "yes"
            tidb.pingcap.com/tikv-check-all-stores-up-before-upgrade: "true"
            tidb.pingcap.com/tikv-restart-without-flush-log-backup: ""
        spec:
          pd:
            replicas: 3
          tikv:
            replicas: 3
          tidb:
            replicas: 1
      `,
    },
    args: ['render', '$D/annos.yaml'],
    out: true,
    exit: 1,
    stderr: [
      '$D/annos.yaml: document 1: metadata.annotations["tidb.pingcap.com/pd-check-quorum-before-upgrade"] (line 7): expected "true" or "false", got "yes"',
      '$D/annos.yaml: document 1: metadata.annotations["tidb.pingcap.com/tikv-min-ready-seconds"] (line 6): expected a whole number of seconds, 0 or more, as a string (such as "30"), got "30s"',
    ],
    problems: 2,
  },
  {
    name: 'environment variable names: refused on 1.31, where only the relaxed names of 1.32+ would pass',
    files: { 'env.yaml': demoWith('', '    env:\n      - name: ""\n        value: a\n      - name: "1 a"\n        value: b\n') },
    args: ['render', '$D/env.yaml'],
    exit: 1,
    stderr: [
      '$D/env.yaml: document 1: spec.pd.env[0].name (line 9): an environment variable needs a name',
      '$D/env.yaml: document 1: spec.pd.env[1].name (line 11): "1 a" is not a valid environment variable name on Kubernetes 1.31',
    ],
    problems: 2,
  },
  {
    name: 'on 1.34 an env name with a space is fine, an empty one is not',
    files: { 'env.yaml': demoWith('', '    env:\n      - name: ""\n        value: a\n      - name: "1 a"\n        value: b\n') },
    args: ['render', '--kube-version', '1.34', '$D/env.yaml'],
    exit: 1,
    stderr: ['$D/env.yaml: document 1: spec.pd.env[0].name (line 9): an environment variable needs a name'],
    problems: 1,
  },
  {
    name: 'images with white space, a bogus Service type, ports out of range, a bad container name',
    files: {
      'svc.yaml': demoWith(
        '',
        '    baseImage: "pingcap/pd "\n    additionalContainers:\n      - name: Side_Car\n        image: " busybox"\n        ports:\n          - containerPort: 70000\n',
        '    service:\n      type: Bogus\n      additionalPorts:\n        - name: x\n          port: 0\n',
      ),
    },
    args: ['render', '$D/svc.yaml'],
    exit: 1,
    stderr: [
      '$D/svc.yaml: document 1: spec.pd.baseImage (line 8): "pingcap/pd " has white space at its start or end',
      '$D/svc.yaml: document 1: spec.pd.additionalContainers[0].name (line 10): "Side_Car" is not a valid container name',
      '$D/svc.yaml: document 1: spec.pd.additionalContainers[0].image (line 11): " busybox" has white space at its start or end',
      '$D/svc.yaml: document 1: spec.pd.additionalContainers[0].ports[0].containerPort (line 13): expected a port number from 1 to 65535, got 70000',
      '$D/svc.yaml: document 1: spec.tidb.service.type (line 19): expected a Service type (ClusterIP, NodePort, LoadBalancer, ExternalName), got "Bogus"',
      '$D/svc.yaml: document 1: spec.tidb.service.additionalPorts[0].port (line 22): expected a port number from 1 to 65535, got 0',
    ],
    problems: 6,
  },
  {
    name: 'a lone surrogate (from a \\uD800 escape) has no UTF-8 form: refused, not written as U+FFFD',
    files: { 'sur.yaml': demoWith('  annotations:\n    a: "x\\uD800y"\n') },
    args: ['render', '$D/sur.yaml'],
    exit: 1,
    stderr: ['$D/sur.yaml: document 1: spec.annotations.a (line 7): contains a lone UTF-16 surrogate'],
    problems: 1,
  },
  {
    name: "annotations within 256 KiB each but over it once a cluster's and a component's are merged: refused at the component's annotations, naming the rendered object",
    files: {
      'ann.yaml': demoWith(`  annotations:\n    a: ${'x'.repeat(150_000)}\n`, '', `    annotations:\n      b: ${'y'.repeat(150_000)}\n`),
    },
    args: ['render', '$D/ann.yaml'],
    out: true,
    exit: 1,
    stderr: [
      '$D/ann.yaml: document 1: spec.tidb.annotations (line 15): the API server would refuse the StatefulSet demo-tidb rendered from it: spec.template.metadata.annotations: annotations take 293.0 KiB together; Kubernetes allows at most 256.0 KiB per object',
    ],
    problems: 1,
  },
  {
    name: 'a config that makes a ConfigMap over 1 MiB',
    files: { 'cm.yaml': demoWith('', '', `    config: |\n      [labels]\n      note = "${'z'.repeat(1_100_000)}"\n`) },
    args: ['render', '$D/cm.yaml'],
    exit: 1,
    stderr: [
      '$D/cm.yaml: document 1: spec.tidb.config (line 12): the API server would refuse the ConfigMap demo-tidb rendered from it: data: its data takes 1.05 MiB; a ConfigMap holds at most 1.00 MiB',
    ],
    problems: 1,
  },
  {
    name: 'an integer in a config mapping beyond 2^53 is refused, not rounded',
    files: { 'big.yaml': demoWith('', '', `    config:\n      performance:\n        max-txn-ttl: 9007199254740993\n`) },
    args: ['render', '$D/big.yaml'],
    exit: 1,
    stderr: [
      '$D/big.yaml: document 1: spec.tidb.config.performance.max-txn-ttl (line 14): expected an integer within ±9007199254740991, the largest read exactly: beyond it digits are lost (write it in a TOML string, `config: |`, to keep every digit)',
    ],
    problems: 1,
  },
  {
    name: 'a timeout the controller cannot read is refused, not replaced by its default',
    files: { 't.yaml': DEMO.replace('  tikv:\n', '  tikv:\n    evictLeaderTimeout: forever\n') },
    args: ['render', '$D/t.yaml'],
    exit: 1,
    stderr: [
      '$D/t.yaml: document 1: spec.tikv.evictLeaderTimeout (line 9): expected a Go duration such as 1500m, 400s or 1h30m, got "forever"',
    ],
    problems: 1,
  },
  {
    name: 'a near-miss kind is an error, not a skipped document whose cluster prune would delete',
    files: { 'k.yaml': DEMO.replace('kind: TidbCluster', 'kind: TiDBCluster') },
    args: ['render', '$D/k.yaml'],
    exit: 1,
    stderr: ['$D/k.yaml: document 1: kind (line 2): "TiDBCluster" is no kind tidb-gitops reads; did you mean TidbCluster?'],
    problems: 1,
  },
  {
    name: 'bytes that are not UTF-8 are refused with their line, not read as U+FFFD',
    files: {
      'latin1.yaml': Buffer.concat([Buffer.from(DEMO), Buffer.from('  labels:\n    owner: J'), Buffer.from([0xfc]), Buffer.from('rgen\n')]),
    },
    args: ['render', '$D/latin1.yaml'],
    out: true,
    exit: 1,
    stderr: ['$D/latin1.yaml: line 13: not valid UTF-8 (byte 0xfc); save the file as UTF-8'],
    problems: 1,
  },
  {
    name: 'a 64-character namespace',
    files: { 'ns.yaml': DEMO.replace('name: demo', `name: demo\n  namespace: ${'n'.repeat(64)}`) },
    args: ['render', '$D/ns.yaml'],
    exit: 1,
    stderr: ['$D/ns.yaml: document 1: metadata.namespace (line 5): invalid namespace'],
    problems: 1,
  },
  // ---- values the start scripts carry: refused where they are read, never a crash ------------------
  {
    name: 'script values: clusterDomain, cluster.name, initWaitTime, startTimeout, dataSubDir, plugins, arguments (with -o)',
    files: {
      'script.yaml': demoWith(
        '  clusterDomain: Cluster.Local\n  cluster:\n    name: Bad_Name\n',
        '    initWaitTime: -1\n    startTimeout: -1\n    dataSubDir: "a b"\n',
        '    plugins: ["a b"]\n    arguments: ["--a\\n--b"]\n',
      ),
    },
    args: ['render', '$D/script.yaml'],
    out: true,
    exit: 1,
    stderr: [
      '$D/script.yaml: document 1: spec.clusterDomain (line 6): expected a DNS domain such as cluster.local (lowercase letters, digits, - and .), got "Cluster.Local"',
      '$D/script.yaml: document 1: spec.cluster.name (line 8): expected the name of a TidbCluster',
      '$D/script.yaml: document 1: spec.pd.initWaitTime (line 11): expected a whole number of seconds, 0 or more, got -1',
      '$D/script.yaml: document 1: spec.pd.startTimeout (line 12): expected a whole number of seconds, 1 or more, got -1',
      '$D/script.yaml: document 1: spec.pd.dataSubDir (line 13): expected a relative path of letters, digits, ., _, / and -, got "a b"',
      '$D/script.yaml: document 1: spec.tidb.plugins[0] (line 18): expected a plugin name (letters, digits, ., _ and -), got "a b"',
      '$D/script.yaml: document 1: spec.tidb.arguments[0] (line 19): expected one line (the start script puts each argument on its own line), got "--a\\n--b"',
    ],
    notStderr: ['internal error', '    at '],
    problems: 7,
  },
  {
    name: 'integers beyond 2^53 (they would lose digits) and beyond int64',
    files: {
      'big.yaml': demoWith(
        '',
        '    terminationGracePeriodSeconds: 9007199254740993\n',
        '    terminationGracePeriodSeconds: 99999999999999999999\n',
      ),
    },
    args: ['render', '$D/big.yaml'],
    exit: 1,
    stderr: [
      '$D/big.yaml: document 1: spec.pd.terminationGracePeriodSeconds (line 8): expected an integer within ±9007199254740991, the largest read exactly: beyond it digits are lost',
      '$D/big.yaml: document 1: spec.tidb.terminationGracePeriodSeconds (line 13): expected an integer within ±9007199254740991',
    ],
    problems: 2,
  },
  {
    name: '__proto__ keys, in spec and inside a config, are refused rather than dropped or obeyed',
    files: { 'proto.yaml': demoWith('  __proto__:\n    paused: true\n', '    config:\n      __proto__:\n        a: 1\n') },
    args: ['render', '$D/proto.yaml'],
    exit: 1,
    stderr: [
      '$D/proto.yaml: document 1: spec.__proto__ (line 7): the key __proto__ is not accepted anywhere in a TidbCluster',
      '$D/proto.yaml: document 1: spec.pd.config.__proto__ (line 12): the key __proto__ is not accepted anywhere in a TidbCluster',
    ],
    problems: 2,
  },
  {
    name: 'mapping keys that YAML reads as numbers or booleans are refused: 1 and "1" would become one key',
    files: { 'keys.yaml': demoWith('', '    nodeSelector: {1: a, "1": b}\n    labels:\n      true: x\n') },
    args: ['render', '$D/keys.yaml'],
    exit: 1,
    stderr: [
      '$D/keys.yaml: document 1: spec.pd.nodeSelector["1"] (line 8): a key must be text: kubectl reads 1 as a number and makes it the key "1": quote it ("1") if it is meant as text',
      '$D/keys.yaml: document 1: spec.pd.nodeSelector["1"] (line 8): the key "1" is given twice in this mapping (first on line 8): kubectl keeps the last, other tools the first; keep one',
      '$D/keys.yaml: document 1: spec.pd.labels.true (line 10): a key must be text: kubectl reads true as a boolean and makes it the key "true": quote it ("true") if it is meant as text',
    ],
    problems: 3,
  },
  {
    name: '-n with a value that is no namespace is a usage error',
    files: { 'demo.yaml': DEMO },
    args: ['render', '$D/demo.yaml', '-n', 'Bad NS'],
    exit: 2,
    stderr: [`tidb-gitops: -n: "Bad NS" is not a namespace (a DNS label: lowercase letters, digits and '-', at most 63)`],
  },
  {
    name: '-n followed by another option is a missing namespace, not a namespace called -o',
    files: { 'demo.yaml': DEMO },
    args: ['render', '$D/demo.yaml', '-n', '-o', '$D/out'],
    exit: 2,
    stderr: ['tidb-gitops: -n needs a namespace'],
  },
  // ---- YAML aliases that expand without end ---------------------------------------------------------
  {
    name: 'an alias bomb under spec is refused at once, naming its line (render -o)',
    files: { 'bomb.yaml': `apiVersion: pingcap.com/v1alpha1\nkind: TidbCluster\nmetadata:\n  name: bomb\nspec:\n${bombUnder('  ')}\n` },
    args: ['render', '$D/bomb.yaml'],
    out: true,
    exit: 1,
    stderr: [
      '$D/bomb.yaml: document 1: (yaml) (line 10): its aliases expand to more than 100,000 values: write the values out, or anchor fewer of them',
    ],
    problems: 1,
  },
  {
    name: 'an alias inside its own anchor is refused',
    files: {
      'loop.yaml': 'apiVersion: pingcap.com/v1alpha1\nkind: TidbCluster\nmetadata:\n  name: loop\nspec:\n  tidb: &a {replicas: 1, x: *a}\n',
    },
    args: ['render', '$D/loop.yaml'],
    exit: 1,
    stderr: [
      '$D/loop.yaml: document 1: (yaml) (line 6): the alias *a refers to its own anchor, so its value never ends: write the value out',
    ],
    problems: 1,
  },
  {
    name: 'diff refuses an alias bomb even in a document it would skip',
    files: {
      'old.yaml': DEMO,
      'new.yaml': `${DEMO}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n${bombUnder('  ')}\n`,
    },
    args: ['diff', '$D/old.yaml', '$D/new.yaml'],
    exit: 1,
    stderr: ['$D/new.yaml: document 2: (yaml) (line', 'its aliases expand to more than 100,000 values', 'no report was made'],
  },
  // ---- schema: types, unknown fields, quantities -------------------------------------------------
  {
    name: 'wrong type: replicas: "three"',
    files: { 'bad.yaml': DEMO.replace('replicas: 3', 'replicas: "three"') },
    args: ['render', '$D/bad.yaml'],
    exit: 1,
    stderr: ['$D/bad.yaml: document 1: spec.tikv.replicas (line 9): expected an integer, got "three"'],
    problems: 1,
  },
  {
    name: 'unknown field with a did-you-mean: spec.tikv.replica (with -o)',
    files: {
      'typo.yaml': y`
        apiVersion: pingcap.com/v1alpha1
        kind: TidbCluster
        metadata:
          name: demo
        spec:
          pd:
            replicas: 1
          tikv:
            replicas: 3
            requests:
              storage: 10Gi
            replica: 3
      `,
    },
    args: ['render', '$D/typo.yaml'],
    out: true,
    exit: 1,
    stderr: ['$D/typo.yaml: document 1: spec.tikv.replica (line 12): unknown field; did you mean replicas?'],
  },
  {
    name: 'unknown field deep inside a Kubernetes type: additionalContainers[0].imagee',
    files: {
      'deep.yaml': y`
        apiVersion: pingcap.com/v1alpha1
        kind: TidbCluster
        metadata:
          name: demo
        spec:
          pd:
            replicas: 1
          tidb:
            replicas: 1
            additionalContainers:
              - name: sidecar
                imagee: busybox
      `,
    },
    args: ['render', '$D/deep.yaml'],
    exit: 1,
    stderr: ['$D/deep.yaml: document 1: spec.tidb.additionalContainers[0].imagee (line 12): unknown field; did you mean image?'],
    problems: 1,
  },
  {
    name: 'unknown top-level spec field with no close match',
    files: {
      'unknown.yaml': y`
        apiVersion: pingcap.com/v1alpha1
        kind: TidbCluster
        metadata:
          name: demo
        spec:
          frobnicate: true
          pd:
            replicas: 1
      `,
    },
    args: ['render', '$D/unknown.yaml'],
    exit: 1,
    stderr: ['$D/unknown.yaml: document 1: spec.frobnicate (line 6): unknown field\n'],
    notStderr: ['did you mean'],
  },
  {
    name: 'bad quantity: requests.storage: ten',
    files: {
      'quantity.yaml': y`
        apiVersion: pingcap.com/v1alpha1
        kind: TidbCluster
        metadata:
          name: demo
        spec:
          pd:
            replicas: 1
            requests:
              storage: ten
      `,
    },
    args: ['render', '$D/quantity.yaml'],
    exit: 1,
    stderr: [
      '$D/quantity.yaml: document 1: spec.pd.requests.storage (line 9): expected a Kubernetes quantity such as 10Gi or 500m, got "ten"',
    ],
    problems: 1,
  },
  {
    name: 'required field missing: spec.pd.replicas',
    files: {
      'noreplicas.yaml': y`
        apiVersion: pingcap.com/v1alpha1
        kind: TidbCluster
        metadata:
          name: demo
        spec:
          pd:
            baseImage: pingcap/pd
          tikv:
            replicas: 3
      `,
    },
    args: ['render', '$D/noreplicas.yaml'],
    exit: 1,
    // The line is that of the pd mapping's first key (the mapping node), not the `pd:` key.
    stderr: ['$D/noreplicas.yaml: document 1: spec.pd.replicas (line 7): required field is missing'],
    problems: 1,
  },
  {
    name: 'wrong apiVersion with kind TidbCluster',
    files: { 'v1.yaml': DEMO.replace('pingcap.com/v1alpha1', 'pingcap.com/v1') },
    args: ['render', '$D/v1.yaml'],
    exit: 1,
    stderr: ['$D/v1.yaml: document 1: apiVersion (line 1): expected pingcap.com/v1alpha1, got "pingcap.com/v1"'],
    problems: 1,
  },

  // ---- metadata ----------------------------------------------------------------------------------
  {
    name: 'missing metadata.name',
    files: { 'noname.yaml': DEMO.replace('  name: demo', '  namespace: prod') },
    args: ['render', '$D/noname.yaml'],
    exit: 1,
    stderr: ['$D/noname.yaml: document 1: metadata.name (line 4): required field is missing'],
    problems: 1,
  },
  {
    name: 'invalid name: uppercase',
    files: { 'upper.yaml': DEMO.replace('name: demo', 'name: Demo') },
    args: ['render', '$D/upper.yaml'],
    exit: 1,
    stderr: ['$D/upper.yaml: document 1: metadata.name (line 4): invalid name "Demo": expected lowercase letters, digits and \'-\''],
    problems: 1,
  },
  {
    name: 'invalid name: underscore',
    files: { 'underscore.yaml': DEMO.replace('name: demo', 'name: my_db') },
    args: ['render', '$D/underscore.yaml'],
    exit: 1,
    stderr: ['$D/underscore.yaml: document 1: metadata.name (line 4): invalid name "my_db": expected lowercase letters'],
    problems: 1,
  },
  {
    name: 'name too long (48 characters; 47 is the limit)',
    files: { 'long.yaml': DEMO.replace('name: demo', `name: ${'a'.repeat(48)}`) },
    args: ['render', '$D/long.yaml'],
    exit: 1,
    stderr: ['$D/long.yaml: document 1: metadata.name (line 4): name too long (48 characters): at most 47'],
    problems: 1,
  },

  // ---- files that are not TidbCluster YAML -------------------------------------------------------
  {
    name: 'an empty file given explicitly',
    files: { 'empty.yaml': '' },
    args: ['render', '$D/empty.yaml'],
    exit: 1,
    stderr: ['$D/empty.yaml: no Kubernetes object in this file'],
    problems: 1,
  },
  {
    name: 'broken YAML: a: [b',
    files: { 'broken.yaml': 'a: [b\n' },
    args: ['render', '$D/broken.yaml'],
    exit: 1,
    stderr: [
      '$D/broken.yaml: document 1: (yaml) (line 1): not valid YAML: the [ that starts on line 1 is never closed: end the list with ]',
    ],
    problems: 1,
  },
  {
    name: 'config as a tagged list or binary is refused, not coerced to a table',
    files: { 'tags.yaml': demoWith('', '    config: !!omap [a: 1]\n    labels: !!binary aGk=\n') },
    args: ['render', '$D/tags.yaml'],
    exit: 1,
    stderr: [
      '$D/tags.yaml: document 1: spec.pd.config (line 8): the tag !!omap is not read here (kubectl drops or reinterprets it): write the list without it',
      '$D/tags.yaml: document 1: spec.pd.labels (line 9): the tag !!binary is not read here (kubectl drops or reinterprets it): write the value without it',
    ],
    problems: 2,
  },
  {
    name: 'spec.cluster names a namespace and a domain PD can be reached at',
    files: { 'join.yaml': DEMO.replace('spec:\n', 'spec:\n  cluster: {name: basic, namespace: "Bad NS", clusterDomain: "x_y"}\n') },
    args: ['render', '$D/join.yaml'],
    exit: 1,
    stderr: [
      `$D/join.yaml: document 1: spec.cluster.namespace (line 6): expected a namespace (a DNS label: lowercase letters, digits and '-', at most 63), got "Bad NS"`,
      '$D/join.yaml: document 1: spec.cluster.clusterDomain (line 6): expected a DNS domain such as cluster.local (lowercase letters, digits, - and .), got "x_y"',
    ],
    problems: 2,
  },
  {
    name: 'a config value where the renderer writes a table is refused, not replaced',
    files: {
      'owned.yaml': DEMO.replace('    replicas: 1\n', '    replicas: 1\n    config:\n      security: abc\n').replace(
        '  tidb:\n    replicas: 1\n',
        '  tidb:\n    replicas: 1\n    config:\n      log: "y"\n',
      ),
    },
    args: ['render', '$D/owned.yaml'],
    exit: 1,
    stderr: [
      '$D/owned.yaml: document 1: spec.pd.config.security (line 9): expected a table (the renderer sets keys inside security), got "abc"',
      '$D/owned.yaml: document 1: spec.tidb.config.log (line 15): expected a table (the renderer sets keys inside log), got "y"',
    ],
    problems: 2,
  },
  {
    name: 'an input inside the output directory is refused, not overwritten or pruned',
    keep: { 'out/demo.k8s.yaml': DEMO },
    args: ['render', '$D/out'],
    out: true,
    exit: 1,
    stderr: [
      '$D/out/demo.k8s.yaml: is inside the output directory $D/out, whose files render overwrites and prunes: keep the inputs outside it',
    ],
    problems: 1,
  },
  {
    name: 'a cluster without a namespace beside a namesake with one',
    files: { 'two.yaml': `${DEMO}---\n${DEMO.replace('name: demo\n', 'name: demo\n  namespace: tidb\n')}` },
    args: ['render', '$D/two.yaml'],
    exit: 1,
    stderr: [
      '$D/two.yaml: document 1: metadata.namespace (line 4): cluster "demo" has no namespace, and one of the same name is in "tidb" ($D/two.yaml: document 2): applied there, the two would be one; give this one a namespace (metadata.namespace, or -n)',
    ],
    problems: 1,
  },
  {
    name: 'a config that is a list or a number is refused, not read as a table or dropped',
    files: {
      'cfg.yaml': DEMO.replace('    replicas: 1\n', '    replicas: 1\n    config: [1, 2]\n').replace(
        '  tidb:\n    replicas: 1\n',
        '  tidb:\n    replicas: 1\n    config: 5\n',
      ),
    },
    args: ['render', '$D/cfg.yaml'],
    exit: 1,
    stderr: [
      '$D/cfg.yaml: document 1: spec.pd.config (line 8): expected a TOML document (a string) or a mapping, got [1,2]',
      '$D/cfg.yaml: document 1: spec.tidb.config (line 13): expected a TOML document (a string) or a mapping, got 5',
    ],
    problems: 2,
  },
  {
    name: 'binary-ish file (a zip header)',
    files: { 'blob.yaml': Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x00, 0x00, 0x08, 0x00]) },
    args: ['render', '$D/blob.yaml'],
    exit: 1,
    stderr: ['$D/blob.yaml: document 1: (document) (line 1): expected a mapping (a Kubernetes object)'],
    problems: 1,
  },
  {
    name: 'duplicate key in a mapping (kubectl would keep the last silently)',
    files: { 'dupkey.yaml': DEMO.replace('    replicas: 1\n', '    replicas: 1\n    replicas: 2\n') },
    args: ['render', '$D/dupkey.yaml'],
    exit: 1,
    stderr: [
      '$D/dupkey.yaml: document 1: spec.pd.replicas (line 8): the key "replicas" is given twice in this mapping (first on line 7): kubectl keeps the last, other tools the first; keep one',
    ],
    problems: 1,
  },
  {
    name: 'a YAML list, not a mapping',
    files: { 'list.yaml': '- apiVersion: pingcap.com/v1alpha1\n  kind: TidbCluster\n' },
    args: ['render', '$D/list.yaml'],
    exit: 1,
    stderr: ['$D/list.yaml: document 1: (document) (line 1): expected a mapping (a Kubernetes object)'],
    problems: 1,
  },
  {
    name: 'a directory with only other kinds: they would pass through, but there is no cluster to render',
    files: {
      'manifests/a.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\n',
      'manifests/sub/b.yml': 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n',
      'manifests/notes.txt': 'kind: TidbCluster\n',
    },
    args: ['render', '$D/manifests'],
    out: true,
    exit: 1,
    stderr: ['no TidbCluster document found in the inputs\n'],
    notStderr: ['notes.txt', 'skipped'],
    problems: 1,
  },
  {
    name: 'an object kept beside the cluster without a name',
    files: { 'c.yaml': `${DEMO}---\napiVersion: v1\nkind: Secret\n` },
    args: ['render', '$D/c.yaml'],
    exit: 1,
    stderr: ['$D/c.yaml: document 2: metadata.name (line 13): required\n'],
    problems: 1,
  },
  {
    name: 'a directory with no .yaml file',
    files: { 'nothing/readme.txt': 'hello\n' },
    args: ['render', '$D/nothing'],
    exit: 1,
    stderr: ['$D/nothing: no .yaml or .yml file in this directory'],
    problems: 1,
  },
  {
    name: 'a missing input path',
    args: ['render', '$D/missing.yaml'],
    out: true,
    exit: 1,
    stderr: ['$D/missing.yaml: no such file or directory'],
    problems: 1,
  },

  // ---- duplicates --------------------------------------------------------------------------------
  {
    name: 'duplicate cluster names in one file',
    files: { 'two.yaml': `${DEMO}---\n${DEMO}` },
    args: ['render', '$D/two.yaml'],
    exit: 1,
    stderr: ['$D/two.yaml: document 2: metadata.name (line 16): duplicate cluster "demo", also defined at $D/two.yaml: document 1'],
    problems: 1,
  },
  {
    name: 'duplicate cluster names across two files (with -o)',
    files: { 'a.yaml': DEMO, 'b.yaml': DEMO },
    args: ['render', '$D/a.yaml', '$D/b.yaml'],
    out: true,
    exit: 1,
    stderr: ['$D/b.yaml: document 1: metadata.name (line 4): duplicate cluster "demo", also defined at $D/a.yaml: document 1'],
    problems: 1,
  },

  // ---- what this project does not render (yet) ---------------------------------------------------
  {
    name: 'not supported yet: spec.enablePVReclaim (false is accepted)',
    files: {
      'reclaim.yaml': y`
        apiVersion: pingcap.com/v1alpha1
        kind: TidbCluster
        metadata:
          name: demo
        spec:
          enablePVReclaim: true
          pd:
            replicas: 1
      `,
    },
    args: ['render', '$D/reclaim.yaml'],
    exit: 1,
    stderr: [
      '$D/reclaim.yaml: document 1: spec.enablePVReclaim (line 6): not supported yet: claims of scaled-in Pods are kept, annotated tidb.pingcap.com/pvc-defer-deleting, until their ordinal comes back; delete them yourself to free the volumes',
    ],
    problems: 1,
  },
  {
    name: 'PD micro-services: fields the operator ignores for them are refused at their list path',
    files: {
      'pdms.yaml': y`
        apiVersion: pingcap.com/v1alpha1
        kind: TidbCluster
        metadata:
          name: demo
          namespace: db
        spec:
          pd:
            replicas: 1
            mode: ms
          pdms:
            - name: tso
              replicas: 1
              startTimeout: 60
            - name: scheduling
              replicas: 1
              readinessProbe:
                type: tcp
              startUpScriptVersion: v1
              tlsClientSecretName: mine
      `,
    },
    args: ['render', '$D/pdms.yaml'],
    exit: 1,
    stderr: [
      "$D/pdms.yaml: document 1: spec.pdms[0].startTimeout (line 13): not supported yet: the micro-services' start script waits for spec.pd.startTimeout, as the operator's does; set that instead",
      '$D/pdms.yaml: document 1: spec.pdms[1].readinessProbe (line 17): not supported yet: tidb-operator gives the TSO and scheduling servers no readiness probe',
      '$D/pdms.yaml: document 1: spec.pdms[1].startUpScriptVersion (line 18): not supported yet: the micro-services always run the v2 start script, which waits with dig',
      '$D/pdms.yaml: document 1: spec.pdms[1].tlsClientSecretName (line 19): not supported yet: only PD serves the dashboard, which uses that certificate; set spec.pd.tlsClientSecretName',
    ],
    problems: 4,
  },
  {
    name: 'PD micro-services: PD must run as their API server, each once, without data, in a named namespace',
    files: {
      'pdms.yaml': y`
        apiVersion: pingcap.com/v1alpha1
        kind: TidbCluster
        metadata:
          name: demo
        spec:
          pd:
            replicas: 1
          pdms:
            - name: tso
              replicas: 1
              requests:
                storage: 1Gi
            - name: tso
              replicas: 2
      `,
      'mode.yaml': y`
        apiVersion: pingcap.com/v1alpha1
        kind: TidbCluster
        metadata:
          name: demo
          namespace: db
        spec:
          pd:
            replicas: 1
            mode: ms
      `,
      'no-pd.yaml': y`
        apiVersion: pingcap.com/v1alpha1
        kind: TidbCluster
        metadata:
          name: demo
          namespace: db
        spec:
          tikv:
            replicas: 1
          pdms:
            - name: scheduling
              replicas: 1
      `,
    },
    args: ['render', '$D/pdms.yaml', '$D/mode.yaml', '$D/no-pd.yaml'],
    exit: 1,
    stderr: [
      '$D/pdms.yaml: document 1: spec.pd.mode (line 7): expected "ms" with spec.pdms set (PD must run as the micro-services\' API server), got ""',
      '$D/pdms.yaml: document 1: metadata.namespace (line 4): required with spec.pdms, whose start scripts name the namespace; set it here or pass --namespace',
      '$D/pdms.yaml: document 1: spec.pdms[0].requests.storage (line 12): the PD micro-services keep no data: there is no data volume to size (use storageVolumes for extra volumes)',
      '$D/pdms.yaml: document 1: spec.pdms[1].name (line 13): tso is listed twice in spec.pdms; each micro-service is one StatefulSet (<cluster>-tso)',
      '$D/mode.yaml: document 1: spec.pd.mode (line 9): mode ms runs PD as the API server of its micro-services: list them in spec.pdms (tso, scheduling), or leave mode empty',
      "$D/no-pd.yaml: document 1: spec.pdms (line 10): the PD micro-services need this cluster's own PD (spec.pd with mode: ms) as their API server",
    ],
    problems: 6,
  },
  {
    name: 'not supported yet: suspendAction; a TidbInitializer whose SQL cannot be split (with -o)',
    files: {
      'unsupported.yaml': y`
        apiVersion: pingcap.com/v1alpha1
        kind: TidbCluster
        metadata:
          name: demo
        spec:
          suspendAction:
            suspendStatefulSet: true
          pd:
            replicas: 1
          tidb:
            replicas: 1
            initializer:
              createPassword: true
        ---
        apiVersion: pingcap.com/v1alpha1
        kind: TidbInitializer
        metadata:
          name: init
        spec:
          image: tnir/mysqlclient
          cluster:
            name: demo
          initSql: |
            CREATE DATABASE app;
            INSERT INTO app.t VALUES ('unclosed);
      `,
    },
    args: ['render', '$D/unsupported.yaml'],
    out: true,
    exit: 1,
    stderr: [
      '$D/unsupported.yaml: document 1: spec.suspendAction (line 7): not supported yet: to stop a component, lower its replicas (the StatefulSet and its volumes stay)',
      '$D/unsupported.yaml: document 2: spec.initSql (line 23): cannot be read as SQL statements: line 2: a quoted string that starts here is never closed (lines counted from the first line of the SQL)',
    ],
    problems: 2,
  },

  {
    name: "an operator user's TidbMonitor: what has no counterpart is refused, each by path and line (with -o)",
    files: {
      'monitor.yaml': y`
        apiVersion: pingcap.com/v1alpha1
        kind: TidbCluster
        metadata:
          name: demo
          annotations:
            tidb-gitops.io/monitoring-labels: release
        spec:
          pd:
            replicas: 1
        ---
        apiVersion: pingcap.com/v1alpha1
        kind: TidbMonitor
        metadata:
          name: demo
        spec:
          clusters:
            - name: demo
            - name: other
          alertmanagerURL: alertmanager.monitoring:9093
          persistent: true
          prometheus:
            baseImage: prom/prometheus
            version: v2.27.1
            service:
              type: NodePort
          initializer:
            baseImage: pingcap/tidb-monitor-initializer
            version: v8.5.7
          reloader:
            baseImage: pingcap/tidb-monitor-reloader
            version: v1.0.1
      `,
    },
    args: ['render', '$D/monitor.yaml'],
    out: true,
    exit: 1,
    stderr: [
      '$D/monitor.yaml: document 1: metadata.annotations["tidb-gitops.io/monitoring-labels"] (line 6): expected labels such as "release=kube-prometheus-stack, team=db" (key=value, each a Kubernetes label), got "release"',
      "$D/monitor.yaml: document 2: spec.alertmanagerURL (line 19): not carried over: where alerts go is your Prometheus's setting (spec.alerting of its Prometheus resource); for the alert rules, set enableAlertRules: true; remove it",
      '$D/monitor.yaml: document 2: spec.persistent (line 20): not carried over: tidb-gitops runs no Prometheus, so it keeps no monitoring data: your Prometheus stores it (spec.storage of its Prometheus resource); remove it',
      '$D/monitor.yaml: document 2: spec.prometheus.service (line 25): not carried over: tidb-gitops runs no Prometheus: your Prometheus Operator scrapes the rendered PodMonitors, so this is set on its Prometheus resource; remove it',
    ],
    problems: 4,
  },

  {
    name: 'new components and cluster-wide fields: every problem at once (with -o)',
    files: {
      'components.yaml': y`
        apiVersion: pingcap.com/v1alpha1
        kind: TidbCluster
        metadata:
          name: demo
        spec:
          acrossK8s: true
          pdAddresses:
            - pd-0:2379
          pd:
            replicas: 1
          tiflash:
            replicas: 1
            storageClaims: []
          tiproxy:
            replicas: 1
            certLayout: v2
          pump:
            replicas: 1
            requests:
              cpu: "1"
      `,
    },
    args: ['render', '$D/components.yaml'],
    out: true,
    exit: 1,
    stderr: [
      '$D/components.yaml: document 1: spec.pdAddresses[0] (line 8): expected a PD client URL such as http://pd.example.com:2379, got "pd-0:2379"',
      '$D/components.yaml: document 1: spec.tiflash.storageClaims (line 13): at least one storage claim is required',
      '$D/components.yaml: document 1: metadata.namespace (line 4): required with spec.tiflash and acrossK8s',
      '$D/components.yaml: document 1: spec.pump.requests.storage (line 20): required field is missing',
      '$D/components.yaml: document 1: spec.tiproxy (line 15): TiProxy cannot be rendered with spec.acrossK8s',
      '$D/components.yaml: document 1: spec.tiproxy.certLayout (line 16): expected "" (legacy) or "v1", got "v2"',
    ],
    problems: 6,
  },

  // ---- config, references, namespaces -------------------------------------------------------------
  {
    name: 'invalid TOML in a spec.tikv.config string',
    files: {
      'toml.yaml': y`
        apiVersion: pingcap.com/v1alpha1
        kind: TidbCluster
        metadata:
          name: demo
        spec:
          pd:
            replicas: 1
          tikv:
            replicas: 3
            config: |
              [storage]
              reserve-space = "0MB"
              this is not toml
      `,
    },
    args: ['render', '$D/toml.yaml'],
    exit: 1,
    // `line 3` is the line inside the TOML string; (line 10) is the `config: |` line of the file.
    stderr: ['$D/toml.yaml: document 1: spec.tikv.config (line 10): invalid TOML at line 3, column'],
    problems: 1,
  },
  {
    name: 'null as a config map value',
    files: {
      'null.yaml': y`
        apiVersion: pingcap.com/v1alpha1
        kind: TidbCluster
        metadata:
          name: demo
        spec:
          pd:
            replicas: 1
          tikv:
            replicas: 3
            config:
              storage:
                reserve-space:
      `,
    },
    args: ['render', '$D/null.yaml'],
    exit: 1,
    stderr: [
      '$D/null.yaml: document 1: spec.tikv.config.storage.reserve-space (line 12): a config value cannot be empty (null); remove the key or give it a value',
    ],
    problems: 1,
  },
  {
    name: 'startScriptVersion v2 without a namespace',
    files: { 'v2.yaml': DEMO.replace('spec:\n', 'spec:\n  startScriptVersion: v2\n') },
    args: ['render', '$D/v2.yaml'],
    exit: 1,
    stderr: [
      '$D/v2.yaml: document 1: metadata.namespace (line 4): required with startScriptVersion v2, whose scripts name the namespace; set it here or pass --namespace',
    ],
    problems: 1,
  },
  {
    name: 'slowLogVolumeName that names no volume',
    files: {
      'slowlog.yaml': y`
        apiVersion: pingcap.com/v1alpha1
        kind: TidbCluster
        metadata:
          name: demo
        spec:
          pd:
            replicas: 1
          tidb:
            replicas: 1
            slowLogVolumeName: slowlog
            storageVolumes:
              - name: data
                storageSize: 1Gi
                mountPath: /data
      `,
    },
    args: ['render', '$D/slowlog.yaml'],
    exit: 1,
    stderr: [
      '$D/slowlog.yaml: document 1: spec.tidb.slowLogVolumeName (line 10): no storage volume or additional volume mount is named "slowlog" (have: data)',
    ],
    problems: 1,
  },

  // ---- several problems at once ------------------------------------------------------------------
  {
    name: 'several errors in one document are all reported together',
    files: {
      'many.yaml': y`
        apiVersion: pingcap.com/v1
        kind: TidbCluster
        metadata:
          name: Many_Errors
        spec:
          pd:
            replicas: 1
            requests:
              storage: lots
          tikv:
            replicas: "three"
      `,
    },
    args: ['render', '$D/many.yaml'],
    exit: 1,
    stderr: [
      '$D/many.yaml: document 1: apiVersion (line 1): expected pingcap.com/v1alpha1, got "pingcap.com/v1"',
      '$D/many.yaml: document 1: spec.pd.requests.storage (line 9): expected a Kubernetes quantity such as 10Gi or 500m, got "lots"',
      '$D/many.yaml: document 1: spec.tikv.replicas (line 11): expected an integer, got "three"',
      '$D/many.yaml: document 1: metadata.name (line 4): invalid name "Many_Errors"',
    ],
    problems: 4,
  },
  {
    name: 'errors from two files and two documents are all reported (with -o)',
    files: {
      'one.yaml': DEMO.replace('replicas: 3', 'replicas: "three"'),
      'other.yaml': `${DEMO.replace('name: demo', 'name: ok')}---\n${DEMO.replace('name: demo', 'name: other').replace('pingcap.com/v1alpha1', 'v1')}`,
    },
    args: ['render', '$D/one.yaml', '$D/other.yaml'],
    out: true,
    exit: 1,
    stderr: [
      '$D/one.yaml: document 1: spec.tikv.replicas (line 9): expected an integer, got "three"',
      '$D/other.yaml: document 2: apiVersion (line 13): expected pingcap.com/v1alpha1, got "v1"',
    ],
    problems: 2,
  },
  {
    name: 'bad input on stdin',
    args: ['render', '-'],
    stdin: DEMO.replace('replicas: 3', 'replicas: "three"'),
    exit: 1,
    stderr: ['<stdin>: document 1: spec.tikv.replicas (line 9): expected an integer, got "three"'],
    problems: 1,
  },

  // ---- a good file together with a bad one -------------------------------------------------------
  {
    name: 'a good file and a bad file: nothing rendered',
    files: { 'good.yaml': DEMO, 'bad.yaml': DEMO.replace('name: demo', 'name: bad').replace('replicas: 3', 'replicas: -1') },
    args: ['render', '$D/good.yaml', '$D/bad.yaml'],
    exit: 1,
    stderr: ['$D/bad.yaml: document 1: spec.tikv.replicas (line 9): must be at least 0, got -1'],
    notStderr: ['good.yaml'],
    problems: 1,
  },
  {
    name: 'a good file and a bad file with -o: nothing written, a file already there is untouched',
    files: { 'good.yaml': DEMO, 'bad.yaml': DEMO.replace('name: demo', 'name: bad').replace('replicas: 3', 'replicas: "three"') },
    keep: { 'out/demo.k8s.yaml': '# an older render, kept as it is\n' },
    args: ['render', '$D/good.yaml', '$D/bad.yaml'],
    out: true,
    exit: 1,
    stderr: ['$D/bad.yaml: document 1: spec.tikv.replicas (line 9): expected an integer, got "three"'],
    problems: 1,
  },

  // ---- output failures ---------------------------------------------------------------------------
  {
    name: '-o under a regular file: nothing written',
    files: { 'good.yaml': DEMO },
    keep: { file: 'a regular file, not a directory\n' },
    args: ['render', '$D/good.yaml', '-o', '$D/file/out'],
    exit: 1,
    stderr: ['$D/file/out: cannot create the output directory: a part of the path is not a directory\nnothing was written\n'],
    notStderr: ['wrote', 'problem'],
  },

  // ---- usage errors ------------------------------------------------------------------------------
  {
    name: 'usage: render without PATH',
    args: ['render'],
    exit: 2,
    stderr: [
      "tidb-gitops: render needs at least one PATH (a file, a directory, or - for stdin)\nRun 'tidb-gitops render --help' for usage.\n",
    ],
  },
  {
    name: 'usage: unknown option',
    files: { 'good.yaml': DEMO },
    args: ['render', '--frobnicate', '$D/good.yaml'],
    exit: 2,
    stderr: ['tidb-gitops: unknown option "--frobnicate"\n', "Run 'tidb-gitops render --help' for usage."],
  },
  {
    name: 'usage: unknown command',
    files: { 'good.yaml': DEMO },
    args: ['rendr', '$D/good.yaml'],
    exit: 2,
    stderr: ['tidb-gitops: unknown command "rendr"; did you mean render?\n', "Run 'tidb-gitops --help' for usage."],
  },
  {
    name: 'usage: -o without a directory',
    files: { 'good.yaml': DEMO },
    args: ['render', '$D/good.yaml', '-o'],
    exit: 2,
    stderr: ['tidb-gitops: -o needs a directory\n'],
  },
  {
    name: 'usage: no command at all',
    args: [],
    exit: 2,
    stderr: ['Usage: tidb-gitops <command> [options]'],
  },
];

// ---------------------------------------------------------------------------------------------------

let TMP = '';

beforeAll(() => {
  if (!existsSync(BUNDLE)) {
    throw new Error(`${BUNDLE} is missing: these tests run the built CLI; run \`npm run build\` first (\`npm test\` does).`);
  }
  TMP = mkdtempSync(join(tmpdir(), 'tidb-gitops-bad-'));
});

afterAll(() => {
  if (TMP) rmSync(TMP, { recursive: true, force: true });
});

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function runCli(args: readonly string[], stdin = ''): Run {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, input: stdin, encoding: 'utf8', timeout: 30_000 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Every file under dir, relative, sorted (hidden and temporary files included); [] when dir is absent. */
function listFiles(dir: string, prefix = ''): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) out.push(...listFiles(join(dir, e.name), join(prefix, e.name)));
    else out.push(join(prefix, e.name));
  }
  return out.sort();
}

function writeTree(root: string, files: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(files)) {
    const full = join(root, rel);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
}

function problemLine(n: number): string {
  return `${n} ${n === 1 ? 'problem' : 'problems'} found; nothing was rendered`;
}

test('the case table is big enough and every case name is unique', () => {
  expect(CASES.length).toBeGreaterThanOrEqual(24);
  expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
});

test.each(CASES.map((c, i) => [c.name, i, c] as const))('%s', (_name, index, c) => {
  const D = join(TMP, `case-${String(index).padStart(2, '0')}`);
  mkdirSync(D, { recursive: true });
  const sub = (s: string) => s.split('$D').join(D);
  writeTree(D, c.files ?? {});
  writeTree(D, c.keep ?? {});
  const outDir = join(D, 'out');
  const args = [...c.args.map(sub), ...(c.out ? ['-o', outDir] : [])];

  const r = runCli(args, c.stdin);

  const context = `$ node bin/tidb-gitops.js ${args.join(' ')}\n--- stderr ---\n${r.stderr}--- stdout ---\n${r.stdout}`;
  expect({ exit: r.status, context }).toEqual({ exit: c.exit, context });
  expect(r.stdout).toBe('');
  for (const fragment of c.stderr) expect(r.stderr).toContain(sub(fragment));
  for (const fragment of c.notStderr ?? []) expect(r.stderr).not.toContain(sub(fragment));
  if (c.problems !== undefined) {
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[lines.length - 1]).toBe(problemLine(c.problems));
    // One line per problem: every error line names a file (skip notes are not problems).
    const errorLines = lines.slice(0, -1).filter((l) => !/: skipped .*: not a TidbCluster$/.test(l));
    expect(errorLines).toHaveLength(c.problems);
  }
  // Nothing written anywhere in the case dir except the inputs and the files kept on purpose.
  const expected = [...Object.keys(c.files ?? {}), ...Object.keys(c.keep ?? {})].map((f) => join(f)).sort();
  expect(listFiles(D)).toEqual(expected);
  for (const [rel, content] of Object.entries(c.keep ?? {})) expect(readFileSync(join(D, rel)).equals(Buffer.from(content))).toBe(true);
  if (c.out)
    expect(listFiles(outDir)).toEqual(
      Object.keys(c.keep ?? {})
        .filter((k) => k.startsWith('out/'))
        .map((k) => k.slice(4)),
    );
});

// ---------------------------------------------------------------------------------------------------
// The same inputs where they are good: proves the cases above fail for the reason they claim.

describe('controls', () => {
  test('anchors, aliases and merge keys within the bound still render', () => {
    const D = join(TMP, 'control-anchors');
    const text = DEMO.replace('  pd:\n    replicas: 1\n', '  pd: &pod\n    replicas: 1\n').replace(
      '  tidb:\n    replicas: 1\n',
      '  tidb:\n    <<: *pod\n',
    );
    expect(text).toContain('<<: *pod');
    writeTree(D, { 'demo.yaml': text });
    const r = runCli(['render', join(D, 'demo.yaml')]);
    expect(r.stderr).toBe(imageNote('demo'));
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('name: demo-tidb');
  });

  test('DEMO renders (exit 0, manifests on stdout, stderr empty)', () => {
    const D = join(TMP, 'control-demo');
    writeTree(D, { 'demo.yaml': DEMO });
    const r = runCli(['render', join(D, 'demo.yaml')]);
    expect(r.stderr).toBe(imageNote('demo'));
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('kind: StatefulSet');
  });

  test('a cluster without PD renders (the operator takes it too) with a warning naming where PD must answer', () => {
    const D = join(TMP, 'control-nopd');
    writeTree(D, {
      'nopd.yaml': y`
        apiVersion: pingcap.com/v1alpha1
        kind: TidbCluster
        metadata:
          name: demo
        spec:
          tikv:
            replicas: 3
          tidb:
            replicas: 1
      `,
    });
    const r = runCli(['render', join(D, 'nopd.yaml')]);
    expect(r.stderr).toBe(
      `${join(D, 'nopd.yaml')}: document 1: warning: spec.pd is not set, so the components look for PD at demo-pd:2379; set spec.pd, or spec.cluster to join another TidbCluster's PD\n` +
        imageNote('demo'),
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('name: demo-tikv');
    expect(r.stdout).not.toContain('name: demo-pd');
  });

  test('startScriptVersion v2 passes with -n ns', () => {
    const D = join(TMP, 'control-v2');
    writeTree(D, { 'v2.yaml': DEMO.replace('spec:\n', 'spec:\n  startScriptVersion: v2\n') });
    const r = runCli(['render', join(D, 'v2.yaml'), '-n', 'ns']);
    expect(r.stderr).toBe(imageNote('demo'));
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('namespace: ns');
  });
});

// ---------------------------------------------------------------------------------------------------
// Bugs found by this suite and fixed; kept so they stay fixed.

describe('fixed CLI bugs (regressions)', () => {
  test('an empty document (a trailing `---`) is skipped, not an error', () => {
    const D = join(TMP, 'bug-trailing');
    writeTree(D, { 'demo.yaml': `${DEMO}---\n` });
    const r = runCli(['render', join(D, 'demo.yaml')]);
    // Today: "demo.yaml: document 2: (document) (line 12): expected a mapping (a Kubernetes object)", exit 1.
    expect(r.stderr).toBe(imageNote('demo'));
    expect(r.status).toBe(0);
  });

  test('YAML aliases are resolved', () => {
    const D = join(TMP, 'bug-alias');
    writeTree(D, {
      'alias.yaml': y`
        apiVersion: pingcap.com/v1alpha1
        kind: TidbCluster
        metadata:
          name: demo
        spec:
          pd:
            replicas: 1
            requests: &storage
              storage: 1Gi
          tikv:
            replicas: 3
            requests: *storage
      `,
    });
    const r = runCli(['render', join(D, 'alias.yaml')]);
    // Today: "spec.tikv.requests (line 12): expected a mapping, got a value of type object", exit 1.
    expect(r.stderr).toBe(imageNote('demo'));
    expect(r.status).toBe(0);
  });

  test('one invalid TOML string counts as one problem', () => {
    const D = join(TMP, 'bug-toml-count');
    writeTree(D, { 'toml.yaml': DEMO.replace('replicas: 3\n', 'replicas: 3\n    config: |\n      this is not toml\n') });
    const r = runCli(['render', join(D, 'toml.yaml')]);
    // Today the TOML error's snippet and caret lines are printed too and counted: "3 problems found".
    expect(r.stderr).toMatch(/invalid TOML/);
    expect(r.stderr.trimEnd().split('\n')).toEqual([expect.stringContaining('spec.tikv.config (line 10): invalid TOML'), problemLine(1)]);
  });

  test('-o is all-or-nothing when a rename fails (a directory sits where a file goes)', () => {
    const D = join(TMP, 'bug-rename');
    writeTree(D, { 'demo.yaml': DEMO, 'zeta.yaml': DEMO.replace('name: demo', 'name: zeta') });
    mkdirSync(join(D, 'out', 'zeta.k8s.yaml'), { recursive: true });
    const r = runCli(['render', join(D, 'demo.yaml'), join(D, 'zeta.yaml'), '-o', join(D, 'out')]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('nothing was written');
    // Today: out/demo.k8s.yaml IS written and out/.zeta.k8s.yaml.<pid>.tmp is left behind.
    expect(listFiles(join(D, 'out'))).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------
// Paths that are no regular file: read nothing that never ends, and call nothing unreadable "empty".

describe('inputs that are no regular file', () => {
  const dir = (name: string) => {
    const D = join(TMP, `special-${name}`);
    mkdirSync(D, { recursive: true });
    writeFileSync(join(D, 'demo.yaml'), DEMO);
    return D;
  };

  test.each([
    [
      'a symlink to /dev/zero',
      (D: string) => symlinkSync('/dev/zero', join(D, 'zero.yaml')),
      'zero.yaml: is a device, not a regular file; only files are read',
    ],
    [
      'a named pipe',
      (D: string) => execFileSync('mkfifo', [join(D, 'pipe.yaml')]),
      'pipe.yaml: is a named pipe (FIFO), not a regular file; only files are read',
    ],
    ['a dangling symlink', (D: string) => symlinkSync(join(D, 'gone'), join(D, 'gone.yaml')), 'gone.yaml: no such file or directory'],
    [
      'a file over 8 MiB',
      (D: string) => writeFileSync(join(D, 'big.yaml'), Buffer.alloc(8 * 1024 * 1024 + 1, 'a')),
      'big.yaml: is over 8 MiB; input files are limited to 8.0 MiB',
    ],
  ])('render refuses %s in a directory, naming it, and writes nothing', (name, make, message) => {
    const D = dir(name.replace(/\W+/g, '-'));
    make(D);
    const r = runCli(['render', D, '-o', join(D, 'out')]);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`${join(D, message.split(':')[0])}:${message.slice(message.indexOf(':') + 1)}`);
    expect(existsSync(join(D, 'out'))).toBe(false);
  });

  test('diff calls a tree with a dangling symlink an error, not "every cluster removed" (also with --exit-code)', () => {
    const D = dir('diff-dangling');
    symlinkSync(join(D, 'gone'), join(D, 'gone.yaml'));
    for (const extra of [[], ['--exit-code']]) {
      const r = runCli(['diff', ...extra, join(ROOT, 'examples/basic'), D]);
      expect(r.status).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`${join(D, 'gone.yaml')}: no such file or directory`);
    }
  });
});

describe('symlinked directories and standard input', () => {
  const tree = (name: string) => {
    const D = join(TMP, `links-${name}`);
    mkdirSync(join(D, 'clusters', 'a'), { recursive: true });
    mkdirSync(join(D, 'elsewhere'), { recursive: true });
    writeFileSync(join(D, 'clusters', 'a', 'demo.yaml'), DEMO);
    writeFileSync(join(D, 'elsewhere', 'other.yaml'), DEMO.replace('name: demo', 'name: other'));
    return D;
  };
  const names = (yaml: string) => [...new Set([...yaml.matchAll(/app\.kubernetes\.io\/instance: (\S+)/g)].map((m) => m[1]))].sort();

  test('a symlinked directory is read, not skipped (its clusters would be pruned)', () => {
    const D = tree('followed');
    symlinkSync(join(D, 'elsewhere'), join(D, 'clusters', 'b'));
    const r = runCli(['render', join(D, 'clusters')]);
    expect(r.stderr).not.toContain('error');
    expect(r.status).toBe(0);
    expect(names(r.stdout)).toEqual(['demo', 'other']);
  });

  test('a directory reached through two links is read once', () => {
    const D = tree('twice');
    symlinkSync(join(D, 'elsewhere'), join(D, 'clusters', 'b'));
    symlinkSync(join(D, 'elsewhere'), join(D, 'clusters', 'c'));
    const r = runCli(['render', join(D, 'clusters')]);
    expect(r.status).toBe(0);
    expect(names(r.stdout)).toEqual(['demo', 'other']);
  });

  test('a symlink back to a directory being read is an error naming it, and nothing is written', () => {
    const D = tree('loop');
    symlinkSync(join(D, 'clusters'), join(D, 'clusters', 'a', 'up'));
    const r = runCli(['render', join(D, 'clusters'), '-o', join(D, 'out')]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      `${join(D, 'clusters', 'a', 'up')}: a symlink to ${realpathSync(join(D, 'clusters'))}, which holds it: following it would never end`,
    );
    expect(existsSync(join(D, 'out'))).toBe(false);
  });

  test('standard input is limited to 8 MiB like a file', () => {
    const r = runCli(['render', '-'], `${DEMO}#${'x'.repeat(8 * 1024 * 1024)}\n`);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('<stdin>: is over 8 MiB; input files are limited to 8.0 MiB');
  });
});

describe('an internal error', () => {
  const { guarded } = require('../../../src/cli/main') as typeof import('../../../src/cli/main');
  const capture = (debug: boolean) => {
    let err = '';
    const code = guarded(
      () => {
        throw new Error('boom\nsecond line');
      },
      { stdout: () => {}, stderr: (s: string) => (err += s), readStdin: () => '' },
      debug,
    );
    return { code, err };
  };

  test('ends as one line naming it a bug, exit 1, with no stack', () => {
    expect(capture(false)).toEqual({
      code: 1,
      err: 'tidb-gitops: internal error: boom\nThis is a bug; please report it with the input that caused it. (--debug shows where it happened)\n',
    });
  });

  test('--debug adds the stack', () => {
    const { code, err } = capture(true);
    expect(code).toBe(1);
    expect(err).toMatch(/^tidb-gitops: internal error: boom\n.*\nError: boom\nsecond line\n    at /s);
  });
});
