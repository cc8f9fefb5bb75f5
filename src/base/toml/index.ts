export * from './values';
export { parseToml, TomlSyntaxError } from './read';
export { encodeToml } from './write';
