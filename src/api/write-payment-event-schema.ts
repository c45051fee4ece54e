/**
 * `npm run contract:schema`: writes docs/payment-event.schema.json from the zod schema of the
 * payment event body (src/delivery/payment-event-body.ts). An entry point, like src/main.ts: the
 * test that compares the committed file with the generated one tells you when to run it.
 */
import { writeFileSync } from 'node:fs';
import { paymentEventJsonSchema } from '../delivery/payment-event-body.ts';

export const PAYMENT_EVENT_SCHEMA_PATH = 'docs/payment-event.schema.json';

export function paymentEventSchemaFileText(): string {
  return `${JSON.stringify(paymentEventJsonSchema(), null, 2)}\n`;
}

if (import.meta.main) {
  writeFileSync(PAYMENT_EVENT_SCHEMA_PATH, paymentEventSchemaFileText());
  console.log(`wrote ${PAYMENT_EVENT_SCHEMA_PATH}`);
}
