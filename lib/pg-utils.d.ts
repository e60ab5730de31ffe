// node-postgres's own conversion of a value to what it sends (exported as `pg/lib/utils`, untyped by @types/pg).
declare module 'pg/lib/utils.js' {
  /** A JavaScript value as node-postgres writes it into a statement's parameter (an array: its text literal). */
  export function prepareValue(value: unknown): unknown;
}
