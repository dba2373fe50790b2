// Signs requests the way a Web Bot Auth agent does, with real Ed25519 keys
// (node:crypto), and writes the RFC 9421 signature base by hand so the
// verifier's library is checked against an independent construction.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import type { SignedRequest } from '../../server/bots/webBotAuth.js';

export interface AgentKey {
  privateKey: KeyObject;
  jwk: { kty: 'OKP'; crv: 'Ed25519'; x: string; kid: string };
  keyId: string;
}

export function makeAgentKey(): AgentKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const x = (publicKey.export({ format: 'jwk' }) as { x: string }).x;
  const keyId = createHash('sha256').update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest('base64url');
  return { privateKey, jwk: { kty: 'OKP', crv: 'Ed25519', x, kid: keyId }, keyId };
}

export function directoryJson(keys: AgentKey[]): string {
  return JSON.stringify({ keys: keys.map((k) => k.jwk) });
}

export interface SignOptions {
  key: AgentKey;
  /** The Signature-Agent URL. */
  agent: string;
  authority: string;
  path?: string;
  method?: string;
  /** Seconds. */
  created: number;
  /** Seconds. */
  expires: number;
  /** Default: a fresh random nonce; null for none. */
  nonce?: string | null;
  label?: string;
  /** Component identifiers as serialized; default ["@authority", "signature-agent";key=label]. */
  components?: string[];
  /** Bare-String Signature-Agent (earlier drafts) instead of the Dictionary. */
  legacyAgent?: boolean;
  tag?: string;
  alg?: string;
  /** Sign with this key but claim another keyid. */
  keyIdOverride?: string;
}

export function signRequest(o: SignOptions): SignedRequest {
  const label = o.label ?? 'sig1';
  const path = o.path ?? '/v1/identify';
  const method = o.method ?? 'POST';
  const agentHeader = o.legacyAgent ? `"${o.agent}"` : `${label}="${o.agent}"`;
  const components = o.components ?? ['"@authority"', o.legacyAgent ? '"signature-agent"' : `"signature-agent";key="${label}"`];
  const nonce = o.nonce === undefined ? randomBytes(32).toString('base64') : o.nonce;
  const params =
    `(${components.join(' ')});created=${o.created};expires=${o.expires};keyid="${o.keyIdOverride ?? o.key.keyId}";alg="${o.alg ?? 'ed25519'}"` +
    (nonce === null ? '' : `;nonce="${nonce}"`) +
    `;tag="${o.tag ?? 'web-bot-auth'}"`;
  const lines = components.map((c) => {
    switch (c) {
      case '"@authority"':
        return `${c}: ${o.authority}`;
      case '"@method"':
        return `${c}: ${method}`;
      case '"@path"':
        return `${c}: ${path.split('?')[0]}`;
      case '"@target-uri"':
        return `${c}: https://${o.authority}${path}`;
      case '"signature-agent"':
        return `${c}: ${agentHeader}`;
      default:
        if (c.startsWith('"signature-agent";key=')) return `${c}: "${o.agent}"`;
        throw new Error(`signRequest: no value for ${c}`);
    }
  });
  lines.push(`"@signature-params": ${params}`);
  const signature = sign(null, Buffer.from(lines.join('\n')), o.key.privateKey).toString('base64');
  return {
    method,
    authority: o.authority,
    path,
    headers: {
      host: o.authority,
      'signature-agent': agentHeader,
      'signature-input': `${label}=${params}`,
      signature: `${label}=:${signature}:`,
    },
  };
}
