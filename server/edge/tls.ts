// TLS facts about the client connection. When Node terminates TLS, cipher and
// version come from the socket and JA4 from the ClientHello, which
// read-tls-client-hello captures once trackTls(server) has wrapped the
// server. Behind a TLS-terminating proxy the socket only describes the proxy,
// so the facts come from headers the proxy adds, and only when the peer is a
// trusted proxy; otherwise they are unknown (null), never guessed.
import type { Socket } from 'node:net';
import type { Server as TlsServer, TLSSocket } from 'node:tls';
import { trackClientHellos } from 'read-tls-client-hello';

export interface TlsFacts {
  cipher: string | null;
  version: string | null;
  ja4: string | null;
}

/** Request headers a trusted proxy uses to forward TLS facts; any may be absent. */
export interface TlsHeaderNames {
  ja4?: string;
  cipher?: string;
  version?: string;
}

export interface TlsRequestLike {
  socket: Socket | TLSSocket;
  headers: Record<string, string | string[] | undefined>;
}

export const NO_TLS_FACTS: Readonly<TlsFacts> = Object.freeze({ cipher: null, version: null, ja4: null });

/** Makes an https/tls server record each ClientHello, so JA4 is known per socket. */
export function trackTls<S extends TlsServer>(server: S): S {
  trackClientHellos(server);
  return server;
}

// JA4: protocol, TLS version, SNI, cipher and extension counts, ALPN, then two 12-hex hashes.
const JA4 = /^[tqd][0-9a-z]{2}[di]\d{4}[0-9a-z]{2}_[0-9a-f]{12}_[0-9a-f]{12}$/;
// IANA or OpenSSL cipher names (TLS_AES_128_GCM_SHA256, ECDHE-RSA-AES128-GCM-SHA256).
const CIPHER = /^[A-Za-z0-9_-]{3,80}$/;

/** "TLSv1.3", "TLS 1.3", "tls1.3", "1.3" → "TLSv1.3", Node's spelling (1.0 is "TLSv1"); anything else → null. */
function normalizeVersion(v: string): string | null {
  const m = /^(?:tls\s*v?\s*)?1(?:\.([0-3]))?$/i.exec(v);
  if (!m) return null;
  return m[1] === undefined || m[1] === '0' ? 'TLSv1' : `TLSv1.${m[1]}`;
}

/**
 * A header sent twice (the client's copy plus the proxy's) arrives joined
 * with ", " and fails the format checks, so a client cannot smuggle a value
 * past a proxy that appends instead of replacing.
 */
function single(v: string | string[] | undefined): string | undefined {
  return typeof v === 'string' ? v.trim() : undefined;
}

export function tlsFacts(req: TlsRequestLike, trusted: boolean, headerNames: TlsHeaderNames): TlsFacts {
  if (trusted) {
    const read = (name: string | undefined, ok: (v: string) => string | null): string | null => {
      const v = name ? single(req.headers[name.toLowerCase()]) : undefined;
      return v === undefined ? null : ok(v);
    };
    return {
      ja4: read(headerNames.ja4, (v) => (JA4.test(v) ? v : null)),
      cipher: read(headerNames.cipher, (v) => (CIPHER.test(v) ? v : null)),
      version: read(headerNames.version, normalizeVersion),
    };
  }
  const socket = req.socket as Partial<TLSSocket>;
  if (socket.encrypted !== true || typeof socket.getCipher !== 'function') return { ...NO_TLS_FACTS };
  return {
    cipher: socket.getCipher().name ?? null,
    version: socket.getProtocol?.() ?? null,
    ja4: socket.tlsClientHello?.ja4 ?? null,
  };
}
