// The one place that reads the environment. Everything else receives a Config.
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { LIMITS } from '../contract/identify.js';

export const PLAN_NAMES = ['free', 'builder', 'growth', 'scale'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

const PlanLimits = z.object({
  rps: z.number().int().positive(),
  monthly: z.number().int().nonnegative(),
});
export type PlanLimits = z.infer<typeof PlanLimits>;
export type PlanTable = Record<PlanName, PlanLimits>;

/** Spec section 8. */
export const DEFAULT_PLANS: PlanTable = {
  free: { rps: 10, monthly: 10_000 },
  builder: { rps: 1_000, monthly: 50_000 },
  growth: { rps: 1_000, monthly: 250_000 },
  scale: { rps: 1_000, monthly: 2_000_000 },
};

export const DEFAULT_DB_TIMEOUT_MS = 3_000;
export const DEFAULT_CACHE_TTL_MS = 2_000;
/** Recent visitors whose document and tokens identify keeps per process (VISITOR_CACHE_SIZE). */
export const DEFAULT_VISITOR_CACHE_SIZE = 50_000;
/** VISITOR_CACHE_SIZE as the server reads it, and as `npm start` reads it to size the heap. */
export const visitorCacheSizeSchema = z.coerce.number().int().min(0).max(10_000_000).default(DEFAULT_VISITOR_CACHE_SIZE);
/** Request bodies a process parses and handles at once (BODY_BUDGET_BYTES): 16 of the largest identify takes. */
export const DEFAULT_BODY_BUDGET_BYTES = 16 * LIMITS.bodyBytes;
// The HTTP server's limits on slow and idle clients, per process (server/http/server.ts).
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5_000;
export const DEFAULT_MAX_CONNECTIONS = 1_000;
/**
 * Password strength checks waiting or running at once (PASSWORD_CHECK_QUEUE):
 * one sign-up waits behind at most 3 others, under a second even when they
 * are hostile passwords (0.1–0.2 s of zxcvbn each).
 */
export const DEFAULT_PASSWORD_CHECK_QUEUE = 4;
/**
 * How long one password check may run (PASSWORD_CHECK_TIMEOUT_MS): a safety
 * net for a stuck worker, well above an ordinary password's few ms and a
 * hostile one's 0.1–0.5 s (in a freshly started worker).
 */
export const DEFAULT_PASSWORD_CHECK_TIMEOUT_MS = 1_000;
export const DEFAULT_RETENTION_DAYS = 90;
/** The audit log is kept at least this long (and this long by default). */
export const MIN_AUDIT_RETENTION_DAYS = 400;

/** Who may sign up; see server/accounts/signupPolicy.ts. */
export const SIGNUP_MODES = ['open', 'invite', 'closed'] as const;
export type SignupMode = (typeof SIGNUP_MODES)[number];

/** With WORKERS > 1: the IP geolocation and ASN data in the primary only (workers ask it), or in every worker. */
export const EDGE_DATA_MODES = ['shared', 'per-worker'] as const;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** TRUST_PROXY: a hop count ("1") or a comma-separated list of CIDRs/addresses. */
const TrustProxy = z
  .string()
  .trim()
  .transform((s, ctx) => {
    if (s === '') return { hops: 0, cidrs: [] as string[] };
    if (/^\d+$/.test(s)) return { hops: Number(s), cidrs: [] as string[] };
    const cidrs = s
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    for (const c of cidrs) {
      if (!/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(c)) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: `"${c}" is not an IP address or CIDR` });
        return z.NEVER;
      }
    }
    return { hops: 0, cidrs };
  });
