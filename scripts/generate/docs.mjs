// Writes the generated parts of docs/reference.md (between `<!-- generated:NAME -->` markers) from the code:
// the defaults table and the supported-fields list. `npm test` fails when they are out of date.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(import.meta.url);

const COMPONENT_MODULES = ['tiflash', 'ticdc', 'pump', 'tiproxy', 'discovery'];

export function generatedSections() {
  const { DEFAULTS_TABLE } = require(join(root, 'lib/src/tidbcluster/defaults.js'));
  const { SUPPORTED, OFF_VALUES } = require(join(root, 'lib/src/tidbcluster/support.js'));
  // Each component module keeps its own defaults next to its resolver.
  const componentDefaults = COMPONENT_MODULES.flatMap((c) => {
    const mod = require(join(root, `lib/src/tidbcluster/${c}.js`));
    return Object.entries(mod)
      .filter(([k]) => k.endsWith('_DEFAULTS_TABLE'))
      .flatMap(([, table]) => table);
  });
  const defaults = [
    '| field | default | note |',
    '| --- | --- | --- |',
    ...[...DEFAULTS_TABLE, ...componentDefaults].map((d) => `| \`${d.field}\` | \`${d.value}\` | ${d.note ?? ''} |`),
  ].join('\n');
  const refused = refusedFields(SUPPORTED, OFF_VALUES);
  const supported = [
    // A field taken only when off is listed once, below, with the values it takes.
    ...Object.entries(SUPPORTED).map(
      ([path, fields]) =>
        `- \`${path}\`: ${[...fields]
          .filter((f) => !(`${path}.${f}` in OFF_VALUES))
          .sort()
          .map((f) => `\`${f}\``)
          .join(', ')}`,
    ),
    `- accepted only when off: ${Object.entries(OFF_VALUES)
      .filter(([, values]) => values.length > 0)
      .map(([path, values]) => `\`${path}\` (${values.map((v) => `\`${JSON.stringify(v)}\``).join(' or ')})`)
      .join(', ')}`,
  ].join('\n');
  return { defaults, supported, refused };
}

/** CRD fields of `spec` and of each component that are neither rendered nor accepted when off. */
function refusedFields(SUPPORTED, OFF_VALUES) {
  const { refusalReason } = require(join(root, 'lib/src/tidbcluster/support.js'));
  const schema = JSON.parse(readFileSync(join(root, 'src/tidbcluster/generated/tidbcluster.schema.json'), 'utf8'));
  const node = (i) => schema.nodes[i];
  const specNode = node(node(schema.root).properties.spec);
  const rows = [];
  for (const path of Object.keys(SUPPORTED)) {
    const n =
      path === 'spec'
        ? specNode
        : path === 'spec.pdms[]'
          ? node(node(specNode.properties.pdms).items)
          : node(specNode.properties[path.slice('spec.'.length)]);
    for (const key of Object.keys(n.properties ?? {}).sort()) {
      if (SUPPORTED[path].includes(key) || `${path}.${key}` in OFF_VALUES || key === 'image') continue;
      const reason = refusalReason(`${path}.${key}`);
      rows.push(`- \`${path}.${key}\`${reason ? `: ${reason}` : ''}`);
    }
  }
  // Deeper fields refused outright are declared as having no "off" value.
  for (const [path, values] of Object.entries(OFF_VALUES)) {
    if (values.length === 0) rows.push(`- \`${path}\`${refusalReason(path) ? `: ${refusalReason(path)}` : ''}`);
  }
  return rows.join('\n');
}

export function applySections(readme, sections) {
  let out = readme;
  for (const [name, body] of Object.entries(sections)) {
    const re = new RegExp(`(<!-- generated:${name} -->)[\\s\\S]*?(<!-- /generated:${name} -->)`);
    if (!re.test(out)) throw new Error(`docs/reference.md has no <!-- generated:${name} --> section`);
    out = out.replace(re, (_m, open, close) => `${open}\n${body}\n${close}`);
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const path = join(root, 'docs/reference.md');
  const current = readFileSync(path, 'utf8');
  const wanted = applySections(current, generatedSections());
  if (process.argv.includes('--check')) {
    if (wanted !== current) {
      console.error('docs/reference.md generated sections are stale: run `npm run docs`');
      process.exit(1);
    }
  } else {
    writeFileSync(path, wanted);
    console.log('docs/reference.md generated sections updated');
  }
}
