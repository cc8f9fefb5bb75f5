/**
 * What a component module declares about its fields, for `support.ts`: the ones it adds to the
 * common set, the common ones it does not take, and fields accepted only at their "off" value (paths
 * below `spec.<component>`).
 */
export interface ComponentFields {
  readonly extra: readonly string[];
  /** @default [] */
  readonly except?: readonly string[];
  /** @default {} */
  readonly offValues?: Readonly<Record<string, readonly unknown[]>>;
  /** Why a field is refused, keyed by its path below `spec.<component>`. @default {} */
  readonly reasons?: Readonly<Record<string, string>>;
}
