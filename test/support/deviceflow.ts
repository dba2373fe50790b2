// Device code flow helpers: what a command-line tool does (start a grant,
// poll), and the consent page's JSON calls made by a signed-in customer.
import { expect } from 'vitest';
import type { Customer } from './dashboard.js';
import type { Harness } from './harness.js';

export interface StartedGrant {
  device_code: string;
  user_code: string;
  verification_url: string;
  expires_in: number;
  interval: number;
}

export async function startGrant(h: Harness, clientName = 'acme-cli'): Promise<StartedGrant> {
  const res = await h.http().post('/api/cli/device-code').set('user-agent', 'acme-cli/1.2.3 (linux)').send({ client_name: clientName });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as StartedGrant;
}

export const poll = (h: Harness, deviceCode: string) => h.http().post('/api/cli/token').send({ device_code: deviceCode });

export const getGrant = (c: Customer, userCode: string) => c.agent.get(`/api/cli/grants/${encodeURIComponent(userCode)}`);

/** Approves for `projectId`, in `accountId` when given (else the session's current account). */
export const authorizeGrant = (c: Customer, userCode: string, projectId = c.projectId, accountId?: string) =>
  c.agent
    .post(`/api/cli/grants/${encodeURIComponent(userCode)}/authorize`)
    .set('origin', c.origin)
    .send(accountId === undefined ? { projectId } : { accountId, projectId });

export const denyGrant = (c: Customer, userCode: string) =>
  c.agent
    .post(`/api/cli/grants/${encodeURIComponent(userCode)}/deny`)
    .set('origin', c.origin)
    .send({});

export async function cliKeys(c: Customer, projectId = c.projectId) {
  const res = await c.agent.get(`/api/projects/${projectId}/keys`);
  expect(res.status).toBe(200);
  return (res.body.keys as Array<{ id: string; name: string; source: string; type: string; status: string }>).filter((k) => k.source === 'cli');
}
