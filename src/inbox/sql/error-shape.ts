import type { Values } from './statement.ts';

/**
 * What makes two failures "the same error": the message with what differs per event replaced by
 * a placeholder, so PaymentNotYetKnown for 400 charges is one line of `stats`, not 400. Applied
 * in this order: a quoted value may hold anything; a uuid's groups would otherwise read as ids;
 * numbers go last, after the ids and times that contain digits. PostgreSQL ARE syntax.
 */
export const errorShapeRules: ReadonlyArray<{ what: string; pattern: string; placeholder: string }> = [
  { what: 'double-quoted values', pattern: '"[^"]*"', placeholder: '"…"' },
  // No spaces inside, so the span between two apostrophes ("can't … it's") is left alone.
  { what: "single-quoted values ('amount')", pattern: "'[^'[:space:]]*'", placeholder: "'…'" },
  { what: 'ISO-8601 times', pattern: '\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:?\\d{2})?)?', placeholder: '<time>' },
  { what: 'uuids', pattern: '[[:xdigit:]]{8}-[[:xdigit:]]{4}-[[:xdigit:]]{4}-[[:xdigit:]]{4}-[[:xdigit:]]{12}', placeholder: '<uuid>' },
  // A prefix, an underscore and a digit somewhere: ch_3PqX…, pay_0802…, evt_1. snake_case words without digits (gateway_charge_id) stay.
  { what: 'gateway ids', pattern: '\\m[[:alpha:]]+_\\w*\\d\\w*', placeholder: '<id>' },
  { what: 'long tokens of letters and digits (hex ids)', pattern: '\\m(?=\\w*\\d)(?=\\w*[[:alpha:]])\\w{8,}\\M', placeholder: '<id>' },
  { what: 'numbers (numeric ids, statuses, counts)', pattern: '\\m\\d+(\\.\\d+)?\\M', placeholder: '<n>' },
];

/** The shape of an error text, as SQL over the expression `text`: the rules above as nested regexp_replace, patterns bound as values. */
export function errorShapeSql(text: string, values: Values): string {
  return errorShapeRules.reduce((inner, rule) => `regexp_replace(${inner}, ${values.add(rule.pattern)}, ${values.add(rule.placeholder)}, 'g')`, text);
}
