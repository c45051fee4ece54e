import type { CAC } from 'cac';
import type { ConflictDetails } from '../../inbox/sql/conflicts.ts';
import type { EventDetails } from '../../operations/show-event.ts';
import { describeDecision } from '../../operations/decision-text.ts';
import type { CommandContext } from '../context.ts';
import { exitCodes, usageError } from '../exit-codes.ts';
import { formatJsonText, objectFromJsonMembers } from '../../format/json-text.ts';
import { formatDuration } from '../../format/duration.ts';
import { describeProof } from '../../providers/proof.ts';
import { toJson } from '../output.ts';
import { requiredText } from '../parse.ts';
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
    `  status       ${event.status}${event.hasLiveJob ? ' (a job is queued or running)' : ''}`,
    `  decision     ${describeDecision(event.decision, event.decisionDetail)}`,
    `  attempts     ${event.attempts}`,
    `  last error   ${event.lastError ?? '-'}`,
    `  occurred     ${at(event.occurredAt)}`,
    `  received     ${at(event.receivedAt)}${event.source === 'backfill' ? ' by inboxctl backfill (from the gateway API, not a delivery)' : ''}`,
    `  processed    ${at(event.processedAt)}`,
    `  verified     ${event.verification ? describeProof(event.verification) : '- (stored before proofs were kept)'}`,
    `  raw body     ${event.rawBody.length} bytes (print them exactly with --raw)`,
    event.payloadLossy ? '  payload      LOSSY: jsonb could not hold the body as sent (U+0000, lone surrogates, invalid UTF-8 → U+FFFD; numbers beyond a double → text); the raw body is exact' : '  payload',
    ...formatJsonText(event.payloadJson, { indent: 2 }).split('\n').map((l) => `    ${l}`),
    ...conflictLines(event.conflicts, at),
  ];
}

/** Later deliveries with this id that said something else: when, what differed, how many bytes (exact in --json). */
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

async function show(context: CommandContext, providerArg: unknown, eventIdArg: unknown, flags: ShowFlags): Promise<number> {
  const provider = requiredText(providerArg, 'the provider');
  const eventId = requiredText(eventIdArg, 'the event id');
  if (flags.raw && flags.json) throw usageError('--raw and --json exclude each other: --raw prints the stored bytes alone.');
  const [{ findEvent }, { requireKnownProvider }] = await Promise.all([import('../../operations/show-event.ts'), import('../known-provider.ts')]);
  const event = await context.withDatabase({ boss: false }, async ({ handle }, config) => {
    await requireKnownProvider(handle.db, config, provider);
    return findEvent(handle.db, provider, eventId);
  });
  if (!event) {
    if (flags.json) context.runtime.stdout.write(toJson(null));
    context.notice(`no event "${eventId}" from provider "${provider}" in the inbox (purged? check the archive with \`inboxctl restore FILE --print\`).`);
    return exitCodes.attention;
  }
  if (flags.raw) context.runtime.stdout.write(event.rawBody);
  else if (flags.json) context.runtime.stdout.write(asJson(event));
  else for (const line of render(event, context.now)) context.print(line);
  return exitCodes.ok;
}

export const registerShow: Register = (cli: CAC, run) => {
  cli
    .command('show <provider> <eventId>', 'One event: status, decision, attempts, last error, timestamps, payload and conflicting duplicates')
    .option('--raw', 'Print only the raw body, byte for byte (pipe it to a verifier or a file)')
    .option('--json', 'Machine-readable output (payload exact, raw body base64)')
    .example('inboxctl show stripe evt_3PqXyZ2eZvKYlo2C1a2b3c4d')
    .action((provider: unknown, eventId: unknown, flags: ShowFlags) => run((context) => show(context, provider, eventId, flags)));
};
