import { type Database, drizzleExecutor } from '../db/client.ts';
import { type VerifiableEvent, findVerifiableEvent, findVerifiableEventsSince } from '../inbox/sql/verifiable-events.ts';
import { type Reverification, type SecretMatch, type VerificationProof, verificationProofSchema } from '../gateways/shared/proof.ts';
import type { ProviderDriver } from '../gateways/shared/webhook-driver.ts';

/**
 * `inboxctl verify`: each stored event's authentication checked again against the secrets
 * configured NOW — an audit after a rotation (do old events still verify, and with which
 * position?) or a suspected leak (which events were signed with the leaked secret?).
 */

export interface VerifyDeps {
  db: Database;
  /** The configured driver of a provider (with its current secrets); undefined when it is no longer configured. */
  driverFor(provider: string): ProviderDriver | undefined;
}

export type VerifyOutcome = Reverification | { outcome: 'not_checkable'; reason: string };

export interface EventVerification {
  id: number;
  provider: string;
  eventId: string;
  eventType: string;
  receivedAt: Date;
  /** The proof stored at receipt; null for rows stored before proofs were kept. */
  proof: VerificationProof | null;
  /** The secret that matched at receipt, when one did. */
  matchedAtReceipt: SecretMatch | null;
  now: VerifyOutcome;
}

async function checkAgain(driver: ProviderDriver | undefined, event: VerifiableEvent, proof: VerificationProof | null): Promise<VerifyOutcome> {
  if (proof === null) return { outcome: 'not_checkable', reason: 'no proof stored (received before proofs were kept): no signature headers to check again' };
  if (proof.scheme === 'gateway-api') return { outcome: 'not_checkable', reason: `fetched from the gateway API (${proof.endpoint}), not signed` };
  if (proof.scheme === 'none') return { outcome: 'not_checkable', reason: 'accepted without authentication (no token configured then)' };
  if (!driver) return { outcome: 'no_match', reason: `provider "${event.provider}" is not configured now` };
  return driver.reverify({ rawBody: event.rawBody, proof });
}

async function verifyOne(deps: VerifyDeps, event: VerifiableEvent): Promise<EventVerification> {
  const proof = event.verificationJson === null ? null : verificationProofSchema.parse(JSON.parse(event.verificationJson));
  return {
    id: event.id,
    provider: event.provider,
    eventId: event.eventId,
    eventType: event.eventType,
    receivedAt: event.receivedAt,
    proof,
    matchedAtReceipt: proof !== null && 'secret' in proof ? proof.secret : null,
    now: await checkAgain(deps.driverFor(event.provider), event, proof),
  };
}

/** One event by its inbox id; undefined when there is none. */
export async function verifyEventById(deps: VerifyDeps, id: number): Promise<EventVerification | undefined> {
  const event = await findVerifiableEvent(drizzleExecutor(deps.db), id);
  return event && verifyOne(deps, event);
}

export interface VerifySinceFilter {
  since: Date;
  provider?: string;
  /** Rows read per query. Default 200 (raw bodies included). */
  pageSize?: number;
}

/** Every event received since `since` (of one provider, if given), oldest id first, a page at a time. */
export async function* verifyEventsSince(deps: VerifyDeps, filter: VerifySinceFilter): AsyncGenerator<EventVerification> {
  const db = drizzleExecutor(deps.db);
  const limit = filter.pageSize ?? 200;
  let afterId = 0;
  for (;;) {
    const page = await findVerifiableEventsSince(db, { since: filter.since, provider: filter.provider, afterId, limit });
    for (const event of page) yield await verifyOne(deps, event);
    if (page.length < limit) return;
    afterId = page.at(-1)!.id;
  }
}
