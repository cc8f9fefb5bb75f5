/** A minimal Prometheus registry: counters and gauges with labels, served in the text format. */

type Labels = Record<string, string>;

interface Family {
  readonly help: string;
  readonly type: 'counter' | 'gauge';
  readonly values: Map<string, { labels: Labels; value: number }>;
}

const key = (labels: Labels): string => JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));
const escape = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

export class Metrics {
  private readonly families = new Map<string, Family>();

  private family(name: string, type: Family['type'], help: string): Family {
    let f = this.families.get(name);
    if (!f) {
      f = { help, type, values: new Map() };
      this.families.set(name, f);
    }
    return f;
  }

  /** Declares a metric so it is listed (at 0 when unlabelled) before its first use. */
  declare(name: string, type: Family['type'], help: string): void {
    const f = this.family(name, type, help);
    if (f.values.size === 0 && type === 'gauge') f.values.set(key({}), { labels: {}, value: 0 });
  }

  inc(name: string, labels: Labels = {}, by = 1): void {
    const f = this.families.get(name);
    if (!f) throw new Error(`metric ${name} was not declared`);
    const k = key(labels);
    const v = f.values.get(k);
    if (v) v.value += by;
    else f.values.set(k, { labels, value: by });
  }

  set(name: string, labels: Labels, value: number): void {
    const f = this.families.get(name);
    if (!f) throw new Error(`metric ${name} was not declared`);
    if (Object.keys(labels).length > 0) f.values.delete(key({}));
    f.values.set(key(labels), { labels, value });
  }

  /** The Prometheus text exposition format (version 0.0.4). */
  render(): string {
    const out: string[] = [];
    for (const [name, f] of this.families) {
      out.push(`# HELP ${name} ${f.help}`, `# TYPE ${name} ${f.type}`);
      for (const { labels, value } of f.values.values()) {
        const l = Object.entries(labels)
          .map(([k, v]) => `${k}="${escape(v)}"`)
          .join(',');
        out.push(`${name}${l ? `{${l}}` : ''} ${value}`);
      }
    }
    return `${out.join('\n')}\n`;
  }
}
