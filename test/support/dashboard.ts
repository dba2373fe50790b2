// Signing up through the real dashboard API, as the dashboard page does.
import request from 'supertest';
import type { Harness } from './harness.js';

export interface Customer {
  agent: ReturnType<typeof request.agent>;
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
