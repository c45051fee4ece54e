/**
 * Two Zoop event envelopes as imobanco/zoop-wrapper published them (examples/data/events/, abridged to
 * the fields around the transaction; the wrapper blanked every id): transaction.failed carries the
 * transaction directly under `payload` with an empty event id, and
 * transaction.pre_authorization.succeeded carries it under a top-level `object`, with no event id
 * and no created_at.
 */
export function publishedFailed(transactionId = '') {
  return JSON.stringify({
    type: 'transaction.failed',
    uri: '/v1/marketplaces/{{MARKETPLACE_ID}}/events/{{EVENTS}}',
    resource: 'event',
    status: 'succeeded',
    id: '',
    created_at: '2020-06-25T18:03:27+00:00',
    source: 'API',
    payload: {
      error: {
        status: 'Bad Request',
        status_code: 400,
        type: 'invalid_request_error',
        category: 'invalid_payment_information',
        message: 'Invalid payment information. Please verify request parameters.',
      },
      id: transactionId,
      resource: 'transaction',
      status: 'failed',
      amount: '10.05',
      original_amount: '10.05',
      currency: 'BRL',
      description: 'venda',
      payment_type: 'credit',
      gateway_authorizer: 'cielo',
      refunded: false,
      voided: false,
      captured: true,
      fees: '0.00',
      created_at: '2020-06-25T18:03:27+00:00',
      updated_at: '2020-06-25T18:03:27+00:00',
    },
  });
}

export function publishedPreAuthorization(transactionId = '') {
  return JSON.stringify({
    type: 'transaction.pre_authorization.succeeded',
    resource: 'transaction',
    description: 'A R$14.99 transaction has successfully pre-authorized',
    object: {
      id: transactionId,
      resource: 'transaction',
      status: 'pre_authorized',
      amount: '14.99',
      original_amount: '14.99',
      currency: 'BRL',
      description: 'Payment for customer',
      payment_type: 'credit',
      gateway_authorizer: 'rede',
      refunded: false,
      voided: false,
      captured: false,
      fees: '0.00',
      created_at: '2020-06-26T12:20:16+00:00',
      updated_at: '2020-06-26T12:20:18+00:00',
    },
  });
}
