// Real HTTP servers on 127.0.0.1 for client tests: the app itself on a random
// port, and small scripted servers that answer 429/503/hang like a troubled
// service or proxy would.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';

export interface Listening {
  url: string;
  server: Server;
  close: () => Promise<void>;
}

/** Listens on 127.0.0.1 on a free port. */
export async function listen(handler: Parameters<typeof createServer>[1] | Server): Promise<Listening> {
  const server = typeof handler === 'function' ? createServer(handler) : (handler as Server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A port for a child process to listen on (it binds every address, as
 * `npm start` does). Chosen below the kernel's ephemeral range (32768 and
 * up), where no outgoing connection or `listen(0)` of another test takes a
 * port between this probe and the child's bind, and probed free.
 */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 50; tries++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const probe = createNetServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, () => probe.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port between 20000 and 32000');
}

/** An Express app on a real port: `listen(app)` for `app.listen(0)` semantics on 127.0.0.1. */
export async function listenApp(app: (req: IncomingMessage, res: ServerResponse) => void): Promise<Listening> {
  return listen(createServer(app));
}

export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** Date.now() when the request arrived. */
  at: number;
}

export type Script = (req: Seen, n: number, res: ServerResponse) => void;

/** A server that records every request and answers the n-th (0-based) with `script`. */
export async function scripted(script: Script): Promise<Listening & { seen: Seen[] }> {
  const seen: Seen[] = [];
  const l = await listen((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const s: Seen = { method: req.method!, url: req.url!, headers: req.headers, body, at: Date.now() };
      seen.push(s);
      script(s, seen.length - 1, res);
    });
  });
  return { ...l, seen };
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}
