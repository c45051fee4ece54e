import { CodedError } from '../errors.ts';
/** PORT or HOST cannot be listened on; the message is the one line an operator reads. */
export class PortUnavailableError extends CodedError {
  readonly code: 'port_in_use' | 'port_not_permitted' | 'host_not_local';
  constructor(code: PortUnavailableError['code'], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** listen()'s error as what to change, or undefined when it is none of the ones a setting explains. */
export function portUnavailable(error: unknown, port: number, host: string): PortUnavailableError | undefined {
  switch ((error as { code?: unknown }).code) {
    case 'EADDRINUSE':
      return new PortUnavailableError(
        'port_in_use',
        `PORT ${port} is already in use on ${host}: another process listens there (another webhook-inbox?). Stop it, or set PORT to a free port.`,
        { cause: error },
      );
    case 'EACCES':
      return new PortUnavailableError(
        'port_not_permitted',
        `PORT ${port} on ${host} needs privileges this user does not have (ports below 1024): set PORT to 1024 or above.`,
        { cause: error },
      );
    case 'EADDRNOTAVAIL':
      return new PortUnavailableError(
        'host_not_local',
        `HOST ${host} is not an address of this machine: set HOST to one of its addresses, or 0.0.0.0 for all.`,
        { cause: error },
      );
    default:
      return undefined;
  }
}
