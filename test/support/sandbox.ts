/**
 * A sandbox that runs start scripts under dash (or bash --posix) against stub commands, so the tests
 * check what a script does, not only its text.
 *
 * Each run works on a copy of the script whose absolute paths (the annotations file, data dirs, server
 * binaries) point into a fresh temp dir; stubs for wget, curl, nslookup, dig, getent, hostname, sleep
 * and tail come first on PATH and log their calls. Fake servers write their argv, one argument per line.
 */
import { spawnSync } from 'child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { NO_FEATURE_FLAGS, type ScriptContext } from '../../src/render/scripts';

const STUB_PRELUDE = `#!/bin/sh
name=\${0##*/}
{ printf '%s' "$name"; for a in "$@"; do printf ' %s' "$a"; done; echo; } >>"$STUB_LOG"
# Fails the first N calls of this stub, N read from the variable named $1 ("always": every call).
fail_first() {
    eval "limit=\\\${$1:-0}"
    n=$(cat "$STUB_DIR/$name.count" 2>/dev/null || echo 0)
    n=$((n + 1))
    echo "$n" >"$STUB_DIR/$name.count"
    if [ "$limit" = always ] || [ "$n" -le "$limit" ]; then exit 1; fi
}
`;

const STUBS: Record<string, string> = {
  wget: 'fail_first DISCOVERY_FAILS\nprintf \'%s\\n\' "$DISCOVERY_ANSWER"',
  curl: 'fail_first DISCOVERY_FAILS\nprintf \'%s\\n\' "$DISCOVERY_ANSWER"',
  nslookup: 'fail_first NSLOOKUP_FAILS\necho "Name: $1"\necho "Address: 10.0.0.5"',
  dig: 'fail_first DIG_FAILS\nif [ -n "$DIG_ANSWER" ]; then printf \'%s\\n\' "$DIG_ANSWER"; fi',
  getent: [
    'fail_first GETENT_FAILS',
    '[ -n "$GETENT_IPS" ] || exit 2',
    'for ip in $GETENT_IPS; do',
    '    printf \'%s       STREAM %s\\n%s       DGRAM\\n%s       RAW\\n\' "$ip" "$2" "$ip" "$ip"',
    'done',
  ].join('\n'),
  hostname: 'if [ "${1:-}" = -I ]; then echo "$HOST_IPS "; else echo stub-host; fi',
  sleep: ':',
  tail: ':',
};

/** Stub behaviour unless a test says otherwise: every lookup and discovery call succeeds. */
export const STUB_DEFAULTS: Record<string, string> = {
  DISCOVERY_FAILS: '0',
  DISCOVERY_ANSWER: '',
  NSLOOKUP_FAILS: '0',
  DIG_FAILS: '0',
  DIG_ANSWER: '10.0.0.5',
  GETENT_FAILS: '0',
  GETENT_IPS: '10.0.0.5',
  HOST_IPS: '10.0.0.5 fd00::5',
};

/** A server binary the script execs: `/pd-server`, `/tiflash/tiflash`, `/cdc`... replaced by an argv-writing stub. */
const SERVER_STUB = 'printf \'%s\\n\' "$@" >"$ARGV_FILE"';

export interface RunOptions {
  /** The pod environment (operator-set env of the StatefulSet). */
  env?: Record<string, string>;
  /** Annotations file content; `null` = no file. @default prometheus annotations */
  annotations?: string | null;
  /** Files to create, relative to the sandbox root (e.g. `var/lib/pd/join`). */
  files?: Record<string, string>;
  dirs?: string[];
  shell?: 'dash' | 'bash';
}

export interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
  /** The server's argv, or undefined when it was not started. Sandbox paths are mapped back. */
  argv: string[] | undefined;
  /** Stub calls, `name arg arg ...`. */
  calls: string[];
  /** The script copy that ran. */
  script: string;
}

export const ANNOTATIONS_NORMAL = 'prometheus.io/path="/metrics"\nprometheus.io/port="2379"\nprometheus.io/scrape="true"\n';

export interface SandboxOptions {
  /** Absolute directories the scripts read or write (moved into each run's root). */
  readonly dirs: readonly string[];
  /** Absolute paths of the server binaries the scripts start (replaced by stubs). */
  readonly servers: readonly string[];
}

export class ScriptSandbox {
  private root = '';
  private binDir = '';
  private runCount = 0;

  constructor(private readonly options: SandboxOptions) {}

