/**
 * Reads a YAML stream the way kubectl does (its own YAML reader, no server): `kubectl label --local`
 * parses every document and prints it as JSON. A test label is added to make kubectl print at all and
 * removed again, so the result is what kubectl understood the text to be.
 */
import { execFileSync } from 'child_process';

const LABEL = 'readback.tidb-gitops.test/x';

/** The objects of `yaml` as kubectl reads them; throws with kubectl's message when it cannot. */
export function kubectlRead(yaml: string): Record<string, unknown>[] {
  const out = execFileSync('kubectl', ['label', '--local', '-f', '-', `${LABEL}=1`, '-o', 'json'], {
    input: yaml,
    encoding: 'utf8',
    maxBuffer: 512 * 1024 * 1024,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  // One pretty-printed JSON object per document, each starting with "{" at the start of a line.
  const docs = out.split(/\n(?=\{\n)/).filter((d) => d.trim() !== '');
  return docs.map((d) => {
    const o = JSON.parse(d) as Record<string, unknown>;
    const meta = o.metadata as { labels?: Record<string, string> };
    delete meta.labels![LABEL];
    if (Object.keys(meta.labels!).length === 0) delete meta.labels;
    return o;
  });
}