export type TrustProxy = z.output<typeof TrustProxy>;

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  BASE_URL: z.string().url().optional(),
  MONGODB_URI: z
    .string()
    .regex(/^mongodb(\+srv)?:\/\//, 'must start with mongodb:// or mongodb+srv://')
    .optional(),
  MONGODB_DB: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,60}$/, 'letters, digits, _ and - only')
    .default('deviceid'),
  DATA_DIR: z.string().min(1).default('./.data'),
  TRUST_PROXY: TrustProxy.default(''),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
  PLANS: z
    .string()
    .transform((s, ctx) => {
      let raw: unknown;
      try {
        raw = JSON.parse(s);
      } catch {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'is not valid JSON' });
        return z.NEVER;
      }
      const parsed = z.record(z.enum(PLAN_NAMES), PlanLimits.partial()).safeParse(raw);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          message: `${issue.path.join('.') || '(root)'}: ${issue.message}`,
        });
        return z.NEVER;
      }
      return parsed.data;
    })
    .optional(),
  SERVER_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  LISTS_DIR: z.string().min(1).optional(),
  TLS_CERT: z.string().min(1).optional(),
  TLS_KEY: z.string().min(1).optional(),
  TLS_HEADER_JA4: z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, 'must be a header name')
    .default('x-ja4'),
  TLS_HEADER_CIPHER: z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, 'must be a header name')
    .default('x-tls-cipher'),
  TLS_HEADER_VERSION: z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, 'must be a header name')
    .default('x-tls-version'),
  SIGNUP: z.enum(SIGNUP_MODES).default('invite'),
  SIGNUPS_PER_IP_PER_HOUR: z.coerce.number().int().min(1).max(100_000).default(5),
  PASSWORD_CHECK_QUEUE: z.coerce.number().int().min(1).max(10_000).default(DEFAULT_PASSWORD_CHECK_QUEUE),
  PASSWORD_CHECK_TIMEOUT_MS: z.coerce.number().int().min(1).max(60_000).default(DEFAULT_PASSWORD_CHECK_TIMEOUT_MS),
  PLAN_SELF_SERVICE: z.enum(['true', 'false']).default('false'),
  RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).default(DEFAULT_RETENTION_DAYS),
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(MIN_AUDIT_RETENTION_DAYS).max(36_500).default(MIN_AUDIT_RETENTION_DAYS),
  DB_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(DEFAULT_DB_TIMEOUT_MS),
  WORKERS: z.coerce.number().int().min(1).max(64).optional(),
  EDGE_DATA: z.enum(EDGE_DATA_MODES).default('shared'),
  NODE_ENV: z.string().optional(),
  CACHE_TTL_MS: z.coerce.number().int().min(0).max(60_000).default(DEFAULT_CACHE_TTL_MS),
  VISITOR_CACHE_SIZE: visitorCacheSizeSchema,
  BODY_BUDGET_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .max(2 ** 31)
    .default(DEFAULT_BODY_BUDGET_BYTES),
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(DEFAULT_REQUEST_TIMEOUT_MS),
  HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(DEFAULT_HEADERS_TIMEOUT_MS),
  // Announced to clients in whole seconds (`Keep-Alive: timeout=1`).
  KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(600_000).default(DEFAULT_KEEP_ALIVE_TIMEOUT_MS),
  MAX_CONNECTIONS: z.coerce.number().int().min(1).max(1_000_000).default(DEFAULT_MAX_CONNECTIONS),
  WEBHOOKS_ALLOW_PRIVATE: z.enum(['true', 'false']).default('false'),
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  METRICS_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
  DEVDB_BACKEND: z.enum(['sqlite', 'postgresql']).default('sqlite'),
  DEVDB_POSTGRESQL_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
});

