/**
 * A micro-benchmark of parseJson (src/gateways/shared/json-body.ts), the parse every JSON delivery takes:
 * `npm exec -- node bench/parse-json.ts`. Not part of `npm run bench`; it prints ns per body, the
 * median of 9 rounds, for three bodies: a typical Stripe event (Stripe's published charge in its
 * event envelope, laid out as Stripe sends it: two-space indent), the same with `\/` in its values
 * (as PHP's json_encode writes URLs), and the same with one escaped key (the careful path).
 */
import { readFileSync } from 'node:fs';
import { parseJson } from '../src/gateways/shared/json-body.ts';

const fixtures = JSON.parse(readFileSync(new URL('../test/support/stripe-openapi-fixtures.json', import.meta.url), 'utf8')) as Record<string, object>;
const event = { ...fixtures.event, id: 'evt_3PgafmB7WZ01zgkW0Fz2mKxT', type: 'charge.succeeded', data: { object: fixtures.charge } };
const stripe = JSON.stringify(event, null, 2);
const bodies = {
  'stripe charge.succeeded': stripe,
  'same, `\\/` in values': stripe.replaceAll('https://', 'https:\\/\\/'),
  'same, one escaped key': stripe.replace('"metadata": {}', '"metadata": {"order\\nid": "1"}'),
};

const ROUNDS = 9;
const PER_ROUND = 20_000;

function nsPerBody(body: Buffer): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < PER_ROUND; i += 1) parseJson(body);
  return Number(process.hrtime.bigint() - started) / PER_ROUND;
}

for (const [name, text] of Object.entries(bodies)) {
  const body = Buffer.from(text);
  nsPerBody(body);
  const rounds = Array.from({ length: ROUNDS }, () => nsPerBody(body)).sort((a, b) => a - b);
  console.log(
    `${name.padEnd(26)} ${String(body.length).padStart(5)} bytes  ${rounds[ROUNDS >> 1]!.toFixed(0).padStart(7)} ns/body (min ${rounds[0]!.toFixed(0)})`,
  );
}
