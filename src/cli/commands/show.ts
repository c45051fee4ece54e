import type { CAC } from 'cac';
import type { EventDetails } from '../../operations/show-event.ts';
import type { CommandContext } from '../context.ts';
import { exitCodes } from '../exit-codes.ts';
import { formatDuration, parseExactJson, toJson } from '../output.ts';
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
    `  attempts     ${event.attempts}`,
    `  last error   ${event.lastError ?? '-'}`,
    `  occurred     ${at(event.occurredAt)}`,
    `  received     ${at(event.receivedAt)}`,
    `  processed    ${at(event.processedAt)}`,
    `  raw body     ${event.rawBody.length} bytes (print them exactly with --raw)`,
    event.payloadLossy ? '  payload      LOSSY: jsonb could not hold the body as sent (U+0000, lone surrogates, invalid UTF-8 → U+FFFD; numbers beyond a double → text); the raw body is exact' : '  payload',
    ...JSON.stringify(parseExactJson(event.payloadJson), null, 2).split('\n').map((l) => `    ${l}`),
  ];
}

async function show(context: CommandContext, provider: string, eventId: string, flags: ShowFlags): Promise<number> {
  const { findEvent } = await import('../../operations/show-event.ts');
  const event = await context.withDatabase({ boss: false }, ({ handle }) => findEvent(handle.db, provider, eventId));
  if (!event) {
    if (flags.json) context.runtime.stdout.write(toJson(null));
    context.notice(`no event "${eventId}" from provider "${provider}" in the inbox (purged? check the archive with \`inboxctl restore FILE --print\`).`);
    return exitCodes.attention;
  }
  if (flags.raw) context.runtime.stdout.write(event.rawBody);
  else if (flags.json) {
    const { payloadJson, rawBody, ...rest } = event;
    context.runtime.stdout.write(`${JSON.stringify({ ...rest, payload: parseExactJson(payloadJson), rawBodyBase64: rawBody.toString('base64') }, null, 2)}\n`);
  } else for (const line of render(event, context.now)) context.print(line);
  return exitCodes.ok;
}

export const registerShow: Register = (cli: CAC, run) => {
  cli
    .command('show <provider> <eventId>', 'One event: status, attempts, last error, timestamps and payload')
    .option('--raw', 'Print only the raw body, byte for byte (pipe it to a verifier or a file)')
    .option('--json', 'Machine-readable output (payload exact, raw body base64)')
    .example('inboxctl show stripe evt_3PqXyZ2eZvKYlo2C1a2b3c4d')
    .action((provider: string, eventId: string, flags: ShowFlags) => run((context) => show(context, String(provider), String(eventId), flags)));
};
