import { DrizzleQueryError } from 'drizzle-orm/errors';

/**
 * What of a failed statement's error may be shown, and what never: the one set of rules behind
 * every text an operator reads about an error — log lines (logger.ts) and the error text stored on
 * the inbox row, in pg-boss job output and answered by inboxctl (describeError in errors.ts). A
 * statement's parameters are payload values (a customer's email a handler wrote), and PostgreSQL
 * and the drivers quote them in several places; an outside probe found them in last_error while
 * the logs had been kept clean by rules only the logger applied.
 */

// The fields of a PostgreSQL error report that quote the input: `where` carries ~50 bytes of
// JSON around a jsonb parse error, `detail` the offending token or row ("Key (email)=(…) already
// exists."), `hint` and `internal_query` whatever a function put there; postgres.js adds the
// statement and its parameters (`query`, `parameters`, `args`, `types`) in debug mode. drizzle's
// DrizzleQueryError carries the statement and its values as `query` and `params`.
const INPUT_QUOTING_FIELDS = ['where', 'detail', 'hint', 'internal_query', 'query', 'parameters', 'args', 'types', 'params'];

// The fields that name what the statement touched, never what it carried: schema objects.
const NAMING_FIELDS = [
  ['table_name', 'table'],
  ['column_name', 'column'],
  ['constraint_name', 'constraint'],
  ['data_type_name', 'type'],
] as const;

const SQLSTATE = /^[0-9A-Z]{5}$/;

interface PostgresReport {
  code: string;
  severity: string;
}

function isPostgresReport(error: unknown): error is Error & PostgresReport & Record<string, unknown> {
  const { code, severity } = error as Partial<PostgresReport>;
  return error instanceof Error && typeof code === 'string' && SQLSTATE.test(code) && typeof severity === 'string';
}

/**
 * The driver's error beneath drizzle's wrapper. The wrapper's message is "Failed query: <the
 * statement> params: <every parameter>": the SQL is no answer for an operator, and the
 * parameters can hold payload bytes, which no message or log line may carry.
 */
export function withoutQueryText(error: unknown): unknown {
  let unwrapped = error;
  while (unwrapped instanceof DrizzleQueryError) unwrapped = unwrapped.cause ?? new Error('a database statement failed (the driver gave no reason)');
  return unwrapped;
}

const NAME = String.raw`(?:"[^"]+"|[A-Za-z_][\w$]*)`;
const WRITE = new RegExp(String.raw`^\s*(insert\s+into|update|delete\s+from|merge\s+into)\s+(${NAME}(?:\.${NAME})?)`, 'i');

/**
 * Which step failed, from the statement's text: a write and the table it names first ("insert
 * into crm_customers"). No more of it, since a statement built with sql.raw can hold values
 * inline, and nothing for a read, whose tables come after its select list.
 */
function statementStep(query: string): string | undefined {
  const write = WRITE.exec(query);
  return write ? `${write[1]!.toLowerCase().replace(/\s+/g, ' ')} ${write[2]!.replaceAll('"', '')}` : undefined;
}

// A message a PL/pgSQL function composed (RAISE, P0001 unless it names another SQLSTATE; ASSERT)
// is its author's format with whatever was passed in ("customer % has the blocked email %",
// new.email): a trigger on the table a handler writes puts the row's values there, and nothing
// tells the format's words from the values. So it is withheld whole, and where it was raised (the
// function and line, raisedAt) is shown instead: the format is there to read.
const RAISING_ROUTINES = new Set(['exec_stmt_raise', 'exec_stmt_assert']);
const RAISED_MESSAGE = 'a database function raised this error; its text is not shown, as it may quote the values it was given';

function isRaisedByFunction(error: PostgresReport & Record<string, unknown>): boolean {
  return error.code === 'P0001' || RAISING_ROUTINES.has(error.routine as string);
}

// `where` is a stack of contexts, innermost first; the RAISE's own is PostgreSQL's words around
// the function's signature (schema objects, no values). The lines after it can quote statements.
const RAISE_CONTEXT = /^PL\/pgSQL function (.+) line (\d+) at (?:RAISE|ASSERT)$/;

function raisedAt(error: PostgresReport & Record<string, unknown>): string | undefined {
  if (!isRaisedByFunction(error) || typeof error.where !== 'string') return undefined;
  const context = RAISE_CONTEXT.exec(error.where.split('\n')[0]!);
  return context ? `raised at ${context[1]} line ${context[2]}` : undefined;
}

