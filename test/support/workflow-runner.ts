/**
 * Runs the `run:` steps of a GitHub Actions job as the runner does: each with bash -e -o pipefail in
 * the working directory, `${{ }}` expressions filled in from a context (github, env, secrets, needs,
 * matrix, steps), the workflow's, job's and step's `env:`, and GITHUB_OUTPUT, GITHUB_ENV and
 * GITHUB_STEP_SUMMARY files whose lines become step outputs, environment and the summary. `uses:`
 * steps are not run; they are returned with their `with:` filled in, for the test to check. Commands
 * that would publish are replaced by shims that record their arguments (`shims`).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

type Obj = Record<string, any>;

export interface StepResult {
  readonly name: string;
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface JobRun {
  readonly steps: StepResult[];
  /** The `uses:` steps, with `with:` filled in. */
  readonly uses: { uses: string; with: Obj; id?: string }[];
  /** Each shimmed command's calls, as argument lists (with the recorded environment variable values). */
  readonly calls: { command: string; args: string[]; env: Obj }[];
  readonly outputs: Record<string, Record<string, string>>;
  readonly summary: string;
}

export interface RunOptions {
  readonly cwd: string;
  readonly context: Obj;
  /** Commands replaced by recording shims (exit 0), e.g. npm, cosign, gh, sudo. */
  readonly shims: readonly string[];
  /** Environment variables each shim records. */
  readonly recordEnv?: readonly string[];
  /** Outputs of `uses:` steps by id, as the action would set them. */
  readonly actionOutputs?: Record<string, Record<string, string>>;
}

/** Replaces `${{ a.b.c }}` with the value at that path of the context (and `'x'` literals). */
export function fill(text: string, context: Obj): string {
  return text.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_m, expr: string) => {
    const value = expr.split('.').reduce<any>((o, k) => o?.[k], context);
    return value === undefined || value === null ? '' : String(value);
  });
}

const fillAll = (value: unknown, context: Obj): any =>
  typeof value === 'string'
    ? fill(value, context)
    : value && typeof value === 'object'
      ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillAll(v, context)]))
      : value;

export function runJob(workflow: Obj, jobName: string, opts: RunOptions): JobRun {
  const job = workflow.jobs[jobName] as Obj;
  const dir = mkdtempSync(join(tmpdir(), 'tidb-gitops-workflow-'));
  const shimDir = join(dir, 'bin');
  const callsFile = join(dir, 'calls.jsonl');
  mkdirSync(shimDir);
  writeFileSync(callsFile, '');
  const recordEnv = opts.recordEnv ?? [];
  for (const command of opts.shims) {
    const shim = join(shimDir, command);
    writeFileSync(
      shim,
      `#!${process.execPath}\nrequire('fs').appendFileSync(${JSON.stringify(callsFile)}, JSON.stringify({ command: ${JSON.stringify(command)}, args: process.argv.slice(2), env: Object.fromEntries(${JSON.stringify(recordEnv)}.map((k) => [k, process.env[k]])) }) + '\\n');\n`,
    );
    chmodSync(shim, 0o755);
  }
  const context: Obj = { ...opts.context, steps: {}, env: {} };
  const outputs: Record<string, Record<string, string>> = {};
  const steps: StepResult[] = [];
  const uses: JobRun['uses'] = [];
  const summaryFile = join(dir, 'summary.md');
  writeFileSync(summaryFile, '');
  let env: Obj = { ...fillAll(workflow.env ?? {}, context), ...fillAll(job.env ?? {}, context) };
  try {
    for (const step of job.steps as Obj[]) {
      context.env = env;
      if (step.uses) {
        uses.push({ uses: step.uses, with: fillAll(step.with ?? {}, context), id: step.id });
        if (step.id) {
          outputs[step.id] = opts.actionOutputs?.[step.id] ?? {};
          context.steps[step.id] = { outputs: outputs[step.id] };
        }
        continue;
      }
      const outputFile = join(dir, 'output');
      const envFile = join(dir, 'env');
      writeFileSync(outputFile, '');
      writeFileSync(envFile, '');
      const r = spawnSync('bash', ['--noprofile', '--norc', '-e', '-o', 'pipefail', '-c', fill(step.run, context)], {
        cwd: opts.cwd,
        encoding: 'utf8',
        env: {
          PATH: `${shimDir}:${process.env.PATH}`,
          HOME: process.env.HOME,
          GITHUB_OUTPUT: outputFile,
          GITHUB_ENV: envFile,
          GITHUB_STEP_SUMMARY: summaryFile,
          ...env,
          ...fillAll(step.env ?? {}, context),
        },
      });
      steps.push({ name: step.name ?? step.run.split('\n')[0], status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr });
      const lines = (file: string) =>
        Object.fromEntries(
          readFileSync(file, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
        );
      if (step.id) {
        outputs[step.id] = lines(outputFile);
        context.steps[step.id] = { outputs: outputs[step.id] };
      }
      env = { ...env, ...lines(envFile) };
      if (r.status !== 0) break;
    }
    const calls = readFileSync(callsFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    return { steps, uses, calls, outputs, summary: readFileSync(summaryFile, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
