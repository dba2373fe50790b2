// A request's bot name as the risk engine weighs it (risk/edgeFacts.ts bot):
// the User-Agent's claim judged by the operator's addresses or DNS (verify.ts,
// synchronous; DNS in the background), and a Web Bot Auth signature
// (webBotAuth.ts: at most its directory time limit on identify's path, and
// only when the request is signed and its agent's directory is not cached).
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { EdgeFacts } from '../risk/edgeFacts.js';
import { BotNames } from './verify.js';
import { WebBotAuth, type WebBotAuthReason } from './webBotAuth.js';

/** Failures that say the agent's key directory could not be read, not that the signature is wrong: they prove nothing. */
const UNVERIFIABLE: ReadonlySet<WebBotAuthReason> = new Set([
  'directory-unreachable',
  'directory-timeout',
  'directory-too-large',
  'directory-invalid',
  'internal',
]);

/** What of the request the judge reads: the method and path, its headers, and the authority the browser addressed. */
export interface JudgedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The site's host behind a first-party proxy, else the Host header. */
  authority: string;
}

export class BotJudge {
  constructor(
    private readonly names: BotNames,
    private readonly signatures: WebBotAuth,
  ) {}

  /** `agentUserAgent`: the one the agent collected, read when the request has none (a custom client relaying it). */
  async judge(req: JudgedRequest, ip: string, agentUserAgent?: string): Promise<EdgeFacts['bot']> {
    // The HTTP client's own User-Agent (a first-party proxy forwards the browser's). None at all names nothing: the
    // HTTP fingerprint judges such a client.
    const ua = req.headers['user-agent'] || agentUserAgent;
    const named = ua ? this.names.classify(ua, ip) : null;
    const claim = named && { name: named.name, provider: named.provider, category: named.category, identity: named.identity, listDate: named.listDate };
    const verified = await this.signatures.verify({ method: req.method, authority: req.authority.toLowerCase(), path: req.path, headers: req.headers });
    const signature =
      verified === null
        ? null
        : verified.result === 'signed'
          ? { result: 'signed' as const, agent: verified.agent }
          : { result: 'invalid' as const, agent: verified.agent, reason: verified.reason, unverifiable: UNVERIFIABLE.has(verified.reason as WebBotAuthReason) };
    return { claim, signature };
  }
}

/** The judge of a process: range lists refreshed into `<LISTS_DIR>/bots`, the system's DNS, https key directories. */
export function botJudge(config: Pick<Config, 'listsDir'>, clock: Clock): BotJudge {
  const now = () => clock.now();
  return new BotJudge(new BotNames({ now, dataDir: join(config.listsDir, 'bots') }), new WebBotAuth({ now }));
}