// Besides a function's (above): a data exception (SQLSTATE class 22) quotes the value it could not
// take in its message ('invalid input syntax for type integer: "…"', 'value "…" is out of range
// for type integer'), and that value is a parameter. Other classes name objects there and put
// values in `detail`.
function messageWithoutValues(error: Error): string {
  if (!isPostgresReport(error)) return error.message;
  if (isRaisedByFunction(error)) return RAISED_MESSAGE;
  if (!error.code.startsWith('22')) return error.message;
  return error.message.replace(/"[^"]*"/g, '"…"');
}

/**
 * The error as it may be shown: every DrizzleQueryError in it (its causes, aggregated errors)
 * replaced by the driver error it wraps, with `statement` saying which step failed; a data
 * exception's message without the value it quotes, a function's RAISE without its text. The
 * errors themselves are left as they are: a changed one gets a view (its prototype is the error)
 * with the clean parts as own properties, so a serializer that walks causes (pino repeats a
 * cause's message and stack in the outer error's) meets only clean ones. The fields in INPUT_QUOTING_FIELDS are still readable on it: whatever
 * writes fields out drops them (withoutInputFields).
 */
export function withoutInput(error: unknown, depth = 0): unknown {
  const query = error instanceof DrizzleQueryError ? innermostQuery(error) : undefined;
  const unwrapped = withoutQueryText(error);
  if (!(unwrapped instanceof Error) || depth > 8) return unwrapped;
  const cause = unwrapped.cause === undefined ? undefined : withoutInput(unwrapped.cause, depth + 1);
  const errors = (unwrapped as Partial<AggregateError>).errors;
  const cleanErrors = Array.isArray(errors) ? errors.map((item) => withoutInput(item, depth + 1)) : errors;
  const errorsChanged = Array.isArray(errors) && cleanErrors!.some((item: unknown, i: number) => item !== errors[i]);
  const message = messageWithoutValues(unwrapped);
  const statement = query === undefined ? undefined : statementStep(query);
  if (cause === unwrapped.cause && !errorsChanged && message === unwrapped.message && statement === undefined) return unwrapped;
  const view = Object.create(unwrapped) as Error;
  Object.defineProperty(view, 'cause', { value: cause, enumerable: false });
  if (errorsChanged) Object.defineProperty(view, 'errors', { value: cleanErrors, enumerable: false });
  if (message !== unwrapped.message) {
    Object.defineProperty(view, 'message', { value: message, enumerable: false });
    if (typeof unwrapped.stack === 'string')
      Object.defineProperty(view, 'stack', { value: unwrapped.stack.replace(unwrapped.message, () => message), enumerable: false });
  }
  if (statement !== undefined) Object.defineProperty(view, 'statement', { value: statement, enumerable: true });
  return view;
}

/** A serialized error (pino's) without the fields that quote input, in nested and aggregated errors too; changed in place. */
export function withoutInputFields<T>(serialized: T, depth = 0): T {
  if (serialized === null || typeof serialized !== 'object' || depth > 4) return serialized;
  const fields = serialized as Record<string, unknown>;
  for (const field of INPUT_QUOTING_FIELDS) delete fields[field];
  for (const value of Object.values(fields)) {
    if (Array.isArray(value)) for (const item of value) withoutInputFields(item, depth + 1);
    else withoutInputFields(value, depth + 1);
  }
  return serialized;
}

function innermostQuery(error: DrizzleQueryError): string {
  return error.cause instanceof DrizzleQueryError ? innermostQuery(error.cause) : error.query;
}

/**
 * What a PostgreSQL error says about what failed, besides its message: the SQLSTATE, the schema
 * objects it names, the function and line of a RAISE, the statement's step (on an error
 * withoutInput returned). Undefined for an error that did not come from PostgreSQL and was not
 * raised by a statement.
 */
export function databaseErrorContext(shown: unknown): string | undefined {
  const parts: string[] = [];
  if (isPostgresReport(shown)) {
    parts.push(`SQLSTATE ${shown.code}`);
    const names = NAMING_FIELDS.flatMap(([field, label]) => (typeof shown[field] === 'string' ? [`${label} ${shown[field]}`] : []));
    if (names.length > 0) parts.push(names.join(', '));
    const raise = raisedAt(shown);
    if (raise !== undefined) parts.push(raise);
  }
  const statement = (shown as { statement?: unknown } | null | undefined)?.statement;
  if (typeof statement === 'string') parts.push(`in ${statement}`);
  return parts.length > 0 ? parts.join('; ') : undefined;
}
