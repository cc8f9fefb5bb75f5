/** `spec.pump`: what Pump resolves beyond the common component fields (log level, `TZ`), its defaults and the fields it takes. */
import type { DefaultEntry } from './defaults';
import { resolveComponent, type Ctx, type ResolvedComponent } from './component';
import type { ComponentFields } from './fields';
import { LOG_LEVEL, wordValue } from './ticdc';

export interface ResolvedPump extends ResolvedComponent {
  readonly kind: 'pump';
  /** `-L`: config `log-level`. */
  readonly logLevel: string;
  /** `TZ` env (`spec.timezone`, possibly empty) when `setTimeZone`; undefined: no TZ env. @default none */
  readonly timezone?: string;
}

/** Component defaults (tidb-operator v1's values). */
export const PUMP_DEFAULTS = {
  logLevel: 'info',
  podManagementPolicy: 'OrderedReady',
  setTimeZone: false,
} as const;

export const PUMP_DEFAULTS_TABLE: readonly DefaultEntry[] = [
  { field: 'spec.pump.config log-level', value: PUMP_DEFAULTS.logLevel, note: '`-L` of pump' },
  {
    field: 'spec.pump.podManagementPolicy',
    value: PUMP_DEFAULTS.podManagementPolicy,
    note: 'unlike the other components; once set here or at cluster level, the usual rule applies',
  },
  { field: 'spec.pump.setTimeZone', value: PUMP_DEFAULTS.setTimeZone, note: 'true: `TZ` = spec.timezone' },
];

/** Fields of `spec.pump` beyond the common ones, and common ones it does not take (see `support.ts`). */
export const PUMP_FIELDS: ComponentFields = {
  extra: ['setTimeZone'],
  // storageVolumes and maxFailoverCount are not in the CRD for Pump: the schema check reports them.
  except: ['readinessProbe', 'additionalVolumes', 'additionalVolumeMounts', 'storageVolumes', 'maxFailoverCount'],
  reasons: {
    readinessProbe: 'Pump always gets a TCP readiness probe on 8250, as with tidb-operator; remove it',
    additionalVolumes: 'tidb-operator does not add additional volumes to Pump (it ignored them); remove it',
    additionalVolumeMounts: 'tidb-operator does not add additional volume mounts to Pump (it ignored them); remove it',
  },
};

export function resolvePump(ctx: Ctx): ResolvedPump {
  const spec = ctx.spec.pump!;
  const base = resolveComponent(ctx, 'pump', spec);
  const path = 'spec.pump';
  if (spec.requests && spec.requests.storage === undefined) {
    // tidb-operator refuses to sync Pump then ("storage request is not set").
    ctx.issues.push({
      path: `${path}.requests.storage`,
      message: 'required field is missing: the size of each Pump data volume (PVC data-<cluster>-pump-<N>), e.g. 20Gi',
    });
  }
  if (spec.limits?.storage !== undefined) {
    ctx.issues.push({
      path: `${path}.limits.storage`,
      message: 'Pump takes the size of its data volume from requests.storage; tidb-operator ignores this one, remove it',
    });
  }
  const { maxFailoverCount: _none, ...settings } = base.settings;
  const level = wordValue(base.config['log-level'], `${path}.config.log-level`, LOG_LEVEL, 'a log level such as info or debug', ctx.issues);
  // Pump alone defaults to OrderedReady; a policy set anywhere (even Parallel) takes the usual rule.
  const policySet = !!(spec.podManagementPolicy || ctx.spec.podManagementPolicy);
  return {
    ...base,
    kind: 'pump',
    podManagementPolicy: policySet ? base.podManagementPolicy : PUMP_DEFAULTS.podManagementPolicy,
    logLevel: level ?? PUMP_DEFAULTS.logLevel,
    timezone: spec.setTimeZone ? (ctx.spec.timezone ?? '') : undefined,
    settings,
  };
}
