// Signing up through the real dashboard API, as the dashboard page does.
import request from 'supertest';
import type { Role } from '../../contract/common.js';
import type { Harness } from './harness.js';

export interface Customer {
  agent: ReturnType<typeof request.agent>;
  email: string;
  /** The account of their own, made at sign-up (they are its owner). */
  accountId: string;
  projectId: string;
  origin: string;
  /** Creates a key through the API and returns its plaintext. */
  key(type: 'live' | 'test' | 'secret', projectId?: string): Promise<string>;
}

let n = 0;

export async function signUp(h: Harness, email = `user${++n}-${Date.now()}@example.com`): Promise<Customer> {
  const agent = request.agent(h.app);
  const origin = new URL(h.config.baseUrl).origin;
  const res = await agent.post('/api/auth/signup').set('origin', origin).send({ email, password: 'correct horse battery' });
  if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${JSON.stringify(res.body)}`);
  const projects = await agent.get('/api/projects');
  const projectId = projects.body.projects[0].id as string;
  return {
    agent,
    email,
    accountId: res.body.account.id,
    projectId,
    origin,
    async key(type, pid = projectId) {
      const k = await agent
        .post(`/api/projects/${pid}/keys`)
        .set('origin', origin)
        .send({ name: `${type} key`, type });
      if (k.status !== 201) throw new Error(`key creation failed: ${k.status} ${JSON.stringify(k.body)}`);
      return k.body.key as string;
    },
  };
}

/**
 * `member` joins `owner`'s account with `role` through an invitation, then
 * works in their own account again (accepting makes the joined one current).
 */
export async function joinAccount(owner: Customer, member: Customer, role: Role): Promise<void> {
  const invited = await owner.agent.post(`/api/accounts/${owner.accountId}/invitations`).set('origin', owner.origin).send({ email: member.email, role });
  if (invited.status !== 201) throw new Error(`invitation failed: ${invited.status} ${JSON.stringify(invited.body)}`);
  const invitation = new URL(invited.body.url as string).searchParams.get('invite');
  const joined = await member.agent.post('/api/invitations/accept').set('origin', member.origin).send({ invitation });
  if (joined.status !== 200) throw new Error(`accepting failed: ${joined.status} ${JSON.stringify(joined.body)}`);
  const back = await member.agent.put('/api/session/account').set('origin', member.origin).send({ accountId: member.accountId });
  if (back.status !== 200) throw new Error(`switching back failed: ${back.status} ${JSON.stringify(back.body)}`);
}
