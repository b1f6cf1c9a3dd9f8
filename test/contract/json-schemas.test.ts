/**
 * The --json contract (issue 34 item 2; decisions 46): every schema in schemas/ is a valid draft
 * 2020-12 schema; a schema released at a schema_version (test/contract/released-schemas/<version>/)
 * keeps every field it lists, with the same type, as long as schema_version stays; adding fields
 * or enum values keeps the version. The documents themselves are checked wherever the suite runs
 * mmauth (test/support/json-documents.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkUnnamedDocument, SCHEMA_DIR, schemaValidators } from '../support/json-documents.js';

const RELEASED_DIR = resolve(import.meta.dirname, 'released-schemas');

type Schema = Record<string, unknown>;

const readSchema = (path: string): Schema => JSON.parse(readFileSync(path, 'utf8')) as Schema;

/** The types a schema allows, sorted: its `type`, or `const`'s / `enum`'s JSON types. */
function typesOf(schema: Schema): string[] {
  if (schema.type !== undefined) return [schema.type].flat().map(String).sort();
  const values = 'const' in schema ? [schema.const] : Array.isArray(schema.enum) ? schema.enum : [];
  return [...new Set(values.map((v) => (v === null ? 'null' : Number.isInteger(v) ? 'integer' : typeof v)))].sort();
}

/**
 * What `current` breaks of `released`, path by path: a field listed there and gone here, a type
 * changed or narrowed, a required field no longer required, an enum or const value dropped. The
 * alternatives of anyOf are compared one by one, in order.
 */
export function breakingChanges(released: Schema, current: Schema | undefined, path = ''): string[] {
  if (current === undefined) return [`${path || '/'}: gone`];
  const problems: string[] = [];
  const wasTypes = typesOf(released);
  const isTypes = typesOf(current);
  if (
    wasTypes.length > 0 &&
    wasTypes.some((type) => !isTypes.includes(type) && !(type === 'integer' && isTypes.includes('number')))
  ) {
    problems.push(`${path || '/'}: type ${wasTypes.join('|')} became ${isTypes.join('|') || 'untyped'}`);
  }
  const wasValues = 'const' in released ? [released.const] : ((released.enum as unknown[] | undefined) ?? []);
  const isValues = 'const' in current ? [current.const] : ((current.enum as unknown[] | undefined) ?? undefined);
  if (isValues !== undefined && wasValues.some((value) => !isValues.includes(value))) {
    problems.push(`${path || '/'}: a value of ${JSON.stringify(wasValues)} is no longer allowed`);
  }
  for (const name of (released.required as string[] | undefined) ?? []) {
    if (!((current.required as string[] | undefined) ?? []).includes(name))
      problems.push(`${path}/${name}: no longer required`);
  }
  const wasProperties = (released.properties ?? {}) as Record<string, Schema>;
  const isProperties = (current.properties ?? {}) as Record<string, Schema>;
  for (const [name, property] of Object.entries(wasProperties)) {
    problems.push(...breakingChanges(property, isProperties[name], `${path}/${name}`));
  }
  if (released.items !== undefined)
    problems.push(...breakingChanges(released.items as Schema, current.items as Schema | undefined, `${path}[]`));
  ((released.anyOf ?? []) as Schema[]).forEach((alternative, index) => {
    problems.push(...breakingChanges(alternative, ((current.anyOf ?? []) as Schema[])[index], `${path}<${index}>`));
  });
  return problems;
}

const schemaFiles = readdirSync(SCHEMA_DIR).filter((name) => name.endsWith('.schema.json'));

describe('the --json schemas (schemas/)', () => {
  it('one per command and one for errors, each a valid draft 2020-12 schema that ajv compiles', () => {
    expect(schemaFiles.length).toBeGreaterThanOrEqual(17);
    expect(schemaFiles).toContain('error.schema.json');
    expect([...schemaValidators().keys()].sort()).toEqual(
      schemaFiles.map((name) => name.replace('.schema.json', '')).sort(),
    );
    for (const name of schemaFiles)
      expect(readSchema(join(SCHEMA_DIR, name)).$schema).toBe('https://json-schema.org/draft/2020-12/schema');
  });

  it('every document but header --json requires schema_version 1 (decisions 46)', () => {
    for (const [kind, validate] of schemaValidators()) {
      if (kind === 'header') {
        expect(validate({ Authorization: 'Bearer x' })).toBe(true);
        expect(validate({ schema_version: 1, Authorization: 'Bearer x' })).toBe(false);
      } else {
        expect(validate({}), kind).toBe(false);
      }
    }
  });

  const released = readdirSync(RELEASED_DIR).flatMap((version) =>
    readdirSync(join(RELEASED_DIR, version)).map((name) => ({ version: Number(version), name })),
  );
  it.each(released)(
    'released at schema_version $version, $name: every field it lists is still there, with its type',
    ({ version, name }) => {
      const current = readSchema(join(SCHEMA_DIR, name));
      const currentVersion = JSON.stringify(current).includes('"schema_version":{"const":')
        ? /"schema_version":\{"const":(\d+)/.exec(JSON.stringify(current))?.[1]
        : '1';
      // A document whose version was raised may change what it liked; the same version may only add.
      if (Number(currentVersion) !== version) return;
      expect(breakingChanges(readSchema(join(RELEASED_DIR, String(version), name)), current)).toEqual([]);
    },
  );

  it('an in-process document is checked against every schema: one that none accepts is a problem', () => {
    expect(checkUnnamedDocument('{"foo": 1}')).toHaveLength(1);
    expect(checkUnnamedDocument('{"schema_version": 1, "url": "http://127.0.0.1:1"}')).toEqual([]);
    expect(
      checkUnnamedDocument(
        '{"schema_version": 1, "error": {"code": "nope", "message": "", "hint": null, "exit_code": 1}}',
      ),
    ).toHaveLength(1);
    expect(checkUnnamedDocument('a bare token')).toEqual([]);
  });

  it('the contract check fails on a removed field, a changed type, a dropped enum value, an optional field made of a required one', () => {
    const was: Schema = {
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: ['integer', 'null'] }, c: { enum: ['x', 'y'] } },
      required: ['a'],
    };
    expect(
      breakingChanges(was, {
        ...was,
        properties: {
          a: { type: 'string' },
          b: { type: ['integer', 'null'] },
          c: { enum: ['x', 'y'] },
          d: { type: 'boolean' },
        },
      }),
    ).toEqual([]);
    expect(
      breakingChanges(was, { ...was, properties: { b: { type: ['integer', 'null'] }, c: { enum: ['x', 'y'] } } }),
    ).toEqual(['/a: gone']);
    expect(
      breakingChanges(was, { ...was, properties: { ...(was.properties as object), b: { type: 'string' } } }),
    ).toHaveLength(1);
    expect(
      breakingChanges(was, { ...was, properties: { ...(was.properties as object), c: { enum: ['x'] } } }),
    ).toHaveLength(1);
    expect(breakingChanges(was, { ...was, required: [] })).toEqual(['/a: no longer required']);
  });
});
