import type { CAC } from 'cac';

/**
 * cac parses with mri, which gets three things wrong for inboxctl:
 * - a value that starts with "-" is read as more flags: `--since -5h` became `-5 -h`, and `-h`
 *   printed the help with exit 0 instead of naming the bad value;
 * - a value that looks like a number becomes one: `--event-id 0012` matched "12", and a 20-digit
 *   Mercado Pago id was rounded;
 * - a kebab-case boolean swallows the next argument (cac registers only its camelCase name with
 *   mri; cacjs/cac#169, open): `restore --dry-run a.gz b.gz` took "a.gz" as the flag's value,
 *   ran no dry run, and restored b.gz.
 * So argv is put in one canonical form before cac sees it: every long option this CLI declares
 * is written by its camelCase name (which mri knows), and every value as `--name=<NUL>value`,
 * which mri keeps as a string whatever it looks like. A process's arguments are C strings and
 * cannot contain NUL, so the mark is unambiguous; `unmarkOptionValues` removes it after parsing.
 * The token after a value option is its value unless it is one of this CLI's options, so a
 * forgotten value (`--since --json`) is still reported as missing.
 */
const MARK = '\u0000';

interface DeclaredOption {
  camelName: string;
  takesValue: boolean;
}

/** Every option any command (or the CLI itself) declares, by each spelling a user may type. */
export function declaredOptions(cli: CAC): Map<string, DeclaredOption> {
  const byToken = new Map<string, DeclaredOption>();
  for (const option of [...cli.globalCommand.options, ...cli.commands.flatMap((c) => c.options)]) {
    const declared = { camelName: option.name, takesValue: !option.isBoolean };
    for (const spelling of option.rawName.replace(/[<[].*$/, '').split(',')) byToken.set(spelling.trim(), declared);
    byToken.set(`--${option.name}`, declared);
  }
  return byToken;
}

export function canonicalArgv(argv: readonly string[], options: ReadonlyMap<string, DeclaredOption>): string[] {
  const isOption = (token: string) => options.has(token.split('=', 1)[0]!);
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const equals = token.indexOf('=');
    const option = token.startsWith('--') ? options.get(equals === -1 ? token : token.slice(0, equals)) : undefined;
    if (!option) out.push(token);
    else if (!option.takesValue) out.push(`--${option.camelName}${equals === -1 ? '' : token.slice(equals)}`);
    else if (equals !== -1) out.push(`--${option.camelName}=${MARK}${token.slice(equals + 1)}`);
    else if (i + 1 < argv.length && !isOption(argv[i + 1]!)) out.push(`--${option.camelName}=${MARK}${argv[++i]}`);
    else out.push(`--${option.camelName}`);
  }
  return out;
}

/** What unmarkOptionValues needs of an option cac declared (its Option). */
interface ParsedOption {
  name: string;
  rawName: string;
  isBoolean?: boolean;
}

/**
 * Takes the marks off the parsed values, in place (cac hands this same object to the action). A
 * value option given again without its value (`--event-id`, `--since 1h --since`) left an unmarked
 * element in the array: cac checks only a lone `true` for a missing value, and a repeatable
 * option's type turned it into the text "true", which `replay --event-id` replayed as an id.
 */
export function unmarkOptionValues(parsed: Record<string, unknown>, options: readonly ParsedOption[]): void {
  const isMarked = (value: unknown) => typeof value === 'string' && value.startsWith(MARK);
  for (const [key, value] of Object.entries(parsed)) {
    if (!Array.isArray(value)) {
      parsed[key] = isMarked(value) ? (value as string).slice(1) : value;
      continue;
    }
    const option = options.find((o) => o.name === key && !o.isBoolean);
    if (option && !value.every(isMarked)) throw new Error(`option \`${option.rawName}\` value is missing`);
    parsed[key] = value.map((v) => (isMarked(v) ? (v as string).slice(1) : v));
  }
}

/** cac's camelCase of an option name (`foo-bar` → `fooBar`), the key it reports an unknown option by. */
const camelCase = (name: string) => name.replaceAll(/([a-z])-([a-z])/g, (_, before: string, after: string) => before + after.toUpperCase());

/**
 * cac names an unknown option by its parsed key (`--fooBar`, also for the `--dry-run` this module
 * rewrote), not as typed: the message gets back the spelling from the user's own argv.
 */
export function unknownOptionAsTyped(message: string, argv: readonly string[]): string {
  return message.replace(/^Unknown option `--([^`]+)`/, (whole, key: string) => {
    const end = argv.indexOf('--');
    for (const token of end === -1 ? argv : argv.slice(0, end)) {
      if (!token.startsWith('--')) continue;
      const name = token.slice(2).split('=', 1)[0]!;
      if (camelCase(name) === key) return `Unknown option \`--${name}\``;
    }
    return whole;
  });
}
