import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * JSON logs on stdout. Secrets and signature headers are redacted wherever they appear; payload
 * bodies are never passed to the logger in the first place.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'webhook-inbox' },
      redact: {
        paths: [
          'secret',
          'secrets',
          '*.secret',
          '*.secrets',
          'headers["stripe-signature"]',
          'headers["webhook-signature"]',
          'headers.authorization',
          'headers["asaas-access-token"]',
          'headers["x-hub-signature"]',
          'headers["x-hub-signature-256"]',
          'headers["x-signature"]',
          'headers["x-shopify-hmac-sha256"]',
          'headers["x-webhook-asymmetric-signature"]',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
