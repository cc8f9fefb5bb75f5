/**
 * The inputs read together, as every command reads them and as a cdk8s app of one's own can: the
 * render settings, every TidbCluster with the documents beside it (Backups, BackupSchedules, Restores,
 * its TidbInitializer and TidbMonitor, its SqlUsers and SqlRoles) tied to it, and the other Kubernetes
 * objects. Nothing here needs cdk8s, so `tidb-gitops/inputs` loads and validates with this alone.
 */
import { readInputFiles, readStdinText, type InputText } from '../base/inputs';
import { loadInputs, type CompanionDocument } from '../backup/companions';
import { linkOperations, type ClusterOperations } from '../backup/link';
import { DATABASE_KINDS, databaseKinds, isOwnGroup, type DatabaseDocument, unknownKindErrors } from '../database/read';
import { linkSqlAccounts, type SqlDocument } from '../database/link';
import { linkChangefeeds } from '../database/link-changefeeds';
import { CHANGEFEED_KIND, type ResolvedChangefeed } from '../database/types';
import type { LoadedCluster, LoadedDocument, ParsedDocuments } from '../tidbcluster/load';
import { formatIssue } from '../tidbcluster/errors';
import type { ResolvedCluster, ResolveOptions } from '../tidbcluster/resolve';
import { layerSettings, settingsFromEnv, settingsFromInputs, type RenderSettings } from '../tidbcluster/settings';
import { parseKubeVersion } from '../tidbcluster/kube-version';
import { groupStoreBudgets } from '../tidbcluster/budget-groups';
import { clusterMonitoring } from '../monitoring/read';
import { missingCrdWarning } from '../monitoring/crds';
import { renderedOutput } from './rendered-output';

export interface ReadClusterOptions extends ResolveOptions {
  /**
   * The environment whose `TIDB_GITOPS_KUBE_VERSION`, `TIDB_GITOPS_CONTROLLER_IMAGE`,
   * `TIDB_GITOPS_NAMESPACE` and `TIDB_GITOPS_API_VERSIONS` come after the options given and before the
   * inputs' RenderSettings.
   * @default {} (no setting from the environment)
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Settings below the inputs' RenderSettings (what Argo CD passes). @default none */
  readonly fallback?: RenderSettings;
}

/** A cluster of the inputs, with what it renders with. */
export interface ClusterInput extends LoadedCluster {
  /** Its BackupSchedules, Backups, Restores, TidbInitializer and TidbMonitor, and its SQL accounts. */
  readonly operations: ClusterOperations;
}

/** A document read beside the clusters: an operation, initializer or monitor, or an SqlUser or SqlRole. */
export type InputDocument = CompanionDocument | DatabaseDocument;

/**
 * Parses and checks every document of one YAML text, of every kind read beside the clusters; an
 * object of the project's group of a kind none reads is an error, not an object to pass through.
 */
export function loadInputDocuments(text: string, file: string, options: ResolveOptions = {}): ParsedDocuments<InputDocument> {
  const parsed = loadInputs(text, file, options, databaseKinds({ namespace: options.namespace }));
  const refused = unknownKindErrors(parsed.others);
  if (refused.length === 0) return parsed;
  return { ...parsed, others: parsed.others.filter((o) => !isOwnGroup(o.value)), errors: [...parsed.errors, ...refused] };
}

export interface ClusterInputs {
  readonly clusters: ClusterInput[];
  /** Other Kubernetes objects among the inputs (`render` passes them through), as read. */
  readonly others: LoadedDocument<Record<string, unknown>>[];
  /** The documents read beside the clusters (Backups, schedules, SQL accounts...), as read: where each came from. */
  readonly documents: readonly LoadedDocument<InputDocument>[];
  /** The settings in effect, each from the first source that had it. */
  readonly settings: ResolveOptions;
  /**
   * Problems, one per line (`file: document N: path (line L): message`), all of them. Where there is
   * one, `clusters` may be incomplete and must not be rendered.
   */
  readonly errors: string[];
  /** Documents and files passed over (a Kustomization, YAML that is not a Kubernetes object). */
  readonly skipped: string[];
  /** Input files set apart as rendered output (a committed `dist/` met while walking a directory). */
  readonly renderedFiles: readonly string[];
  /** Readings worth a look that do not stop a render (the clusters' and documents' warnings). */
  readonly warnings: string[];
}

/** YAML texts to read, and the problems met finding them (they count as the inputs' own). */
export interface InputTexts {
  readonly inputs: readonly InputText[];
  /** @default none */
  readonly errors?: readonly string[];
}

