import { request } from 'node:http';

export interface HostRequest {
  method?: 'GET' | 'POST';
  /** The Host header to send, whatever address the socket connects to (fetch will not forge it). */
  host: string;
  /** An array is sent as that many header lines (`Authorization` twice). */
  headers?: Record<string, string | string[]>;
  /** Sent as application/x-www-form-urlencoded. */
  form?: Record<string, string>;
  /** A raw body (set its content-type in `headers`); ignored when `form` is given. */
  body?: string;
  /** The client's own address (any of 127.0.0.0/8 on Linux): a second client on the same machine. */
  localAddress?: string;
}

export interface HostResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One request to `url` over a real socket with a chosen Host header and client address. */
export function requestWithHost(url: string, options: HostRequest): Promise<HostResponse> {
  const body = options.form ? new URLSearchParams(options.form).toString() : options.body;
  const headers: Record<string, string | string[]> = { host: options.host, connection: 'close', ...options.headers };
  if (options.form) headers['content-type'] = 'application/x-www-form-urlencoded';
  return new Promise((resolve, reject) => {
    const sent = request(url, { method: options.method ?? 'GET', headers, localAddress: options.localAddress }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    sent.on('error', reject);
    sent.end(body);
  });
}
