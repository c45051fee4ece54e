import type { z } from 'zod';

/**
 * What a configuration problem says. For a bad key of a record (a provider or destination name in
 * INBOX_CONFIG) zod 4 says only "Invalid key in record" and keeps the key schema's own message, the
 * one that says what a name may be, one level down: that one is shown.
 */
export function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_key' && issue.issues.length > 0) return issue.issues.map((keyIssue) => keyIssue.message).join('; ');
  return issue.message;
}
