import { getWaitingOutRateLimits } from '../refetch/patient-get.ts';
import type { ExpectedSettlement } from '../gateways/shared/ledger.ts';
import type { Finding } from './finding.ts';
import { type LedgerReaderDeps, type ReadProgress, countedGatewayReads } from './read-ledger.ts';

/** Payment objects read per run at most: a month where every credit is missing asks the ledger, not 10,000 payments. */
const MAX_LOOKUPS = 100;

/**
 * A paid payment with no credit in the ledger past the settlement delay, checked against its own
 * payment object where the gateway has one that says when it settles (Asaas): not due yet (a
 * later installment, a longer card term) is no finding; otherwise the finding says what the
 * gateway expects — net amount, credit date — beside what the ledger lacks. A payment that cannot
 * be read keeps its finding as the ledger alone decided it.
 */
export async function checkExpectedCredits(deps: LedgerReaderDeps, findings: Finding[], now: Date, progress: ReadProgress): Promise<Finding[]> {
  const settlement = deps.ledger.paymentSettlement;
  if (!settlement) return findings;
  const patient = countedGatewayReads(deps, progress);
  let lookups = 0;
  const checked: Finding[] = [];
  for (const finding of findings) {
    if (finding.evidence.kind !== 'missing_credit' || lookups >= MAX_LOOKUPS) {
      checked.push(finding);
      continue;
    }
    lookups += 1;
    let expected: ExpectedSettlement;
    try {
      expected = settlement.readPayment(await getWaitingOutRateLimits(patient, settlement.paymentPath(finding.subject), progress));
    } catch {
      checked.push(finding);
      continue;
    }
    if (expected.creditedAt === undefined && expected.expectedCreditAt !== undefined && expected.expectedCreditAt > now) continue;
    const gatewaySays = {
      netAmount: expected.netAmount ?? null,
      expectedCreditAt: expected.expectedCreditAt?.toISOString() ?? null,
      creditedAt: expected.creditedAt?.toISOString() ?? null,
    };
    checked.push({ ...finding, evidence: { ...finding.evidence, gatewaySays } });
  }
  return checked;
}
