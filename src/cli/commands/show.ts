import type { CAC } from 'cac';
import type { ConflictDetails } from '../../inbox/sql/conflicts.ts';
import type { EventDetails, EventKey } from '../../operations/show-event.ts';
import { describeDecision } from '../../operations/decision-text.ts';
import type { CommandContext } from '../context.ts';
import { exitCodes, usageError } from '../exit-codes.ts';
import { formatJsonText, objectFromJsonMembers } from '../../format/json-text.ts';
import { formatDuration } from '../../format/duration.ts';
import { describeProof } from '../../gateways/shared/proof.ts';
import { toJson } from '../output.ts';
import { parseCount, requiredText } from '../parse.ts';
import type { Register } from './types.ts';

interface ShowFlags {
  json?: boolean;
  raw?: boolean;
}

function render(event: EventDetails, now: Date): string[] {
  const at = (d: Date | null) => (d ? `${d.toISOString()} (${formatDuration((now.getTime() - d.getTime()) / 1000)} ago)` : '-');
  return [
    `${event.provider} ${event.eventId}   inbox id ${event.id}`,
    `  type         ${event.eventType}`,
    `  resource     ${event.resourceId ?? '-'}`,
    `  account      ${event.account ?? '-'}`,
    `  status       ${event.status}${event.hasLiveJob ? ' (a job is queued or running)' : ''}`,
    `  decision     ${describeDecision(event.decision, event.decisionDetail)}`,
    `  attempts     ${event.attempts}`,
    `  last error   ${event.lastError ?? '-'}`,
    `  occurred     ${at(event.occurredAt)}`,
    `  received     ${at(event.receivedAt)}${event.source === 'backfill' ? ' by inboxctl backfill (from the gateway API, not a delivery)' : ''}`,
    `  processed    ${at(event.processedAt)}`,
    `  verified     ${event.verification ? describeProof(event.verification) : '- (stored before proofs were kept)'}`,
    `  raw body     ${event.rawBody.length} bytes (print them exactly with --raw)`,
    event.payloadLossy
      ? '  payload      LOSSY: jsonb could not hold the body as sent (U+0000, lone surrogates, invalid UTF-8 → U+FFFD; numbers beyond a double → text); the raw body is exact'
      : '  payload',
    ...formatJsonText(event.payloadJson, { indent: 2 })
      .split('\n')
      .map((l) => `    ${l}`),
    ...conflictLines(event.conflicts, at),
  ];
}

/** Later webhook requests with this id that said something else: when, what differed, how many bytes (exact in --json). */
function conflictLines(conflicts: ConflictDetails[], at: (d: Date) => string): string[] {
  if (conflicts.length === 0) return ['  conflicting duplicates  none'];
  const value = (v: string | number | null) => (v === null ? '-' : JSON.stringify(v));
  return [
    `  conflicting duplicates  ${conflicts.length} (answered 200, not processed; bodies exact in --json)`,
    ...conflicts.flatMap((c) => [
      `    #${c.id}  received ${at(c.receivedAt)}, ${c.rawBody.length} bytes`,
      ...c.differences.map((d) => `      ${d.field.padEnd(14)} ${value(d.stored)} → ${value(d.received)}`),
    ]),
  ];
}

/** The event as JSON: the payload spliced in as PostgreSQL wrote it (exact numbers, any depth), the raw body base64. */
function asJson(event: EventDetails): string {
  const { payloadJson, rawBody, conflicts, ...rest } = event;
  const conflictsJson = conflicts.map(({ rawBody: bytes, ...conflict }) => ({ ...conflict, rawBodyBase64: bytes.toString('base64') }));
  const members = [
    ...Object.entries(rest).map(([key, value]) => [key, JSON.stringify(value)] as const),
    ['payload', formatJsonText(payloadJson, { indent: 2, baseDepth: 1 })] as const,
    ['rawBodyBase64', JSON.stringify(rawBody.toString('base64'))] as const,
    ['conflicts', JSON.stringify(conflictsJson)] as const,
  ];
  return `${objectFromJsonMembers(members, 2)}\n`;
}

/** `show <inbox id>` or `show <provider> <event id>`: one number alone is an inbox id. */
function eventKey(firstArg: unknown, eventIdArg: unknown): EventKey {
  if (eventIdArg !== undefined) return { provider: requiredText(firstArg, 'the provider'), eventId: requiredText(eventIdArg, 'the event id') };
  const text = requiredText(firstArg, 'the inbox id');
  if (!/^\d+$/.test(text))
    throw usageError(`"${text}" is not an inbox id; give an inbox id (inboxctl show 123) or a provider and an event id (inboxctl show stripe evt_…).`);
  return { inboxId: parseCount(text, 'the inbox id', Number.MAX_SAFE_INTEGER) };
}

async function show(context: CommandContext, firstArg: unknown, eventIdArg: unknown, flags: ShowFlags): Promise<number> {
  const key = eventKey(firstArg, eventIdArg);
  if (flags.raw && flags.json) throw usageError('--raw and --json exclude each other: --raw prints the stored bytes alone.');
  const [{ findEvent }, { requireKnownProvider }] = await Promise.all([import('../../operations/show-event.ts'), import('../known-provider.ts')]);
  const event = await context.withDatabase({ boss: false }, async ({ handle }, config) => {
    if ('provider' in key) await requireKnownProvider(handle.db, config, key.provider);
    return findEvent(handle.db, key);
  });
  if (!event) {
    if (flags.json) context.runtime.stdout.write(toJson(null));
    const which = 'provider' in key ? `"${key.eventId}" from provider "${key.provider}"` : `with inbox id ${key.inboxId}`;
    context.notice(`no event ${which} in the inbox (purged? check the archive with \`inboxctl restore FILE --print\`).`);
    return exitCodes.attention;
  }
  if (flags.raw) context.runtime.stdout.write(event.rawBody);
  else if (flags.json) context.runtime.stdout.write(asJson(event));
  else for (const line of render(event, context.now)) context.print(line);
  return exitCodes.ok;
}

export const registerShow: Register = (cli: CAC, run) => {
  cli
    .command(
      'show <providerOrInboxId> [eventId]',
      'One event, by provider and event id or by inbox id: status, decision, attempts, last error, timestamps, payload and conflicting duplicates',
    )
    .usage('show <provider> <eventId> | inboxctl show <inboxId>')
    .option('--raw', 'Print only the raw body, byte for byte (pipe it to a verifier or a file)')
    .option('--json', 'Machine-readable output (payload exact, raw body base64)')
    .example('inboxctl show stripe evt_3PqXyZ2eZvKYlo2C1a2b3c4d')
    .example('inboxctl show 123   # the inbox id a payment event names as its cause')
    .action((first: unknown, eventId: unknown, flags: ShowFlags) => run((context) => show(context, first, eventId, flags)));
};
