import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import YAML from 'yaml';
import { validateTidbClusterSchema } from '../../../src/tidbcluster/crd-schema';
import generated from '../../../src/tidbcluster/generated/tidbcluster.schema.json';
import { operatorExample, operatorExamples, REPO_ROOT } from '../../../scripts/lib/upstream';

// Loose on purpose: tests poke at arbitrary (also invalid) places in documents.
type Doc = Record<string, any>;

function loadYaml(file: string): Doc {
  return YAML.parse(fs.readFileSync(file, 'utf8')) as Doc;
}

/** A fresh copy of the operator's basic example, changed by `edit`. */
function basicWith(edit: (doc: Doc) => void): Doc {
  const doc = loadYaml(operatorExample('basic'));
  edit(doc);
  return doc;
}

describe("the operator's examples", () => {
  it.each(operatorExamples().map(({ name, file }) => [name, file]))('%s has no issues', (_name, file) => {
    expect(validateTidbClusterSchema(loadYaml(file))).toEqual([]);
  });
});

describe('unknown fields', () => {
  it('suggests replicas for spec.tikv.replica', () => {
    const doc = basicWith((d) => {
      d.spec.tikv.replica = d.spec.tikv.replicas;
      delete d.spec.tikv.replicas;
    });
    expect(validateTidbClusterSchema(doc)).toEqual([
      { path: 'spec.tikv.replicas', message: 'required field is missing' },
      { path: 'spec.tikv.replica', message: 'unknown field; did you mean replicas?' },
    ]);
  });

  it('checks inside Kubernetes types, with suggestions from the right siblings', () => {
    const doc = basicWith((d) => {
      d.spec.tidb.additionalContainers = [{ name: 'sidecar', imagee: 'busybox' }];
    });
    expect(validateTidbClusterSchema(doc)).toEqual([
      { path: 'spec.tidb.additionalContainers[0].imagee', message: 'unknown field; did you mean image?' },
    ]);
  });

  it('matches case and dash/underscore slips first', () => {
    const doc = basicWith((d) => {
      d.spec.pd.BaseImage = 'x';
      d.spec.pd.storage_class_name = 'local';
    });
    expect(validateTidbClusterSchema(doc)).toEqual([
      { path: 'spec.pd.BaseImage', message: 'unknown field; did you mean baseImage?' },
      { path: 'spec.pd.storage_class_name', message: 'unknown field; did you mean storageClassName?' },
    ]);
  });

  it('says only "unknown field" when nothing is close', () => {
    const doc = basicWith((d) => {
      d.spec.tidb.frobnicate = true;
      d.spec.tikv.xy = 1;
    });
    // Document order: the basic example lists tikv before tidb.
    expect(validateTidbClusterSchema(doc)).toEqual([
      { path: 'spec.tikv.xy', message: 'unknown field' },
      { path: 'spec.tidb.frobnicate', message: 'unknown field' },
    ]);
  });

  it('keeps dashed keys in dotted paths', () => {
    const doc = basicWith((d) => {
      d.spec.tikv['reserve-space'] = '0MB';
    });
    expect(validateTidbClusterSchema(doc)).toEqual([{ path: 'spec.tikv.reserve-space', message: 'unknown field' }]);
  });

  it('accepts anything in metadata, which the CRD leaves free-form', () => {
    const doc = basicWith((d) => {
      d.metadata.labels = { 'app.kubernetes.io/name': 'tidb' };
      d.metadata.whatever = [1];
    });
    expect(validateTidbClusterSchema(doc)).toEqual([]);
  });
});

describe('preserve-unknown-fields config', () => {
  it.each(['pd', 'tikv', 'tidb'])('accepts %s.config as a TOML string and as a nested map', (component) => {
    const asToml = basicWith((d) => {
      d.spec[component].config = '[log]\nlevel = "info"\n';
    });
    const asMap = basicWith((d) => {
      d.spec[component].config = { log: { level: 'info', file: { 'max-days': 30 } }, 'any-key': [1, 'two', null] };
    });
    expect(validateTidbClusterSchema(asToml)).toEqual([]);
    expect(validateTidbClusterSchema(asMap)).toEqual([]);
  });
});

