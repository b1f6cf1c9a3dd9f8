/** The versioning of mmauth's `--json` documents. No imports: commands load it at once. */

/**
 * The version of every `--json` document's shape (the project's rules; schemas/<command>.schema.json):
 * adding a field keeps it, removing or retyping one raises it.
 */
export const SCHEMA_VERSION = 1;

/** `value` with `schema_version` first: an object, or each object of an array. */
export function versioned(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(versioned);
  if (typeof value !== 'object' || value === null) return value;
  return { schema_version: SCHEMA_VERSION, ...value };
}