export interface Config {
  port: number;
  baseUrl: string;
  mongodbUri: string | undefined;
  mongodbDb: string;
  dataDir: string;
  trustProxy: TrustProxy;
  logLevel: (typeof LOG_LEVELS)[number];
  /** `auto`: readable lines when stdout is a terminal, JSON lines otherwise. */
  logFormat: 'auto' | 'json' | 'pretty';
  plans: PlanTable;
  serverSecret: string;
  /** Tor exit, blocklist, datacenter, VPN and proxy lists (re-read when they change). */
  listsDir: string;
  /** Serve HTTPS directly (and compute JA4) when both are set. */
  tls: { certFile: string; keyFile: string } | null;
  /** Headers a trusted TLS-terminating proxy uses to forward JA4, cipher and version. */
  tlsHeaders: { ja4: string; cipher: string; version: string };
  devdb: { backend: 'sqlite' | 'postgresql'; postgresqlUrl: string | undefined };
  signup: { mode: SignupMode; perIpPerHour: number };
  /** Password strength checks at sign-up: how many may wait or run at once, and how long one may run (beyond either: 503). */
  passwordCheck: { maxPending: number; timeoutMs: number };
  /** Whether accounts may switch their own plan; otherwise the administrator assigns plans. */
  planSelfService: boolean;
  /** Events (and their visits) older than this many days are deleted by the periodic sweep. */
  retentionDays: number;
  /** Audit log entries older than this many days (at least 400) are deleted by the periodic sweep. */
  auditRetentionDays: number;
  /** Time limit of each database round trip. */
  dbTimeoutMs: number;
  /** How long API keys, projects and accounts are served from this process's cache (another process's change is seen within this bound). */
  cacheTtlMs: number;
  /** Recent visitors identify serves from this process's memory, each proven fresh by the write that records the visit; 0 turns it off. */
  visitorCacheSize: number;
  /** Bytes of request bodies a process parses and handles at once (BODY_BUDGET_BYTES). */
  bodyBudgetBytes: number;
  /** Per process: how long a client has to send a request's headers, and the whole request (then 408); how long an idle keep-alive connection is kept; connections held at once (more are closed on arrival). */
  httpLimits: { requestTimeoutMs: number; headersTimeoutMs: number; keepAliveTimeoutMs: number; maxConnections: number };
  /** Processes serving HTTP (node:cluster); 1 in development, the number of cores with NODE_ENV=production. */
  workers: number;
  /** Where workers get IP geolocation and ASN from (no effect with one process). */
  edgeData: (typeof EDGE_DATA_MODES)[number];
  /** Webhook endpoints may point at loopback, private and link-local addresses (SSRF guard off). */
  webhooksAllowPrivate: boolean;
  /** Prometheus metrics on a port of their own (METRICS_PORT; none when unset), loopback or behind a bearer token. */
  metrics: { port: number; host: string; token: string | null } | null;
}

export class ConfigError extends Error {}