  /** Call from beforeAll. */
  setup(): void {
    this.root = mkdtempSync(join(tmpdir(), 'start-scripts-'));
    this.binDir = join(this.root, 'bin');
    mkdirSync(this.binDir);
    const stubs: Record<string, string> = { ...STUBS };
    for (const server of this.options.servers) stubs[server.split('/').pop()!] = SERVER_STUB;
    for (const [name, body] of Object.entries(stubs)) {
      const file = join(this.binDir, name);
      writeFileSync(file, `${STUB_PRELUDE}${body}\n`);
      chmodSync(file, 0o755);
    }
  }

  /** Call from afterAll. */
  cleanup(): void {
    rmSync(this.root, { recursive: true, force: true });
  }

  /** The script with its absolute paths moved into `root` (and the servers replaced by stubs). */
  private copy(script: string, root: string): string {
    let out = script.replace(/\/etc\/podinfo\/annotations/g, `${root}/podinfo/annotations`);
    for (const dir of this.options.dirs) {
      out = out.replace(new RegExp(`${escape(dir)}(?![\\w-])`, 'g'), `${root}${dir}`);
    }
    for (const server of this.options.servers) {
      const stub = `${this.binDir}/${server.split('/').pop()}`;
      out = out.replace(new RegExp(`(^|[\\s"(])${escape(server)}(?=[\\s")]|$)`, 'gm'), `$1${stub}`);
    }
    return out;
  }

  run(script: string, opts: RunOptions = {}): RunResult {
    const root = join(this.root, `run-${++this.runCount}`);
    const state = join(root, 'state');
    mkdirSync(join(root, 'podinfo'), { recursive: true });
    mkdirSync(state);
    if (opts.annotations !== null) {
      writeFileSync(join(root, 'podinfo/annotations'), opts.annotations ?? ANNOTATIONS_NORMAL);
    }
    for (const d of opts.dirs ?? []) mkdirSync(join(root, d), { recursive: true });
    for (const [f, content] of Object.entries(opts.files ?? {})) {
      mkdirSync(join(root, f, '..'), { recursive: true });
      writeFileSync(join(root, f), content);
    }
    const copy = this.copy(script, root);
    const file = join(root, 'start.sh');
    writeFileSync(file, copy);
    const argvFile = join(state, 'argv');
    const log = join(state, 'calls');
    const env = {
      PATH: `${this.binDir}:/usr/bin:/bin`,
      STUB_LOG: log,
      STUB_DIR: state,
      ARGV_FILE: argvFile,
      ...STUB_DEFAULTS,
      ...opts.env,
    };
    const args = opts.shell === 'bash' ? ['--posix', file] : [file];
    const res = spawnSync(opts.shell === 'bash' ? 'bash' : '/usr/bin/dash', args, { env, encoding: 'utf8', timeout: 10_000 });
    const unmap = (s: string) => s.split(root).join('');
    return {
      status: res.status,
      stdout: res.stdout,
      stderr: res.stderr,
      argv: existsSync(argvFile) ? unmap(readFileSync(argvFile, 'utf8')).split('\n').slice(0, -1) : undefined,
      calls: existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [],
      script: copy,
    };
  }

  /** Runs and insists the server started, for tests that look at its argv. */
  argvOf(script: string, opts: RunOptions = {}): string[] {
    const r = this.run(script, opts);
    if (r.status !== 0 || !r.argv) throw new Error(`script failed (status ${r.status}):\n${r.stdout}\n${r.stderr}`);
    return r.argv;
  }
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export const callsOf = (r: RunResult, name: string) => r.calls.filter((c) => c.split(' ')[0] === name);
export const lastWord = (call: string) => call.split(' ').pop() as string;
export const decodeTail = (url: string) => Buffer.from(url.split('/').pop() as string, 'base64').toString('utf8');

/** The script context of cluster `demo` in namespace `ns` with every switch off; tests override fields. */
export const BASE_CONTEXT: ScriptContext = {
  clusterName: 'demo',
  namespace: 'ns',
  clusterDomain: '',
  scheme: 'http',
  acrossK8s: false,
  version: 'v1',
  featureFlags: NO_FEATURE_FLAGS,
  pdAddresses: [],
  discoveryMtls: false,
  preferIPv6: false,
};

const HAS_SHELLCHECK = spawnSync('shellcheck', ['--version']).status === 0;

/** The script parses under `dash -n` and, when shellcheck is installed (CI installs it), passes `shellcheck -s sh`. */
export function expectShellLintClean(script: string): void {
  const dash = spawnSync('/usr/bin/dash', ['-n'], { input: script, encoding: 'utf8', timeout: 5000 });
  expect(dash.stderr).toBe('');
  expect(dash.status).toBe(0);
  if (HAS_SHELLCHECK) {
    const sc = spawnSync('shellcheck', ['-s', 'sh', '-'], { input: script, encoding: 'utf8', timeout: 20_000 });
    expect(sc.stdout).toBe('');
    expect(sc.status).toBe(0);
  }
}
