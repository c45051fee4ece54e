import type { GatewayModule } from '../shared/gateway-module.ts';
import { githubDriver } from './webhook-driver.ts';

/** GitHub: X-Hub-Signature-256 over the body (a thin config over the shared HMAC verifier); not a payment gateway. */
export const githubGateway: GatewayModule = { name: 'github', driver: githubDriver };
