// HTTP/1.1 pipelining: a client may send requests without waiting for the
// answers. Node handles each as it is parsed and queues its response, body
// and all, behind the unfinished ones, for as long as the connection lasts.
// Browsers, proxies and the service's clients do not pipeline (or a few
// requests at most): a connection with more than MAX_UNANSWERED requests
// unanswered is a client not reading its answers, and is closed. Node's own
// server.maxRequestsPerSocket would not do: it bounds the requests of a
// connection's whole life (closing a proxy's long keep-alive connection
// every N requests), and answers the excess with a 503 queued behind the rest.
import type { Socket } from 'node:net';
import type { RequestHandler } from 'express';

export const MAX_UNANSWERED = 16;

export function pipeliningCap(): RequestHandler {
  const unanswered = new WeakMap<Socket, number>();
  return (req, res, next) => {
    const socket = req.socket;
    const count = (unanswered.get(socket) ?? 0) + 1;
    if (count > MAX_UNANSWERED) {
      // No answer: it would only queue behind the others.
      socket.destroy();
      return;
    }
    unanswered.set(socket, count);
    // After the response has been handed to the connection, or the client went away.
    res.once('close', () => unanswered.set(socket, (unanswered.get(socket) ?? 1) - 1));
    next();
  };
}