describe('types', () => {
  it('rejects a string where an integer is expected', () => {
    const doc = basicWith((d) => {
      d.spec.pd.replicas = 'three';
    });
    expect(validateTidbClusterSchema(doc)).toEqual([{ path: 'spec.pd.replicas', message: 'expected an integer, got "three"' }]);
  });

  it('rejects null where an integer is expected', () => {
    const doc = basicWith((d) => {
      d.spec.tidb.replicas = null;
    });
    expect(validateTidbClusterSchema(doc)).toEqual([{ path: 'spec.tidb.replicas', message: 'expected an integer, got null' }]);
  });

  it('rejects fractions for integers', () => {
    const doc = basicWith((d) => {
      d.spec.tidb.replicas = 1.5;
    });
    expect(validateTidbClusterSchema(doc)).toEqual([{ path: 'spec.tidb.replicas', message: 'expected an integer, got 1.5' }]);
  });

  it('words each type plainly', () => {
    const doc = basicWith((d) => {
      d.spec.version = 3;
      d.spec.paused = 'yes';
      d.spec.helper = ['x'];
      d.spec.tidb.env = 'x';
    });
    expect(validateTidbClusterSchema(doc)).toEqual([
      { path: 'spec.version', message: 'expected a string, got 3' },
      { path: 'spec.helper', message: 'expected a mapping, got a list' },
      { path: 'spec.tidb.env', message: 'expected a list, got "x"' },
      { path: 'spec.paused', message: 'expected true or false, got "yes"' },
    ]);
  });

  it('uses indexes and bracketed keys in paths', () => {
    const doc = basicWith((d) => {
      d.spec.labels = { 'app.kubernetes.io/name': 3, plain: 'ok' };
      d.spec.tidb.env = [{ name: 'A', value: 'x' }, { value: 'y' }];
    });
    expect(validateTidbClusterSchema(doc)).toEqual([
      { path: 'spec.tidb.env[1].name', message: 'required field is missing' },
      { path: 'spec.labels["app.kubernetes.io/name"]', message: 'expected a string, got 3' },
    ]);
  });

  it('reports a document that is not a mapping at the empty path', () => {
    expect(validateTidbClusterSchema([])).toEqual([{ path: '', message: 'expected a mapping, got a list' }]);
    expect(validateTidbClusterSchema(null)).toEqual([{ path: '', message: 'expected a mapping, got null' }]);
  });
});

describe('quantities (int-or-string with pattern)', () => {
  it('rejects a quantity that does not parse', () => {
    const doc = basicWith((d) => {
      d.spec.pd.requests.storage = 'ten';
    });
    expect(validateTidbClusterSchema(doc)).toEqual([
      { path: 'spec.pd.requests.storage', message: 'expected a Kubernetes quantity such as 10Gi or 500m, got "ten"' },
    ]);
  });

  it('accepts integers and suffixed strings', () => {
    const doc = basicWith((d) => {
      d.spec.pd.requests = { storage: 10, cpu: '500m', memory: '1.5Gi' };
      d.spec.tidb.limits = { cpu: 2, memory: '4Gi' };
    });
    expect(validateTidbClusterSchema(doc)).toEqual([]);
  });

  it('explains that a YAML float must be quoted', () => {
    const doc = basicWith((d) => {
      d.spec.tidb.requests = { cpu: 0.5 };
    });
    expect(validateTidbClusterSchema(doc)).toEqual([
      {
        path: 'spec.tidb.requests.cpu',
        message: 'expected a Kubernetes quantity such as 10Gi or 500m, got 0.5 (quote it: "0.5")',
      },
    ]);
  });

  it('accepts either form for a plain int-or-string', () => {
    const doc = basicWith((d) => {
      d.spec.tidb.service.additionalPorts = [
        { port: 1, targetPort: 'http' },
        { port: 2, targetPort: 8080 },
        { port: 3, targetPort: true },
      ];
    });
    expect(validateTidbClusterSchema(doc)).toEqual([
      { path: 'spec.tidb.service.additionalPorts[2].targetPort', message: 'expected an integer or a string, got true' },
    ]);
  });
});

