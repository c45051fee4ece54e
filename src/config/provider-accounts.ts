import { z } from 'zod';

/**
 * INBOX_CONFIG's `accounts` of a provider: several gateway accounts under one provider, each with
 * a webhook token and an API key of its own (Asaas subaccounts; docs/accounts.md). A webhook
 * request is the account's whose token it carries; its charge is re-read with that account's key.
 */
const accountEntry = z.strictObject({
  id: z
    .string()
    .min(1)
    .max(150)
    .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces')
    .describe('What the inbox calls the account: `webhook_inbox.account`, `payments.account`, `payment.account` in the outbound event.'),
  token: z
    .string()
    .min(1)
    .describe("The authToken of the account's own webhook (`asaas-access-token`); no two accounts, nor the provider's `secrets`, may share one."),
  apiKey: z
    .string()
    .min(1)
    .optional()
    .describe("The account's own API key (Asaas `$aact_…`): its charges are re-read and listed with it. Required when the provider has an API key."),
});

export type ProviderAccountEntry = z.infer<typeof accountEntry>;

export const accountsFileKeys = {
  accounts: z.array(accountEntry).min(1).optional().meta({
    whenUnset: "one account: the provider's own",
    description:
      'Several accounts under this provider (Asaas subaccounts), each `{ "id", "token", "apiKey" }`: `id` names the account (as `payment.account` says it), `token` is the authToken of that account\'s own webhook, `apiKey` its API key, required when the provider has one (`GATEWAY_API_KEY_<PROVIDER>` or `api.key`: the provider\'s own account\'s). A webhook request is attributed to the account whose token it carries (every token compared in constant time); one carrying a `secrets` token is the provider\'s own (account null); any other token is refused (401). Its charge is re-read with that account\'s key ([Accounts](accounts.md#asaas-subaccounts)).',
  }),
};

/** Two accounts with one id or one token, or a token that is also a provider secret: attribution would be ambiguous. */
export function providerAccountsProblems(provider: string, accounts: readonly ProviderAccountEntry[], secrets: readonly string[]): string[] {
  const problems: string[] = [];
  const ids = new Set<string>();
  const tokens = new Set<string>(secrets);
  accounts.forEach((account, index) => {
    if (ids.has(account.id)) problems.push(`provider "${provider}": accounts[${index}]: the id "${account.id}" is given twice`);
    ids.add(account.id);
    // The token itself is never repeated in a message: only where it clashes.
    if (tokens.has(account.token))
      problems.push(
        `provider "${provider}": accounts[${index}] ("${account.id}"): its token is also another account's or a provider secret; each account needs a token of its own`,
      );
    tokens.add(account.token);
  });
  return problems;
}
