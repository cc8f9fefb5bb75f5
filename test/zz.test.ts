import { readYaml } from '../src/base/yaml/read';
test('x', () => {
  const d = readYaml('base: &b {x: 1, y: 1}\nother: &o {y: 2, z: 2}\nm:\n  x: 0\n  <<: [*b, *o]\n  z: 3\n')[0];
  console.log(JSON.stringify([d.syntax, d.issues, d.notes, d.value]));
  const text = `base: &b {x: 1}\nlist:\n${Array.from({ length: 10 }, (_, i) => `  - &a${i} {y: ${i}}`).join('\n')}\nrefs:\n${Array.from({ length: 10 }, (_, i) => `  - *a${i}`).join('\n')}\n`;
  const e = readYaml(text)[0];
  console.log(JSON.stringify([e.syntax, e.issues, e.notes]));
});