/**
 * Reads YAML texts: the settings from the options, then `env`, then the inputs' RenderSettings, then
 * `fallback`; then every document with those settings. Never throws for bad input.
 */
export function readClusterInputs({ inputs, errors: earlier = [] }: InputTexts, options: ReadClusterOptions = {}): ClusterInputs {
  const fromEnv = settingsFromEnv(options.env ?? {});
  const fromInputs = settingsFromInputs(inputs);
  const given = {
    namespace: options.namespace,
    controllerImage: options.controllerImage,
    kubeVersion: options.kubeVersion,
    apiVersions: options.apiVersions,
  };
  const settings = layerSettings(given, fromEnv.settings, fromInputs.settings, options.fallback ?? {});
  const errors = [...earlier, ...fromEnv.errors, ...fromInputs.errors];
  const skipped: string[] = [];
  const loaded: LoadedCluster[] = [];
  const documents: LoadedDocument<InputDocument>[] = [];
  const others: LoadedDocument<Record<string, unknown>>[] = [];
  const results = inputs.map((input) => loadInputDocuments(input.text, input.file, settings));
  // A committed `dist/` beside the inputs is output: read again, it would take its own place.
  const output = renderedOutput(
    results.map((r, i) => ({
      ...inputs[i],
      read: r.clusters.length + r.documents.length + r.errors.length,
      objects: r.others.map((o) => o.value),
    })),
  );
  if (output.note) skipped.push(output.note);
  errors.push(...output.errors);
  for (const [i, input] of inputs.entries()) {
    if (output.skip.has(i)) continue;
    const result = results[i];
    skipped.push(...result.skipped);
    errors.push(...result.errors.map((e) => e.message));
    loaded.push(...result.clusters);
    documents.push(...result.documents);
    others.push(...result.others);
    if (
      input.explicit &&
      result.clusters.length === 0 &&
      result.documents.length === 0 &&
      result.others.length === 0 &&
      result.errors.length === 0
    ) {
      errors.push(`${input.file}: no Kubernetes object in this file`);
    }
  }
  const linked = linkClusterInputs(loaded, documents, errors);
  errors.push(...linked.errors);
  const { clusters } = linked;
  const warnings = [
    ...loaded.flatMap((c) => c.warnings),
    ...linked.warnings,
    ...[...documents, ...others].flatMap((d) => d.warnings),
    ...(errors.length === 0 ? clusters.flatMap(monitoringWarnings) : []),
  ];
  const renderedFiles = inputs.filter((_, i) => output.skip.has(i)).map((input) => input.file);
  return { clusters, others, documents, settings, errors, skipped, renderedFiles, warnings };
}

/** The clusters read, each with the documents tied to it; what {@link linkClusterInputs} finds. */
export interface LinkedClusterInputs {
  /** The clusters in input order, with their shared store budgets and their documents. */
  readonly clusters: ClusterInput[];
  /** Clusters defined twice, budgets that cannot be shared, and references to no cluster. */
  readonly errors: string[];
  /** Store budgets that only part of their clusters share. */
  readonly warnings: string[];
}

/**
 * Ties the documents read beside the clusters to their clusters, once every text is read: a cluster
 * defined twice and a budget that cannot be shared are errors, and so is a reference to no cluster,
 * but only when neither they nor `earlier` (the problems met reading) are any: it is news only about
 * clusters read without problems.
 */
export function linkClusterInputs(
  loaded: readonly LoadedCluster[],
  documents: readonly LoadedDocument<InputDocument>[],
  earlier: readonly string[],
): LinkedClusterInputs {
  const errors = duplicateMessages(loaded);
  // Clusters that share one PD share one budget for their stores.
  const grouped = groupStoreBudgets(loaded);
  errors.push(...grouped.errors);
  const database = documents.filter(isDatabaseDocument);
  const linked = linkOperations(
    grouped.clusters,
    documents.filter((d): d is LoadedDocument<CompanionDocument> => !isDatabaseDocument(d)),
  );
  const sql = linkSqlAccounts(
    grouped.clusters,
    database.filter((d): d is LoadedDocument<SqlDocument> => d.value.kind !== CHANGEFEED_KIND),
    linked.operations,
  );
  const feeds = linkChangefeeds(
    grouped.clusters,
    database.filter((d): d is LoadedDocument<ResolvedChangefeed> => d.value.kind === CHANGEFEED_KIND),
  );
  if (earlier.length === 0 && errors.length === 0) errors.push(...linked.errors, ...sql.errors, ...feeds.errors);
  return {
    clusters: grouped.clusters.map((c, i) => {
      const accountsOf = sql.sql[i];
      const changefeeds = feeds.changefeeds[i];
      return { ...c, operations: { ...linked.operations[i], ...(accountsOf && { sql: accountsOf }), ...(changefeeds && { changefeeds }) } };
    }),
    errors,
    warnings: grouped.warnings,
  };
}

