import { randomInt } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';

/**
 * The tests' one way to pick a port for a process they start (and may restart on the same port).
 *
 * Not the kernel's pick (listen on port 0): that comes from the ephemeral range, which every other
 * test file's listen(0) servers and outgoing connections draw from too, so a port freed by a
 * restarting service could be handed to another file's server in the gap, and the restarted
 * service's clients would talk to a stranger (seen in CI as 404s from a fake consumer). Ports are
 * drawn at random below the ephemeral range instead, where only another freePort could land.
 */
const FIRST_PORT = 20_000;
const PAST_LAST_PORT = 32_000;
const ATTEMPTS = 100;

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  const ephemeralStart = await ephemeralRangeStart();
  const pastLast = Math.min(PAST_LAST_PORT, ephemeralStart);
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    const port = randomInt(FIRST_PORT, pastLast);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${FIRST_PORT}..${pastLast - 1} after ${ATTEMPTS} tries`);
}

async function ephemeralRangeStart(): Promise<number> {
  const range = await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').catch(() => '');
  const start = Number(range.trim().split(/\s+/)[0]);
  return Number.isInteger(start) && start > FIRST_PORT + 1000 ? start : PAST_LAST_PORT;
}
