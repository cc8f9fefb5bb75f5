/**
 * Orders strings by UTF-16 code units, as `<` does and as Go's `sort.Strings` orders bytes for ASCII.
 * `localeCompare` would depend on the ICU data of the Node build and the process locale, and its first
 * call maps the executable's collation tables into memory.
 */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
