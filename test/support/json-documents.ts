/**
 * Every `--json` document the suite's spawned runs print, checked against its schema (issue 34:
 * schemas/<command>.schema.json, draft 2020-12, with ajv). runCli and startCli call
 * checkJsonDocuments when a run closes; a document that breaks its schema fails that test.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

export const SCHEMA_DIR = resolve(import.meta.dirname, '../../schemas');

/** The schema a document of `args` answers to: `error` for an error document, `profile-<sub>` for profile's. */
export function documentKind(args: readonly string[], document: unknown): string | undefined {
  if (typeof document === 'object' && document !== null && !Array.isArray(document) && 'error' in document) {
    return 'error';
  }
  const [command, sub] = args;
  if (command === undefined || command.startsWith('-')) return undefined;
  return command === 'profile' && sub !== undefined && !sub.startsWith('-') ? `profile-${sub}` : command;
}

/** The JSON documents in `stdout`: the whole of it, else each line that parses (a server's start-up line). */
export function jsonDocumentsIn(stdout: string): unknown[] {
  const text = stdout.trim();
  if (text === '') return [];
  try {
    return [JSON.parse(text)];
  } catch {
    return text.split('\n').flatMap((line) => {
      try {
        return line.trim().startsWith('{') ? [JSON.parse(line)] : [];
      } catch {
        return [];
      }
    });
  }
}

let validators: Map<string, ValidateFunction> | undefined;

/** Every schema of schemas/, compiled once per test file. */
export function schemaValidators(): Map<string, ValidateFunction> {
  if (validators !== undefined) return validators;
  const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
  validators = new Map();
  for (const name of readdirSync(SCHEMA_DIR).filter((file) => file.endsWith('.schema.json'))) {
    const schema = JSON.parse(readFileSync(join(SCHEMA_DIR, name), 'utf8')) as object;
    validators.set(name.replace(/\.schema\.json$/, ''), ajv.compile(schema));
  }
  return validators;
}

/**
 * What is wrong with the documents a run of `args` printed under --json: one line per schema
 * violation, or a document with no schema; [] for a run without --json.
 */
export function checkJsonDocuments(args: readonly string[], stdout: string): string[] {
  if (!args.includes('--json')) return [];
  const problems: string[] = [];
  for (const document of jsonDocumentsIn(stdout)) {
    const kind = documentKind(args, document);
    if (kind === undefined) continue;
    const validate = schemaValidators().get(kind);
    if (validate === undefined) {
      problems.push(`mmauth ${args.join(' ')}: no schema for "${kind}" documents in schemas/`);
    } else if (!validate(document)) {
      for (const error of validate.errors ?? []) {
        problems.push(`mmauth ${args.join(' ')}: ${kind} document ${error.instancePath || '/'} ${error.message ?? ''}`);
      }
    }
  }
  return problems;
}

/**
 * What is wrong with a document whose command is not known (an in-process run through the test
 * context): [] when some schema of schemas/ accepts it, else one line saying none does.
 */
export function checkUnnamedDocument(stdout: string): string[] {
  const text = stdout.trim();
  if (!text.startsWith('{') && !text.startsWith('[')) return [];
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return [];
  }
  const kind = documentKind([], document);
  const candidates = kind === undefined ? [...schemaValidators().values()] : [schemaValidators().get(kind)];
  return candidates.some((validate) => validate?.(document) === true)
    ? []
    : [`an in-process --json document that no schema of schemas/ accepts: ${text.slice(0, 200)}`];
}
