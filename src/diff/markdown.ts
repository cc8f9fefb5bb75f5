/**
 * The report as Markdown for a pull request comment: a summary line per cluster at the top, then per
 * cluster its risks, its components (restarts, scale, images, config) and the objects that change.
 */
import { names, type ComponentKind } from '../tidbcluster/names';
import { restartOrder } from '../tidbcluster/restart-order';
import { componentTitle } from './model';
import type {
  AccountChange,
  DatabaseChange,
  ClusterDiff,
  ComponentDiff,
  ConfigChange,
  ConfigKeyChange,
  DiffReport,
  FieldChange,
  ObjectChange,
} from './report';

/** What the report says when the rendered manifests are the same. */
export const NO_CHANGES = 'No changes to the rendered manifests.';

/** At most this many lines per list (template fields, config keys); the rest are counted. */
const MAX_LINES = 25;

export function toMarkdown(report: DiffReport): string {
  const lines = ['## tidb-gitops diff', ''];
  if (!report.changed) return `${[...lines, NO_CHANGES].join('\n')}\n`;
  const real = report.clusters.filter((c) => c.name !== '');
  const head = [`${plural(real.length, 'cluster')} changed`];
  if (real.length < report.clusters.length) head.push('objects outside any cluster changed');
  head.push(report.riskCount === 0 ? 'no risks' : plural(report.riskCount, 'risk'));
  lines.push(`**${head.join(', ')}.**`, '');
  if (report.live) {
    lines.push(
      'OLD is live (read from the API server): NEW is compared as applying it would leave each object. Fields the ' +
        'manifests do not set (defaults the API server filled in, fields another manager wrote) keep their live values.',
      '',
    );
  }
  for (const c of report.clusters) lines.push(`- ${summaryLine(c)}`);
  for (const c of report.clusters) lines.push('', ...clusterSection(c));
  return `${lines.join('\n')}\n`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Inline code that survives backticks in the value. */
function code(s: string): string {
  if (!s.includes('`')) return `\`${s}\``;
  return `\`\` ${s} \`\``;
}

function clusterTitle(c: ClusterDiff): string {
  return c.name === '' ? 'Objects outside any cluster' : c.id;
}

/** `**basic**: pd, tikv, tidb rolling restart; tikv 3 -> 5; 1 risk` */
export function summaryLine(c: ClusterDiff): string {
  const risks = c.risks.length === 0 ? 'no risks' : plural(c.risks.length, 'risk');
  const head = `**${clusterTitle(c)}**`;
  if (c.name === '') return `${head}: ${objectCounts(c.objects)}`;
  if (c.change === 'added') {
    const parts = c.components.map((d) => (d.replicas?.to !== undefined ? `${d.component} ${d.replicas.to}` : d.component));
    return `${head}: new cluster (${parts.join(', ')}); ${risks}`;
  }
  if (c.change === 'removed') return `${head}: removed; ${risks}`;
  const parts: string[] = [];
  const restarted = c.components.filter((d) => d.restart && d.restart.by !== 'deployment').map((d) => d.component);
  if (restarted.length > 0) parts.push(`${restarted.join(', ')} rolling restart`);
  for (const d of c.components) if (d.restart?.by === 'deployment') parts.push(`${d.component} restart`);
  for (const d of c.components) {
    if (d.change === 'added') parts.push(`${d.component} added`);
    else if (d.change === 'removed') parts.push(`${d.component} removed`);
    else if (d.replicas) parts.push(`${d.component} ${d.replicas.from ?? 0} -> ${d.replicas.to ?? 0}`);
  }
  const inPlace = c.components
    .filter((d) => d.change === 'changed' && d.config.some((x) => x.appliedBy === 'next-restart'))
    .map((d) => d.component);
  if (inPlace.length > 0) parts.push(`${inPlace.join(', ')} config in place (read at next restart)`);
  const settings = c.components.filter((d) => d.settings.length > 0).map((d) => d.component);
  if (settings.length > 0) parts.push(`${settings.join(', ')} controller settings`);
  if (c.keepsPods && c.keepsPods.length > 0)
    parts.push(`${c.keepsPods.join(', ')} keep${c.keepsPods.length === 1 ? 's its' : ' their'} Pods`);
  if (parts.length === 0) parts.push(objectCounts(c.objects));
  return `${head}: ${parts.join('; ')}; ${risks}`;
}

function objectCounts(objects: readonly ObjectChange[]): string {
  const counts = new Map<string, number>();
  for (const o of objects) counts.set(o.change, (counts.get(o.change) ?? 0) + 1);
  const parts = [...counts].map(([change, n]) => `${plural(n, 'object')} ${change}`);
  return parts.length > 0 ? parts.join(', ') : 'no object changes';
}

function clusterSection(c: ClusterDiff): string[] {
  const lines = [`### ${clusterTitle(c)}`];
  if (c.change === 'added') lines.push('', 'A new cluster: every object below is created.');
  if (c.change === 'removed' && !c.objects.every((o) => o.change === 'kept'))
    lines.push('', 'The cluster is removed: every object below is deleted.');
  if (c.keepsPods && c.keepsPods.length > 0) {
    lines.push('', `Pods kept as they are (no template change once applied): ${c.keepsPods.map((x) => componentTitle(x)).join(', ')}.`);
  }
  if (c.risks.length > 0) {
    lines.push('', '#### Risks', '');
    for (const r of c.risks) lines.push(`- **${r.id}**: ${r.message}`);
  }
  const rolled = c.components.filter((d) => d.restart?.by === 'controller').map((d) => d.component as ComponentKind);
  if (rolled.length > 1) {
    lines.push(
      '',
      `**Order**: the controller restarts ${restartOrder(rolled)
        .map((k) => componentTitle(k))
        .join(', then ')}, each component once every one it waits for is done.`,
    );
  }
  for (const d of c.components) {
    const body = componentLines(c, d);
    if (body.length === 0) continue;
    const where = d.workload ? ` (${d.workload})` : '';
    const change = d.change === 'changed' ? '' : `: ${d.change}`;
    lines.push('', `#### ${componentTitle(d.component)}${where}${change}`, '', ...body);
  }
  if (c.accounts && c.accounts.length > 0) lines.push('', '#### SQL accounts', '', ...c.accounts.map(accountLine));
  if (c.database && c.database.length > 0) lines.push('', '#### Resource groups and changefeeds', '', ...c.database.map(databaseLine));
  if (c.objects.length > 0) lines.push('', '#### Objects', '', ...objectLines(c.objects));
  return lines;
}

/** `- SqlUser app (`'app'@'%'`): changed: grants, roles` */
function accountLine(a: AccountChange): string {
  const fields = a.fields && a.fields.length > 0 ? `: ${a.fields.join(', ')}` : '';
  return `- ${a.kind} ${a.document} (${code(a.account)}): ${a.change}${fields}${a.note ? `; ${a.note}` : ''}`;
}

/** `- Changefeed to-kafka (`to-kafka`): changed: sinkURI, paused` */
function databaseLine(d: DatabaseChange): string {
  const fields = d.fields && d.fields.length > 0 ? `: ${d.fields.join(', ')}` : '';
  return `- ${d.kind} ${d.document} (${code(d.name)}): ${d.change}${fields}${d.note ? `; ${d.note}` : ''}`;
}

function componentLines(c: ClusterDiff, d: ComponentDiff): string[] {
  const lines: string[] = [];
  if (d.restart) {
    lines.push(`- ${restartSentence(c, d)} Pod template changes:`);
    lines.push(
      ...capped(
        d.restart.causes.map((x) => `  - ${fieldLine(x)}`),
        'changes',
        '  ',
      ),
    );
  }
  if (d.replicas) {
    const { from, to } = d.replicas;
    if (from === undefined) lines.push(`- **Replicas**: ${to}`);
    else if (to === undefined) lines.push(`- **Replicas**: ${from} -> none`);
    else lines.push(`- **Scale**: ${from} -> ${to} (${to > from ? 'scale-out' : 'scale-in'}, one Pod at a time)`);
  }
  if (d.images.length > 0) {
    const image = (i: { container: string; from?: string; to?: string }) =>
      `${code(i.container)}: ${i.from === undefined ? code(i.to!) : i.to === undefined ? `${code(i.from)} removed` : `${code(i.from)} -> ${code(i.to)}`}`;
    if (d.images.length === 1) lines.push(`- **Image** ${image(d.images[0])}`);
    else lines.push('- **Images**:', ...d.images.map((i) => `  - ${image(i)}`));
  }
  for (const cfg of d.config) lines.push(...configLines(cfg, d.restart !== undefined));
  if (d.settings.length > 0) {
    lines.push(`- **Controller settings** (${code('tidb-gitops.io/settings')}), read by the controller without a restart:`);
    lines.push(
      ...capped(
        d.settings.map((x) => `  - ${fieldLine(x)}`),
        'changes',
        '  ',
      ),
    );
  }
  return lines;
}

/** What the controller does around each Pod's restart (`controller/plan/upgrade-*.ts`), as the report says it. */
const CHECKED_BETWEEN: Readonly<Record<string, string>> = {
  pd: "PD's leadership moves off a member before it restarts, and the next waits until the member is healthy and ready",
  tso: 'the primary moves off a server before it restarts',
  scheduling: 'the primary moves off a server before it restarts',
  tikv: "each store's region leaders move away before its restart, and the next waits until the store is Up with its leaders back",
  tiflash: 'the next waits until the store is Up and TiFlash reports itself running',
  tidb: 'DDL is paused for the upgrade where TiDB can pause it, and the next waits until the server answers',
  ticdc: 'each capture hands its tables over before it restarts',
};

function restartSentence(c: ClusterDiff, d: ComponentDiff): string {
  switch (d.restart!.by) {
    case 'controller':
      return (
        `**Rolling restart**, one Pod at a time (highest ordinal first, each healthy before the next), driven by the ` +
        `companion controller ${code(names.discovery(c.name))}${CHECKED_BETWEEN[d.component] ? `: ${CHECKED_BETWEEN[d.component]}` : ''}.`
      );
    case 'statefulset':
      return '**Rolling restart** by Kubernetes, as the StatefulSet updateStrategy says.';
    case 'on-delete':
      return '**No restart by itself** (updateStrategy OnDelete): each Pod takes the new template when it is deleted.';
    case 'deployment':
      return d.component === 'discovery'
        ? '**Restart**: the Deployment replaces its Pod; the companion controller and PD discovery pause for a few seconds, no database Pod restarts.'
        : '**Restart**: the Deployment replaces its Pods.';
  }
}

function capped(lines: string[], what: string, indent: string): string[] {
  if (lines.length <= MAX_LINES) return lines;
  return [...lines.slice(0, MAX_LINES - 1), `${indent}- and ${lines.length - MAX_LINES + 1} more ${what}`];
}

const CONFIG_VOLUME = /^volumes\[(.+)\]\.configMap\.name$/;

function fieldLine(x: FieldChange): string {
  const volume = CONFIG_VOLUME.exec(x.path);
  if (volume && x.from !== undefined && x.to !== undefined) return `${code(volume[1])} volume: ConfigMap ${code(x.from)} -> ${code(x.to)}`;
  return valueLine(code(x.path), x);
}

function valueLine(label: string, x: { change: string; from?: string; to?: string }): string {
  switch (x.change) {
    case 'added':
      return x.to === undefined ? `${label} added` : `${label} added: ${code(x.to)}`;
    case 'removed':
      return x.from === undefined ? `${label} removed` : `${label} removed (was ${code(x.from)})`;
    default:
      return x.from !== undefined && x.to !== undefined ? `${label}: ${code(x.from)} -> ${code(x.to)}` : `${label} changed`;
  }
}

function configLines(cfg: ConfigChange, restarts: boolean): string[] {
  const names = cfg.from && cfg.to && cfg.from !== cfg.to ? `${code(cfg.from)} -> ${code(cfg.to)}` : code((cfg.to ?? cfg.from)!);
  let how: string;
  if (cfg.appliedBy === 'new-pods') how = 'new';
  else if (cfg.appliedBy === 'controller') how = 'read by the controller within its next pass, which then acts on the claims as Risks says';
  else if (cfg.appliedBy === 'rolling-restart') how = `${cfg.strategy}: applied by the rolling restart${restarts ? ' above' : ''}`;
  else if (cfg.strategy === 'InPlace' && cfg.keys.some((k) => k.online)) {
    how = cfg.keys.every((k) => k.online)
      ? 'InPlace: nothing restarts; the controller applies every key to the running servers online'
      : 'InPlace: nothing restarts; the controller applies the keys marked online to the running servers, the others are read at the next restart';
  } else if (cfg.strategy === 'InPlace') {
    how = 'InPlace: nothing restarts now; the running Pods see the new file, but the processes read it only at their next restart';
  } else how = 'nothing restarts now; the processes read it at their next restart';
  const lines = [`- **Config** (ConfigMap ${names}, ${how}):`];
  const items = cfg.keys.map((k) => `  - ${keyLine(k)}`);
  items.push(
    ...cfg.scripts.map(
      (s) =>
        `  - ${s === 'startup-script' ? 'startup script' : `script ${code(s)}`} ${cfg.from && cfg.to ? 'changed' : cfg.to ? 'added' : 'removed'}`,
    ),
  );
  items.push(...cfg.otherData.map((s) => `  - ${code(s)} changed`));
  if (items.length === 0) items.push(cfg.appliedBy === 'new-pods' ? '  - no keys set' : '  - no key changes');
  lines.push(...capped(items, 'keys', '  '));
  return lines;
}

function keyLine(k: ConfigKeyChange): string {
  const label = k.file === 'config-file' ? code(k.key) : `${code(k.file)} ${code(k.key)}`;
  return `${valueLine(label, k)}${k.online ? ' (online)' : ''}`;
}

const OBJECT_ORDER = ['added', 'replaced', 'removed', 'changed', 'kept'] as const;

function objectLines(objects: readonly ObjectChange[]): string[] {
  const lines: string[] = [];
  for (const change of OBJECT_ORDER) {
    const group = objects.filter((o) => o.change === change);
    if (group.length === 0) continue;
    if (change === 'added' || change === 'removed') {
      lines.push(`- ${change}: ${group.map((o) => `${o.kind} ${code(o.name)}`).join(', ')}`);
    } else if (change === 'replaced') {
      for (const o of group) lines.push(`- replaced: ${o.kind} ${code(o.name)} by ${code(o.replacedBy!)}`);
      const one = group.length === 1;
      lines.push(
        `  (${one ? 'The old ConfigMap stays' : 'The old ConfigMaps stay'}: ${one ? 'it is' : 'they are'} marked so that Argo CD and Flux do not prune ` +
          `${one ? 'it' : 'them'}, as Pods that have not restarted yet still mount ${one ? 'it' : 'them'}. The companion controller deletes ` +
          `${one ? 'it' : 'them'} once the rollout is done.)`,
      );
    } else if (change === 'kept') {
      lines.push(
        `- not in the new manifests, left as they are (applying neither changes nor deletes them; delete them once nothing uses them): ` +
          group.map((o) => `${o.kind} ${code(o.name)}`).join(', '),
      );
    } else {
      for (const o of group)
        lines.push(`- changed: ${o.kind} ${code(o.name)} (${o.values ? o.values.map(valueText).join(', ') : (o.fields ?? []).join(', ')})`);
    }
  }
  return lines;
}

/** `spec.maxUnavailable: 1 -> 2`, `spec.x: added 3`, `spec.y: removed`. */
function valueText(v: FieldChange): string {
  if (v.change === 'added') return `${v.path}: added ${code(v.to ?? '')}`;
  if (v.change === 'removed') return `${v.path}: removed (was ${code(v.from ?? '')})`;
  return `${v.path}: ${code(v.from ?? '')} -> ${code(v.to ?? '')}`;
}
