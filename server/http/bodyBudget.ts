// Request bodies a process parses and handles at once (BODY_BUDGET_BYTES).
// JSON parsed from a body can take 15 times its size of heap (`[{},{},…]`)
// and the heap is capped (server/heap.ts): past the budget a request gets
// 503 with Retry-After instead of the process running out of heap. A body
// counts from the moment it has been read (a client trickling one in holds
// only its bytes, and no share of the budget) until its response is done
// or its connection closed. A body that comes while nothing is held is
// always taken: a budget below the largest body serves those one at a time
// instead of refusing them for ever.
// Typical identify bodies are 4–8 KB: the default holds hundreds of them,
// or 16 of the largest identify takes.
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Thrown in body-parser's verify (which wraps what it catches with http-errors,
 * writing onto it: so not an ApiError); errors.ts answers it with a 503.
 */
export class OverBudget extends Error {
  readonly status = 503;
  readonly type = 'entity.over.budget';
  constructor() {
    super('request bodies over the budget');
  }
}

export class BodyBudget {
  private held = 0;

  constructor(private readonly maxBytes: number) {}

  /** Bytes counted now (tests). */
  get bytes(): number {
    return this.held;
  }

  /** body-parser's `verify`: the body has been read and is about to be parsed; throwing stops it. */
  readonly verify = (req: IncomingMessage, res: ServerResponse, body: Buffer): void => {
    const size = body.length;
    if (this.held > 0 && this.held + size > this.maxBytes) throw new OverBudget();
    // Gone already (an inflated body can finish after its client left): no 'close' will come.
    if (res.destroyed || req.socket.destroyed) return;
    this.held += size;
    // Given back once, at the response's 'close' (done, or its client went
    // away) or the connection's, whichever comes first: a response queued
    // behind an unfinished one on a pipelined connection never emits 'close'
    // when the connection goes (Node 20 only aborts the requests). The
    // request's own 'close' is no signal: Node emits it once the body is read.
    // The flag, because a listener taken off during an emit still runs: the
    // connection's 'close' emits the active response's.
    const socket = req.socket;
    let counted = true;
    const giveBack = () => {
      if (!counted) return;
      counted = false;
      this.held -= size;
      // A keep-alive connection serves many requests: no listener left on it.
      res.off('close', giveBack);
      socket.off('close', giveBack);
    };
    res.once('close', giveBack);
    socket.once('close', giveBack);
  };
}
