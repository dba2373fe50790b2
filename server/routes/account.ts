// Dashboard API handlers: thin adapters from ts-rest to the account modules.
import { initServer } from '@ts-rest/express';
import type { CookieOptions, Response } from 'express';
import { contract } from '../../contract/index.js';
import { SESSION_COOKIE, SESSION_TTL_MS } from '../accounts/service.js';
import { KNOWN_DEVICE_COOKIE, KNOWN_DEVICE_TTL_MS } from '../accounts/throttle.js';
import { memberOf, sessionOf } from '../http/context.js';
import type { RouteDeps } from '../services.js';
import { readCookie } from '../http/cookies.js';

const s = initServer();

export const accountRoutes = ({ services, config }: RouteDeps) => {
  const cookie: CookieOptions = {
    httpOnly: true,
    sameSite: 'lax',
    secure: config.baseUrl.startsWith('https://'),
    path: '/',
  };
  /** The session, and the known-device cookie that exempts this browser from shared sign-in limits (accounts/throttle.ts). */
  const signedIn = (res: Response, { token, knownDevice }: { token: string; knownDevice: string }) => {
    res.cookie(SESSION_COOKIE, token, { ...cookie, maxAge: SESSION_TTL_MS });
    res.cookie(KNOWN_DEVICE_COOKIE, knownDevice, { ...cookie, path: '/api/auth', maxAge: KNOWN_DEVICE_TTL_MS });
  };

  return s.router(contract.account, {
    signup: async ({ body, req, res }) => {
      const { user, account, role, ...cookies } = await services.accounts.signup(body, services.clientIp(req));
      signedIn(res, cookies);
      return { status: 201, body: await services.accounts.sessionView(user, account, role) };
    },
    login: async ({ body, req, res }) => {
      const client = { ip: services.clientIp(req), knownDevice: readCookie(req, KNOWN_DEVICE_COOKIE) };
      const { user, account, role, ...cookies } = await services.accounts.login(body.email, body.password, client, body.invitation);
      signedIn(res, cookies);
      return { status: 200, body: await services.accounts.sessionView(user, account, role) };
    },
    logout: async ({ req, res }) => {
      await services.accounts.logout(sessionOf(req));
      res.clearCookie(SESSION_COOKIE, cookie);
      return { status: 204, body: undefined };
    },
    getAccount: async ({ req }) => ({ status: 200, body: await services.accounts.view(sessionOf(req), memberOf(req)) }),
    getUsage: async ({ req, query }) => ({ status: 200, body: await services.accounts.usage(sessionOf(req), query.period) }),
    listPlans: async () => ({ status: 200, body: { plans: services.accounts.plans() } }),
    setPlan: async ({ req, body }) => ({ status: 200, body: await services.accounts.setPlan(sessionOf(req), body.plan) }),
    listProjects: async ({ req }) => ({
      status: 200,
      body: { projects: await services.projects.list(sessionOf(req).accountId) },
    }),
    createProject: async ({ req, body }) => ({
      status: 201,
      body: await services.projects.create(sessionOf(req).accountId, body.name, body.allowedDomains),
    }),
    updateProject: async ({ req, params, body }) => ({
      status: 200,
      body: await services.projects.update(sessionOf(req).accountId, params.projectId, body),
    }),
    listKeys: async ({ req, params }) => ({
      status: 200,
      body: { keys: await services.keys.list(sessionOf(req).accountId, params.projectId) },
    }),
    createKey: async ({ req, params, body }) => ({
      status: 201,
      body: await services.keys.create(sessionOf(req).accountId, params.projectId, body.name, body.type),
    }),
    revokeKey: async ({ req, params }) => ({
      status: 200,
      body: { apiKey: await services.keys.revoke(sessionOf(req).accountId, params.projectId, params.keyId) },
    }),
  });
};
