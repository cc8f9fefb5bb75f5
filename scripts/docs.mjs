// Writes the generated parts of README.md (between `<!-- generated:NAME -->` markers) from the code:
// the defaults table and the supported-fields list. `npm test` fails when they are out of date.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

export function generatedSections() {
  const { DEFAULTS_TABLE } = require(join(root, 'lib/src/spec/defaults.js'));
  const { SUPPORTED, OFF_VALUES } = require(join(root, 'lib/src/spec/support.js'));
  const defaults = [
    '| field | default | note |',
    '| --- | --- | --- |',
    ...DEFAULTS_TABLE.map((d) => `| \`${d.field}\` | \`${d.value}\` | ${d.note ?? ''} |`),
  ].join('\n');
  const supported = [
    ...Object.entries(SUPPORTED).map(([path, fields]) => `- \`${path}\`: ${[...fields].sort().map((f) => `\`${f}\``).join(', ')}`),
    `- accepted only when off: ${Object.entries(OFF_VALUES).map(([path, values]) => `\`${path}\` (${values.map((v) => `\`${JSON.stringify(v)}\``).join(' or ')})`).join(', ')}`,
  ].join('\n');
  return { defaults, supported };
}

export function applySections(readme, sections) {
  let out = readme;
  for (const [name, body] of Object.entries(sections)) {
    const re = new RegExp(`(<!-- generated:${name} -->)[\\s\\S]*?(<!-- /generated:${name} -->)`);
    if (!re.test(out)) throw new Error(`README.md has no <!-- generated:${name} --> section`);
    out = out.replace(re, (_m, open, close) => `${open}\n${body}\n${close}`);
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const path = join(root, 'README.md');
  const current = readFileSync(path, 'utf8');
  const wanted = applySections(current, generatedSections());
  if (process.argv.includes('--check')) {
    if (wanted !== current) {
      console.error('README.md generated sections are stale: run `npm run docs`');
      process.exit(1);
    }
  } else {
    writeFileSync(path, wanted);
    console.log('README.md generated sections updated');
  }
}