/** Parses the environment. Throws ConfigError with one line naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings mean "unset" so that `FOO= npm start` behaves like no FOO at all.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0] ?? 'environment');
    throw new ConfigError(`Invalid ${name}: ${issue.message}`);
  }
  const e = parsed.data;
  if (e.DEVDB_BACKEND === 'postgresql' && !e.DEVDB_POSTGRESQL_URL) {
    throw new ConfigError('Invalid DEVDB_POSTGRESQL_URL: required when DEVDB_BACKEND=postgresql');
  }
  const dataDir = resolve(e.DATA_DIR);
  if (Boolean(e.TLS_CERT) !== Boolean(e.TLS_KEY)) {
    throw new ConfigError(`Invalid ${e.TLS_CERT ? 'TLS_KEY' : 'TLS_CERT'}: TLS_CERT and TLS_KEY must be set together`);
  }
  // Node's server refuses headersTimeout above requestTimeout (the headers are part of the request).
  if (e.HEADERS_TIMEOUT_MS > e.REQUEST_TIMEOUT_MS) {
    throw new ConfigError(`Invalid HEADERS_TIMEOUT_MS: must not exceed REQUEST_TIMEOUT_MS (${e.REQUEST_TIMEOUT_MS})`);
  }
  // Metrics tell traffic, customers' volumes and the database's health: beyond this machine only with a token.
  if (e.METRICS_PORT !== undefined && !e.METRICS_TOKEN && !isLoopback(e.METRICS_HOST)) {
    throw new ConfigError(`Invalid METRICS_HOST: ${e.METRICS_HOST} is reachable from other machines; set METRICS_TOKEN (or bind to 127.0.0.1)`);
  }
  const plans: PlanTable = { ...DEFAULT_PLANS };
  for (const name of PLAN_NAMES) plans[name] = { ...DEFAULT_PLANS[name], ...e.PLANS?.[name] };

  return {
    port: e.PORT,
    baseUrl: (e.BASE_URL ?? `${e.TLS_CERT ? 'https' : 'http'}://localhost:${e.PORT}`).replace(/\/+$/, ''),
    mongodbUri: e.MONGODB_URI,
    mongodbDb: e.MONGODB_DB,
    dataDir,
    trustProxy: e.TRUST_PROXY,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    plans,
    serverSecret: e.SERVER_SECRET ?? loadOrCreateSecret(dataDir),
    listsDir: resolve(e.LISTS_DIR ?? join(dataDir, 'lists')),
    tls: e.TLS_CERT && e.TLS_KEY ? { certFile: resolve(e.TLS_CERT), keyFile: resolve(e.TLS_KEY) } : null,
    tlsHeaders: { ja4: e.TLS_HEADER_JA4.toLowerCase(), cipher: e.TLS_HEADER_CIPHER.toLowerCase(), version: e.TLS_HEADER_VERSION.toLowerCase() },
    devdb: { backend: e.DEVDB_BACKEND, postgresqlUrl: e.DEVDB_POSTGRESQL_URL },
    signup: { mode: e.SIGNUP, perIpPerHour: e.SIGNUPS_PER_IP_PER_HOUR },
    passwordCheck: { maxPending: e.PASSWORD_CHECK_QUEUE, timeoutMs: e.PASSWORD_CHECK_TIMEOUT_MS },
    planSelfService: e.PLAN_SELF_SERVICE === 'true',
    retentionDays: e.RETENTION_DAYS,
    auditRetentionDays: e.AUDIT_RETENTION_DAYS,
    dbTimeoutMs: e.DB_TIMEOUT_MS,
    cacheTtlMs: e.CACHE_TTL_MS,
    visitorCacheSize: e.VISITOR_CACHE_SIZE,
    bodyBudgetBytes: e.BODY_BUDGET_BYTES,
    httpLimits: {
      requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
      headersTimeoutMs: e.HEADERS_TIMEOUT_MS,
      keepAliveTimeoutMs: e.KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: e.MAX_CONNECTIONS,
    },
    workers: e.WORKERS ?? (e.NODE_ENV === 'production' ? availableParallelism() : 1),
    edgeData: e.EDGE_DATA,
    webhooksAllowPrivate: e.WEBHOOKS_ALLOW_PRIVATE === 'true',
    metrics: e.METRICS_PORT === undefined ? null : { port: e.METRICS_PORT, host: e.METRICS_HOST, token: e.METRICS_TOKEN ?? null },
  };
}

const isLoopback = (host: string) => host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);

/** The server secret is generated once and kept in DATA_DIR so sessions survive restarts. */
function loadOrCreateSecret(dataDir: string): string {
  const file = join(dataDir, 'server-secret');
  try {
    const existing = readFileSync(file, 'utf8').trim();
    if (existing.length >= 32) return existing;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new ConfigError(`Invalid DATA_DIR: cannot read ${file} (${(err as Error).message})`);
    }
  }
  const secret = randomBytes(32).toString('base64url');
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    // 'wx' fails if another process created it meanwhile; then read theirs.
    writeFileSync(file, secret + '\n', { mode: 0o600, flag: 'wx' });
    return secret;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(file, 'utf8').trim();
    throw new ConfigError(`Invalid DATA_DIR: cannot write ${file} (${(err as Error).message})`);
  }
}
