/**
 * Rendered output found among the inputs. A repository often holds its inputs (`tidb-clusters/`) and
 * the committed output of `render -o dist` side by side; `render .` (and Argo CD's default path, `.`)
 * then meets the output again. Read as input, every object of it would take the place of the object
 * it was rendered as, so such files are recognised and set apart:
 *
 * - a file holding no document tidb-gitops reads, with a StatefulSet annotated
 *   `tidb-gitops.io/settings` (the controller's instructions, which only the renderer writes), is the
 *   output of a cluster;
 * - beside such a file, the other `*.k8s.yaml` files that hold no document tidb-gitops reads
 *   (`_passthrough.k8s.yaml`) are output too, as `render -o DIR --prune` counts them.
 *
 * Found while walking a directory, they are skipped with one note; named on the command line, they are
 * an error, since the user asked for them to be read.
 */
import { dirname } from 'node:path';
import { ANNOTATION } from '../tidbcluster/names';

/** What {@link renderedOutput} needs of one input file, as read. */
export interface ReadFile {
  readonly file: string;
  /** The user named this file (not found while walking a directory). */
  readonly explicit: boolean;
  /** Documents tidb-gitops reads (TidbClusters and the documents beside them) and problems, counted. */
  readonly read: number;
  /** The other Kubernetes objects of the file. */
  readonly objects: readonly Record<string, unknown>[];
}

export interface RenderedOutput {
  /** Indexes (into the files given) of the files to leave out. */
  readonly skip: ReadonlySet<number>;
  /** One note naming every file skipped. @default none (nothing skipped) */
  readonly note?: string;
  /** One error per file named on the command line that is rendered output. */
  readonly errors: string[];
}

/** The files listed one by one in the note, per directory; more are counted. */
const LISTED = 4;

export function renderedOutput(files: readonly ReadFile[]): RenderedOutput {
  const skip = new Set<number>();
  const errors: string[] = [];
  const dirs = new Set<string>();
  files.forEach((f, i) => {
    if (f.read > 0) return;
    const marked = f.objects.find(isRenderedStatefulSet);
    if (!marked) return;
    skip.add(i);
    if (!f.explicit) {
      dirs.add(dirname(f.file));
      return;
    }
    errors.push(
      `${f.file}: this file is output of tidb-gitops render, not an input (the StatefulSet ${nameOf(marked)} carries the annotation ${ANNOTATION.settings}, ` +
        'which only the renderer writes): name the files or the directory holding the TidbCluster documents instead',
    );
  });
  files.forEach((f, i) => {
    if (!f.explicit && f.read === 0 && f.objects.length > 0 && f.file.endsWith('.k8s.yaml') && dirs.has(dirname(f.file))) skip.add(i);
  });
  const walked = [...skip].sort((a, b) => a - b).filter((i) => !files[i].explicit);
  return { skip, errors, ...(walked.length > 0 && { note: note(walked.map((i) => files[i].file)) }) };
}

/** A StatefulSet carrying the settings the renderer writes for the controller. */
function isRenderedStatefulSet(o: Record<string, unknown>): boolean {
  const annotations = (o.metadata as { annotations?: unknown } | undefined)?.annotations;
  return o.kind === 'StatefulSet' && typeof annotations === 'object' && annotations !== null && ANNOTATION.settings in annotations;
}

function nameOf(o: Record<string, unknown>): string {
  const name = (o.metadata as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' ? name : '(no name)';
}

function note(paths: readonly string[]): string {
  const byDir = new Map<string, string[]>();
  for (const p of paths) byDir.set(dirname(p), [...(byDir.get(dirname(p)) ?? []), p]);
  const parts = [...byDir].map(([dir, list]) => (list.length <= LISTED ? list.join(', ') : `${list.length} files in ${dir}`));
  return `note: skipped ${parts.join(', ')}: rendered output (what render -o writes), not input`;
}
