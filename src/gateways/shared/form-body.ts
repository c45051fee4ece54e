/**
 * Decodes an `application/x-www-form-urlencoded` body with bracket keys (`transaction[status]=paid`,
 * `items[0][id]=1`, `tags[]=a`) into nested objects, the shape Rails/PHP senders mean, so the
 * `payload` column holds JSON a handler can read. Objects whose keys are exactly 0..n-1 become
 * arrays. Keys that would reach Object.prototype (`__proto__`, `constructor`, `prototype`) and
 * keys that clash with an earlier scalar are dropped; the raw bytes stay in raw_body regardless.
 */
import { PayloadTooDeepError } from '../../errors.ts';
import { MAX_JSON_DEPTH } from './json-body.ts';

type FormObject = { [key: string]: FormValue };
type FormValue = string | FormObject;

const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

function segmentsOf(key: string): string[] | undefined {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
  if (!match) return undefined;
  const rest = [...match[2]!.matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1]!);
  // Each segment is one level of the decoded object (the root is level 1): the same limit as JSON.
  if (rest.length + 1 > MAX_JSON_DEPTH) throw new PayloadTooDeepError(MAX_JSON_DEPTH);
  return [match[1]!, ...rest];
}

function assign(root: FormObject, segments: string[], value: string): void {
  let node = root;
  for (let i = 0; i < segments.length; i++) {
    let segment = segments[i]!;
    if (segment === '') segment = String(Object.keys(node).length);
    if (FORBIDDEN.has(segment)) return;
    if (i === segments.length - 1) {
      if (typeof node[segment] !== 'object') node[segment] = value;
      return;
    }
    const next = node[segment];
    if (typeof next === 'string') return;
    node = next ?? (node[segment] = {});
  }
}

function withArrays(value: FormValue): unknown {
  if (typeof value === 'string') return value;
  const keys = Object.keys(value);
  const entries = keys.map((key) => [key, withArrays(value[key]!)] as const);
  const isList = keys.length > 0 && keys.every((key, index) => key === String(index));
  return isList ? entries.map(([, v]) => v) : Object.fromEntries(entries);
}

export function decodeBracketForm(text: string): Record<string, unknown> {
  const root: FormObject = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const segments = segmentsOf(key);
    if (segments) assign(root, segments, value);
  }
  return withArrays(root) as Record<string, unknown>;
}