function isDatabaseDocument(d: LoadedDocument<InputDocument>): d is LoadedDocument<DatabaseDocument> {
  return (DATABASE_KINDS as readonly string[]).includes(d.value.kind);
}

/** What of a cluster's monitoring is left out for a CRD the target lacks, where its document is. */
function monitoringWarnings(c: ClusterInput): string[] {
  const monitoring = clusterMonitoring(c.resolved, c.operations.monitor);
  const warning = monitoring && missingCrdWarning(c.resolved, monitoring);
  return warning ? [`${c.source.file}: document ${c.source.document}: ${warning}`] : [];
}

const INPUT_ERROR = Symbol.for('tidb-gitops.InputError');

/** The problems of a set of inputs, all of them: what {@link loadClusterInputs} throws. */
export class InputError extends Error {
  /** `instanceof` by a mark, as for SpecError: each entry's bundle has its own copy of the class. */
  static override [Symbol.hasInstance](x: unknown): boolean {
    return typeof x === 'object' && x !== null && INPUT_ERROR in x;
  }

  /** One line per problem, `file: document N: path (line L): message`. */
  readonly problems: readonly string[];

  constructor(errors: readonly string[]) {
    const problems = errors.flatMap((e) => e.split('\n'));
    super(`${problems.join('\n')}\n${problems.length === 1 ? '1 problem' : `${problems.length} problems`} found`);
    this.name = 'InputError';
    this.problems = problems;
    Object.defineProperty(this, INPUT_ERROR, { value: true });
  }
}

/**
 * Reads input paths as `tidb-gitops render` does (files, directories searched for `*.yaml` and
 * `*.yml`, sorted, `-` for standard input; the same limits) and {@link readClusterInputs} them. Throws an {@link InputError}
 * listing every problem, so a cdk8s app renders nothing from inputs the CLI would refuse.
 */
export function loadClusterInputs(paths: readonly string[], options: ReadClusterOptions = {}): ClusterInputs {
  const result = readClusterInputs(readInputFiles(paths, readStdinText), options);
  if (result.errors.length > 0) throw new InputError(result.errors);
  return result;
}

/** Chart id and file stem of a cluster: unique per namespace and name (names cannot contain dots). */
export function clusterId(c: Pick<ResolvedCluster, 'name' | 'namespace'>): string {
  return c.namespace ? `${c.namespace}.${c.name}` : c.name;
}

/** The note for a version newer than this release knows, if any. */
export function kubeVersionNote(kubeVersion: string | undefined): string | undefined {
  if (kubeVersion === undefined) return undefined;
  const target = parseKubeVersion(kubeVersion);
  return 'note' in target ? `note: ${target.note}` : undefined;
}

/** One message per cluster defined twice (same namespace and name), naming both places. */
export function duplicateMessages(clusters: readonly LoadedCluster[]): string[] {
  const seen = new Map<string, LoadedCluster>();
  const out: string[] = [];
  const where = (s: LoadedCluster) => `${s.source.file}: document ${s.source.document}`;
  // A namespace left out is added inside metadata: its line is the one to point at.
  const issue = (s: LoadedCluster, path: string, message: string) =>
    formatIssue({ path, line: s.line?.(path) ?? s.line?.(path.slice(0, path.lastIndexOf('.'))), message }, s.source);
  for (const c of clusters) {
    const id = clusterId(c.resolved);
    const first = seen.get(id);
    if (first) out.push(issue(c, 'metadata.name', `duplicate cluster ${JSON.stringify(id)}, also defined at ${where(first)}`));
    else seen.set(id, c);
  }
  // A cluster without a namespace lands in whichever namespace its objects are applied to
  // (`kubectl apply -n`, Argo CD's destination): where a namesake has one, the two may be one.
  const namespaced = new Map<string, LoadedCluster>();
  for (const c of clusters) if (c.resolved.namespace && !namespaced.has(c.resolved.name)) namespaced.set(c.resolved.name, c);
  for (const c of clusters) {
    const other = namespaced.get(c.resolved.name);
    if (c.resolved.namespace || !other) continue;
    out.push(
      issue(
        c,
        'metadata.namespace',
        `cluster ${JSON.stringify(c.resolved.name)} has no namespace, and one of the same name is in ${JSON.stringify(other.resolved.namespace)} (${where(other)}): ` +
          'applied there, the two would be one; give this one a namespace (metadata.namespace, or -n)',
      ),
    );
  }
  return out;
}
