/**
 * JSON shown to an operator is re-laid-out as text, never turned into JavaScript values and back:
 * a number keeps its digits (a 64-bit id is not rounded), and nesting of any depth works (the
 * reviver and JSON.stringify recurse, and threw RangeError past about 3,000 levels, far below what
 * jsonb holds). JSON.parse, which is iterative in V8, only checks that the text is JSON.
 */

export interface JsonLayout {
  /** Spaces per level; 0 = compact, on one line. */
  indent: number;
  /** Levels the text sits at inside an enclosing object (its continuation lines are indented that much more). */
  baseDepth?: number;
  /**
   * Levels laid out one member per line; anything deeper goes compact on its line, whole. Keeps
   * the output linear in the input: indenting 10,000 levels would print 100 million spaces.
   */
  maxIndentedDepth?: number;
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);
const STRUCTURAL = new Set(['{', '}', '[', ']', ',', ':', '"']);

/** The end (exclusive) of the string literal that starts at `start`. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i + 1;
}

function nextNonSpace(text: string, from: number): number {
  let i = from;
  while (WHITESPACE.has(text[i]!)) i++;
  return i;
}

/** `text` (JSON; throws SyntaxError if it is not) laid out as JSON.stringify(value, null, indent) would. */
export function formatJsonText(text: string, layout: JsonLayout): string {
  JSON.parse(text);
  const { indent, baseDepth = 0, maxIndentedDepth = 32 } = layout;
  const broken = (depth: number) => indent > 0 && depth <= maxIndentedDepth;
  const newline = (depth: number) => `\n${' '.repeat(indent * (baseDepth + depth))}`;
  const out: string[] = [];
  let depth = 0;
  for (let i = nextNonSpace(text, 0); i < text.length; i = nextNonSpace(text, i)) {
    const c = text[i]!;
    if (c === '"') {
      const end = stringEnd(text, i);
      out.push(text.slice(i, end));
      i = end;
    } else if (c === '{' || c === '[') {
      const after = nextNonSpace(text, i + 1);
      if (text[after] === '}' || text[after] === ']') {
        out.push(c, text[after]!);
        i = after + 1;
      } else {
        depth += 1;
        out.push(c, broken(depth) ? newline(depth) : '');
        i += 1;
      }
    } else if (c === '}' || c === ']') {
      out.push(broken(depth) ? newline(depth - 1) : '', c);
      depth -= 1;
      i += 1;
    } else if (c === ',') {
      out.push(',', broken(depth) ? newline(depth) : '');
      i += 1;
    } else if (c === ':') {
      out.push(broken(depth) ? ': ' : ':');
      i += 1;
    } else {
      // A number, true, false or null: copied as written.
      let end = i;
      while (end < text.length && !STRUCTURAL.has(text[end]!) && !WHITESPACE.has(text[end]!)) end++;
      out.push(text.slice(i, end));
      i = end;
    }
  }
  return out.join('');
}

/**
 * An object's JSON from members that are already JSON text (a formatted payload among them),
 * laid out like JSON.stringify(object, null, indent) at the top level.
 */
export function objectFromJsonMembers(members: ReadonlyArray<readonly [key: string, json: string]>, indent: number): string {
  if (indent === 0) return `{${members.map(([key, json]) => `${JSON.stringify(key)}:${json}`).join(',')}}`;
  const pad = ' '.repeat(indent);
  return `{\n${members.map(([key, json]) => `${pad}${JSON.stringify(key)}: ${json}`).join(',\n')}\n}`;
}
