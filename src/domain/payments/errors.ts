import { CodedError } from '../../errors.ts';
/**
 * `require` mode: the merchant's app creates the payment row itself (usually right after the
 * gateway's synchronous API answer). A webhook can beat that answer, so the event is retried with
 * backoff until the row appears, and ends `failed` (with this message) if it never does.
 */
export class PaymentNotYetKnown extends CodedError {
  readonly code = 'payment_not_yet_known';
  readonly provider: string;
  readonly chargeId: string;
  constructor(provider: string, chargeId: string) {
    super(
      `No payment for ${provider} charge ${chargeId} yet. This provider is in "require" mode: the application must create the payments row (provider, gateway_charge_id); the event is retried until it does.`,
    );
    this.provider = provider;
    this.chargeId = chargeId;
  }
}
