/**
 * No file in the repository is a copy of another project's file (DESIGN.md, "Upstream material"): the
 * tests read those where they live (scripts/lib/upstream.js). Checked against every such file the project
 * reads, byte for byte, gzipped copies unpacked.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { kubeDefinitionsFile, kubeMinors, prometheusOperatorCrdFile, REPO_ROOT, sharedPath } from '../../scripts/lib/upstream';

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/** Every file under `dir`, recursively. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile());

/** The other projects' files the project reads, by the hash of their contents. */
function upstreamFiles(): Map<string, string> {
  const files = [
    // What ../shared holds of other projects; its README.md and VERSION files are the project's own notes.
    ...['schemas', 'examples', 'argocd'].flatMap((d) => filesUnder(sharedPath(d))).filter((f) => !/\/(README\.md|VERSION)$/.test(f)),
    kubeDefinitionsFile(Math.max(...kubeMinors())),
    ...filesUnder(dirname(prometheusOperatorCrdFile('podmonitors'))),
  ];
  return new Map(files.map((f) => [sha256(readFileSync(f)), f]));
}

/** The repository's files, committed or not (what .gitignore leaves out aside). */
function repositoryFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return out
    .split('\0')
    .filter(Boolean)
    .map((f) => join(REPO_ROOT, f))
    .filter((f) => existsSync(f) && statSync(f).isFile());
}

test("no file in the repository is a copy of another project's file", () => {
  const upstream = upstreamFiles();
  expect(upstream.size).toBeGreaterThan(20);
  const copies: string[] = [];
  for (const file of repositoryFiles()) {
    const data = readFileSync(file);
    const contents = file.endsWith('.gz') ? [data, gunzipSync(data)] : [data];
    for (const hash of contents.map(sha256)) {
      const original = upstream.get(hash);
      if (original) copies.push(`${relative(REPO_ROOT, file)} is a copy of ${original}: read it from there (scripts/lib/upstream.js)`);
    }
  }
  expect(copies).toEqual([]);
});
