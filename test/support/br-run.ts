/**
 * Runs a BR Job's container as a kubelet would, on this machine: its environment resolved (values,
 * the downward API's namespace and Job name label, Secret keys), `$(VAR)` expanded in its arguments,
 * its script under `sh`, with the BR simulator (test/sim/br.mjs) as the image's `/br` and a file as
 * its `/dev/termination-log`. Asynchronous: the S3 server it talks to may answer from this process.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

type Obj = Record<string, any>;

export const BR_SIM = join(__dirname, '..', 'sim', 'br.mjs');

export interface BrRunContext {
  readonly namespace: string;
  /** The Job the Pod belongs to (its `batch.kubernetes.io/job-name` label). */
  readonly jobName: string;
  /** The Pod's other labels, which the downward API reads (the Job controller's `batch.kubernetes.io/controller-uid`). @default none */
  readonly labels?: Readonly<Record<string, string>>;
  /** Secrets by name, their keys' values. */
  readonly secrets: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** The TiKV version BR finds in the cluster. @default v8.5.7 */
  readonly tikvVersion?: string;
  /** A command run in place of the image's `/br` (given BR's arguments). @default the BR simulator */
  readonly br?: string;
  /** Where the cluster's PD is reached (`host:port`), whatever `--pd` names: the tests' name resolution. @default none */
  readonly pd?: string;
}

export interface BrRunResult {
  readonly status: number | null;
  readonly output: string;
  /** The termination message, parsed ({} when there is none or it is not JSON). */
  readonly message: Obj;
  /** The termination message as written. */
  readonly text: string;
}

export async function runBrContainer(container: Obj, ctx: BrRunContext): Promise<BrRunResult> {
  const env: Record<string, string> = {};
  for (const e of (container.env ?? []) as Obj[]) {
    if (e.value !== undefined) env[e.name] = e.value;
    else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace') env[e.name] = ctx.namespace;
    else if (e.valueFrom?.fieldRef?.fieldPath === "metadata.labels['batch.kubernetes.io/job-name']") env[e.name] = ctx.jobName;
    else if (/^metadata\.labels\['[^']+'\]$/.test(e.valueFrom?.fieldRef?.fieldPath ?? '')) {
      // The kubelet gives an empty value for a label the Pod does not have.
      env[e.name] = ctx.labels?.[e.valueFrom.fieldRef.fieldPath.slice("metadata.labels['".length, -2)] ?? '';
    } else if (e.valueFrom?.secretKeyRef) {
      const value = ctx.secrets[e.valueFrom.secretKeyRef.name]?.[e.valueFrom.secretKeyRef.key];
      // A missing Secret or key keeps the container from starting (CreateContainerConfigError).
      if (value === undefined)
        return {
          status: null,
          output: `secret ${e.valueFrom.secretKeyRef.name} has no key ${e.valueFrom.secretKeyRef.key}`,
          message: {},
          text: '',
        };
      env[e.name] = value;
    } else throw new Error(`no value for ${e.name}`);
  }
  // The kubelet expands $(VAR) in arguments from the container's environment.
  const args = ((container.args ?? []) as string[]).map((a) => a.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, v) => env[v] ?? m));
  const dir = mkdtempSync(join(tmpdir(), 'br-run-'));
  const termination = join(dir, 'termination-log');
  const [sh, dashC, script, name] = container.command as string[];
  // The image's /br and the kubelet's /dev/termination-log, each named exactly where the script says.
  if (script.split('/br "$@"').length !== 2) throw new Error('the script does not run /br "$@" exactly once');
  const local = script.replace('/br "$@"', `${ctx.br ?? `node ${BR_SIM}`} "$@"`).replaceAll('/dev/termination-log', termination);
  try {
    const r = await new Promise<{ status: number | null; output: string }>((resolve) => {
      const child = spawn(sh, [dashC, local, name, ...args], {
        env: { PATH: process.env.PATH!, ...env, BR_SIM_TIKV_VERSION: ctx.tikvVersion ?? 'v8.5.7', ...(ctx.pd && { BR_SIM_PD: ctx.pd }) },
      });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      child.on('close', (status) => resolve({ status, output }));
    });
    let text = '';
    try {
      text = readFileSync(termination, 'utf8');
    } catch {
      // no message written
    }
    let message: Obj = {};
    try {
      message = JSON.parse(text);
    } catch {
      // not JSON: the test says what it expected
    }
    return { ...r, message, text };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
