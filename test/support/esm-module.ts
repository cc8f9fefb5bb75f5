/**
 * Runs code against the project's plain ES modules (scripts/) in a child Node: Jest's CommonJS
 * transform cannot import them. The body sees each module under its name and `input`, the JSON given
 * on standard input; what it prints is read back as JSON.
 */
import { spawnSync } from 'node:child_process';

/** Runs `body` with `modules` (name → file) imported and `input` given; returns what it prints, as JSON. */
export function inModules<T>(modules: Readonly<Record<string, string>>, body: string, input: unknown): T {
  const imports = Object.entries(modules)
    .map(([name, file]) => `import * as ${name} from ${JSON.stringify(file)};`)
    .join('\n');
  const script = `import { readFileSync } from 'node:fs';
${imports}
const input = JSON.parse(readFileSync(0, 'utf8'));
${body}`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { input: JSON.stringify(input), encoding: 'utf8' });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout) as T;
}
