import { GatewayRejectedError, GatewayUnavailableError } from './errors.ts';

export interface GatewayHttpOptions {
  provider: string;
  /** Origin (and optional path prefix) the gateway's paths are appended to. */
  baseUrl: string;
  /** Authentication headers for every request. */
  headers: Record<string, string>;
  /** Per request, body included: a gateway that stops answering must not hold a worker. */
  timeoutMs: number;
  fetch?: typeof fetch;
}

const USER_AGENT = 'webhook-inbox-refetch/1';
const MAX_DETAIL_CHARS = 200;
const RETRYABLE_STATUSES = new Set([408, 425, 429]);

function retryAfterSeconds(header: string | null): number | undefined {
  if (header === null) return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

async function detailOf(response: Response): Promise<string> {
  const text = await response.text().catch(() => '');
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > MAX_DETAIL_CHARS ? `${oneLine.slice(0, MAX_DETAIL_CHARS)}…` : oneLine;
}

function rejectionHint(status: number): string {
  if (status === 401 || status === 403) return 'the API key is missing, wrong, or lacks read access: check GATEWAY_API_KEY_<PROVIDER> (or api.key)';
  if (status === 404) return 'no such resource there: is api.baseUrl the right environment, and the key of the account (test vs live) that owns the charge?';
  return 'the request was refused: check api.baseUrl and the provider\'s api settings';
}

async function failureFor(provider: string, url: string, response: Response): Promise<Error> {
  const status = response.status;
  const detail = await detailOf(response);
  const where = `GET ${url} answered ${status}${detail ? `: ${detail}` : ''}`;
  if (status >= 500 || RETRYABLE_STATUSES.has(status)) {
    return new GatewayUnavailableError(provider, `${where}.`, { status, retryAfterSeconds: retryAfterSeconds(response.headers.get('retry-after')) });
  }
  if (status >= 300 && status < 400) {
    const location = response.headers.get('location');
    return new GatewayRejectedError(provider, `${where}, a redirect${location ? ` to ${location}` : ''}: set api.baseUrl to the final address (credentials are never sent on after a redirect).`, { status });
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
      if (response.status < 200 || response.status >= 300) throw await failureFor(options.provider, url, response);
      text = await response.text();
    } catch (error) {
      if (error instanceof GatewayUnavailableError || error instanceof GatewayRejectedError) throw error;
      if (callerSignal?.aborted) throw callerSignal.reason;
      throw transportFailure(options.provider, url, options.timeoutMs, error);
    }
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new GatewayRejectedError(options.provider, `GET ${url} answered ${response.status} with a body that is not JSON: is api.baseUrl the gateway's API?`, {
        status: response.status,
        cause: error,
      });
    }
  };
}
