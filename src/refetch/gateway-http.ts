import { parseRetryAfter } from '../web/retry-after.ts';
import { GatewayRejectedError, GatewayRetryAfterError, GatewayUnavailableError } from './errors.ts';
import { parseJsonText } from '../format/json-parse.ts';

export interface GatewayHttpOptions {
  provider: string;
  /** Origin (and optional path prefix) the gateway's paths are appended to. */
  baseUrl: string;
  /** Authentication headers for every request. */
  headers: Record<string, string>;
  /** The API key: masked wherever an answer quoted in a message repeats it (a gateway echoing a bad key). */
  apiKey: string;
  /** Per request, body included: a gateway that stops answering must not hold a worker. */
  timeoutMs: number;
  /** Reads a Retry-After that is an HTTP-date. */
  clock: () => Date;
  fetch?: typeof fetch;
}

const USER_AGENT = 'webhook-inbox-refetch/1';
const MAX_DETAIL_CHARS = 200;
const RETRYABLE_STATUSES = new Set([408, 425, 429]);
/** The statuses Retry-After means something on (RFC 6585 §4, RFC 9110 §10.2.3); on others it is ignored. */
const RETRY_AFTER_STATUSES = new Set([429, 503]);
/**
 * A longer Retry-After is taken as this. Waiting it out spends no attempt, so believing a day (a
 * proxy's default, a typo) would park every event of the provider for that day; asking again
 * after 5 minutes costs one call, and a gateway that still wants quiet says so again. Under the
 * pending-stuck page (10 minutes, ops/prometheus-rules.yml): one answer alone never pages, a
 * gateway that keeps asking does.
 */
const MAX_RETRY_AFTER_SECONDS = 5 * 60;

/**
 * The answer's body as messages quote it (last_error, logs, inboxctl): one line without control
 * characters (nothing that moves a terminal's cursor), the API key masked, at most
 * MAX_DETAIL_CHARS. The key is masked before the cut, so no part of it is left at the end.
 */
async function detailOf(response: Response, apiKey: string): Promise<string> {
  const text = await response.text().catch(() => '');
  const oneLine = (apiKey === '' ? text : text.replaceAll(apiKey, '[api key]')).replace(/[\s\p{Cc}]+/gu, ' ').trim();
  return oneLine.length > MAX_DETAIL_CHARS ? `${oneLine.slice(0, MAX_DETAIL_CHARS)}…` : oneLine;
}

function rejectionHint(status: number): string {
  if (status === 401 || status === 403) return 'the API key is missing, wrong, or lacks read access: check GATEWAY_API_KEY_<PROVIDER> (or api.key)';
  if (status === 404) return 'no such resource there: is api.baseUrl the right environment, and the key of the account (test vs live) that owns the charge?';
  return "the request was refused: check api.baseUrl and the provider's api settings";
}

function retryAfterFailure(provider: string, where: string, answer: string, status: number, response: Response, now: Date): GatewayRetryAfterError | undefined {
  if (!RETRY_AFTER_STATUSES.has(status)) return undefined;
  const seconds = parseRetryAfter(response.headers.get('retry-after'), now);
  if (seconds === undefined) return undefined;
  const retryAt = new Date(now.getTime() + Math.min(seconds, MAX_RETRY_AFTER_SECONDS) * 1000);
  const capped = seconds > MAX_RETRY_AFTER_SECONDS ? ` (asked for ${seconds} s, capped at ${MAX_RETRY_AFTER_SECONDS} s)` : '';
  return new GatewayRetryAfterError(provider, `${where}, Retry-After: no call to the ${provider} API before ${retryAt.toISOString()}${capped}.`, {
    status,
    retryAt,
    requestedSeconds: seconds,
    answer,
  });
}

async function failureFor(options: GatewayHttpOptions, url: string, response: Response): Promise<Error> {
  const { provider } = options;
  const status = response.status;
  const detail = await detailOf(response, options.apiKey);
  const where = `GET ${url} answered ${status}${detail ? `: ${detail}` : ''}`;
  if (status >= 500 || RETRYABLE_STATUSES.has(status)) {
    return retryAfterFailure(provider, where, detail, status, response, options.clock()) ?? new GatewayUnavailableError(provider, `${where}.`, { status });
  }
  if (status >= 300 && status < 400) {
    const location = response.headers.get('location');
    return new GatewayRejectedError(
      provider,
      `${where}, a redirect${location ? ` to ${location}` : ''}: set api.baseUrl to the final address (credentials are never sent on after a redirect).`,
      { status },
    );
  }
  return new GatewayRejectedError(provider, `${where}; ${rejectionHint(status)}.`, { status });
}

function transportFailure(provider: string, url: string, timeoutMs: number, error: unknown): GatewayUnavailableError {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return new GatewayUnavailableError(provider, `GET ${url} did not complete within ${timeoutMs} ms.`, { cause: error });
  }
  const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
  return new GatewayUnavailableError(provider, `GET ${url} failed before an answer (${reason}).`, { cause: error });
}

/** A GatewayGet that the caller (a job being stopped) may also abort. */
export type AbortableGatewayGet = (path: string, signal?: AbortSignal) => Promise<unknown>;

/**
 * One authenticated GET with a deadline, its outcome sorted into the refetch error kinds. Only
 * the path is logged in messages, never the headers (they hold the key). A caller's abort (the
 * job expired, shutdown) is passed on as it is: it says nothing about the gateway.
 */
export function createGatewayGet(options: GatewayHttpOptions): AbortableGatewayGet {
  const base = options.baseUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? fetch;
  const headers = { accept: 'application/json', 'user-agent': USER_AGENT, ...options.headers };
  return async function gatewayGet(path: string, callerSignal?: AbortSignal): Promise<unknown> {
    const url = `${base}${path}`;
    let response: Response;
    let text: string;
    try {
      // One signal for the answer and the body: a gateway that stalls mid-body times out too.
      const deadline = AbortSignal.timeout(options.timeoutMs);
      const signal = callerSignal ? AbortSignal.any([deadline, callerSignal]) : deadline;
      response = await doFetch(url, { headers, signal, redirect: 'manual' });
      if (response.status < 200 || response.status >= 300) throw await failureFor(options, url, response);
      text = await response.text();
    } catch (error) {
      if (error instanceof GatewayUnavailableError || error instanceof GatewayRejectedError || error instanceof GatewayRetryAfterError) throw error;
      if (callerSignal?.aborted) throw callerSignal.reason;
      throw transportFailure(options.provider, url, options.timeoutMs, error);
    }
    try {
      return parseJsonText(text);
    } catch (error) {
      throw new GatewayRejectedError(
        options.provider,
        `GET ${url} answered ${response.status} with a body that is not JSON: is api.baseUrl the gateway's API?`,
        {
          status: response.status,
          cause: error,
        },
      );
    }
  };
}
