import { z } from 'zod';
import { providerEntrySchema, webhookSecretVariable } from './config.ts';
import { envVariables } from './env-variables.ts';
import { destinationOptionsSchema, destinationVariables } from './destinations-config.ts';
import { envFileVariable } from './env-file.ts';
import { apiKeyVariable } from '../refetch/config-keys.ts';

declare module 'zod' {
  interface GlobalMeta {
    /**
     * What an unset variable or key means, where no zod default says it: a default computed from
     * other settings (`4` in `receiver`, `0` in `all`), or what is off without it. Markdown.
     */
    whenUnset?: string;
  }
}

/** A variable no zod key can carry (named after its provider or destination, or read before the schema), documented by hand beside the code that reads it. */
export interface DocumentedVariable {
  name: string;
  whenUnset?: string;
  description: string;
}

interface Row {
  name: string;
  whenUnset: string;
  description: string;
}

/** A rendered table, and what kept a row from being true: a missing meaning, or two defaults. */
export interface Rendered {
  markdown: string;
  problems: string[];
}

const code = (value: unknown) => `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;

/**
 * The default column: the schema's own default when it has one (so it cannot drift), else its
 * `whenUnset`, else `required` for a key that must be given and `—` for one that may be left out.
 */
function defaultOf(name: string, schema: z.ZodType, problems: string[]): string {
  const whenUnset = schema.meta()?.whenUnset;
  const unset = schema.safeParse(undefined);
  if (unset.success && unset.data !== undefined) {
    if (whenUnset !== undefined) problems.push(`${name}: has a default in its schema (${code(unset.data)}) and a whenUnset (${whenUnset}); keep the schema's`);
    return code(unset.data);
  }
  return whenUnset ?? (unset.success ? '—' : 'required');
}

function rowOf(name: string, schema: z.ZodType, problems: string[]): Row {
  const description = schema.meta()?.description;
  if (description === undefined) problems.push(`${name}: has no meaning; give its schema one with .describe('…') (or .meta({ description }))`);
  return { name, whenUnset: defaultOf(name, schema, problems), description: description ?? '' };
}

function table(header: string, rows: readonly Row[]): string {
  const cell = (text: string) => text.replaceAll('|', '\\|');
  return [
    `| ${header} | Default | Meaning |`,
    '|---|---|---|',
    ...rows.map((r) => `| \`${cell(r.name)}\` | ${cell(r.whenUnset)} | ${cell(r.description)} |`),
  ].join('\n');
}

/** The environment: every key of the zod schema in its order, then the variables it cannot carry. */
export function renderEnvironment(shape: Record<string, z.ZodType>, outside: readonly DocumentedVariable[]): Rendered {
  const problems: string[] = [];
  const rows = Object.entries(shape).map(([name, schema]) => rowOf(name, schema, problems));
  const outsideRows = outside.map((v) => ({ name: v.name, whenUnset: v.whenUnset ?? '—', description: v.description }));
  return { markdown: `${table('Variable', rows)}\n\n${table('Variable', outsideRows)}`, problems };
}

const unwrapOptional = (schema: z.ZodType): z.ZodType => (schema instanceof z.ZodOptional ? unwrapOptional(schema.unwrap() as z.ZodType) : schema);

/** A key's row; an object without a meaning of its own (`api`, `api.breaker`) is its keys' rows instead. */
function keyRows(prefix: string, shape: Record<string, z.ZodType>, problems: string[]): Row[] {
  return Object.entries(shape).flatMap(([key, schema]) => {
    const inner = unwrapOptional(schema);
    const described = schema.meta()?.description !== undefined;
    if (inner instanceof z.ZodObject && !described) return keyRows(`${prefix}${key}.`, inner.shape as Record<string, z.ZodType>, problems);
    return [rowOf(`${prefix}${key}`, schema, problems)];
  });
}

/** INBOX_CONFIG's keys: one table for a provider's entry, one for a destination's. */
export function renderFileKeys(providers: z.ZodObject, destinations: z.ZodObject): Rendered {
  const problems: string[] = [];
  const providerRows = keyRows('', providers.shape as Record<string, z.ZodType>, problems);
  const destinationRows = keyRows('', destinations.shape as Record<string, z.ZodType>, problems);
  const markdown = [
    '`providers.<name>`: a provider, served at `POST /webhooks/<name>`.',
    '',
    table('Key', providerRows),
    '',
    '`destinations.<name>`: options of a destination its `DESTINATION_URL_<NAME>` and `DESTINATION_SECRET_<NAME>` enable.',
    '',
    table('Key', destinationRows),
  ].join('\n');
  return { markdown, problems: problems.map((p) => `INBOX_CONFIG ${p}`) };
}

/** docs/configuration.md's generated sections, from the schemas the service parses its configuration with. */
export function configurationReference(): { sections: Record<GeneratedSection, string>; problems: string[] } {
  const environment = renderEnvironment(envVariables.shape, [envFileVariable, webhookSecretVariable, apiKeyVariable, ...destinationVariables]);
  const fileKeys = renderFileKeys(providerEntrySchema, destinationOptionsSchema);
  return { sections: { environment: environment.markdown, 'inbox-config': fileKeys.markdown }, problems: [...environment.problems, ...fileKeys.problems] };
}

export type GeneratedSection = 'environment' | 'inbox-config';