describe('required, enum and bounds', () => {
  it('reports a missing spec.pd.replicas', () => {
    const doc = basicWith((d) => {
      delete d.spec.pd.replicas;
    });
    expect(validateTidbClusterSchema(doc)).toEqual([{ path: 'spec.pd.replicas', message: 'required field is missing' }]);
  });

  it('rejects a value outside an enum', () => {
    const doc = basicWith((d) => {
      d.spec.tidb.readinessProbe = { type: 'http' };
    });
    expect(validateTidbClusterSchema(doc)).toEqual([
      { path: 'spec.tidb.readinessProbe.type', message: 'expected one of tcp, command, got "http"' },
    ]);
  });

  it('shows an empty enum value quoted', () => {
    const doc = basicWith((d) => {
      d.spec.pd.mode = 'xx';
    });
    expect(validateTidbClusterSchema(doc)).toEqual([{ path: 'spec.pd.mode', message: 'expected one of "", ms, got "xx"' }]);
  });

  it('checks minimum and maximum', () => {
    const doc = basicWith((d) => {
      d.spec.pd.replicas = -1;
      d.spec.tidb.service.port = 70000;
    });
    expect(validateTidbClusterSchema(doc)).toEqual([
      { path: 'spec.pd.replicas', message: 'must be at least 0, got -1' },
      { path: 'spec.tidb.service.port', message: 'must be at most 65535, got 70000' },
    ]);
  });

  it('checks int32 range', () => {
    const doc = basicWith((d) => {
      d.spec.tikv.replicas = 2 ** 31;
    });
    expect(validateTidbClusterSchema(doc)).toEqual([
      { path: 'spec.tikv.replicas', message: 'must be between -2147483648 and 2147483647 (int32), got 2147483648' },
    ]);
  });

  it('checks apiVersion and kind against the CRD', () => {
    const doc = basicWith((d) => {
      d.apiVersion = 'pingcap.com/v1';
      delete d.kind;
    });
    expect(validateTidbClusterSchema(doc)).toEqual([
      { path: 'apiVersion', message: 'expected pingcap.com/v1alpha1, got "pingcap.com/v1"' },
      { path: 'kind', message: 'required field is missing' },
    ]);
  });
});

describe('robustness', () => {
  it('never throws and is deterministic', () => {
    const inputs: unknown[] = [undefined, 42, 'x', { spec: 'x' }, { spec: { pd: { replicas: [] } } }, new Date(0)];
    for (const input of inputs) {
      const first = validateTidbClusterSchema(input);
      expect(first.length).toBeGreaterThan(0);
      expect(validateTidbClusterSchema(input)).toEqual(first);
    }
  });
});

describe('generated schema', () => {
  it('only references nodes that exist', () => {
    const count = generated.nodes.length;
    const refs: number[] = [generated.root];
    for (const node of generated.nodes as Array<Record<string, unknown>>) {
      const props = (node.properties ?? {}) as Record<string, number>;
      refs.push(...Object.values(props), ...((node.anyOf as number[] | undefined) ?? []));
      if (typeof node.items === 'number') refs.push(node.items);
      if (typeof node.additionalProperties === 'number') refs.push(node.additionalProperties);
    }
    expect(refs.every((r) => Number.isInteger(r) && r >= 0 && r < count)).toBe(true);
    expect(generated).toMatchObject({ group: 'pingcap.com', version: 'v1alpha1', kind: 'TidbCluster' });
  });

  it('is, with every other generated CRD schema, what scripts/generate/crd-schemas.mjs makes of the CRDs now', () => {
    const run = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts/generate/crd-schemas.mjs'), '--check'], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });
});
