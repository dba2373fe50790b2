// What the HTTP layer tells the metrics: identify's latency by outcome, and
// refusals. Routes and the error middleware only mark the response
// (`res.locals`); this middleware reads the marks when the response is done,
// so a request refused before any route ran (key, body budget, database
// away) is counted too, and so is one whose client left before its answer.
import type { RequestHandler, Response } from 'express';
import type { IdentifyOutcome, Metrics, Refusal } from './registry.js';

interface Marks {
  /** Set by identify's route: which kind of answer it gave. */
  identifyOutcome?: IdentifyOutcome;
  /** Set by the error middleware when it turned the request away. */
  refusal?: Refusal;
}

export const markIdentify = (res: Response, outcome: IdentifyOutcome) => void ((res.locals as Marks).identifyOutcome = outcome);
export const markRefusal = (res: Response, refusal: Refusal) => void ((res.locals as Marks).refusal = refusal);

const IDENTIFY_PATH = '/v1/identify';

export function httpMetrics(metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const identify = req.method === 'POST' && req.path === IDENTIFY_PATH;
    const start = identify ? process.hrtime.bigint() : 0n;
    let recorded = false;
    const record = (outcome: IdentifyOutcome) => {
      if (recorded) return;
      recorded = true;
      metrics.identified(outcome, Number(process.hrtime.bigint() - start) / 1e9);
    };
    res.once('finish', () => {
      const marks = res.locals as Marks;
      if (marks.refusal) metrics.refusals.inc({ reason: marks.refusal });
      if (identify) record(res.statusCode >= 500 ? 'failed' : res.statusCode >= 400 ? 'refused' : (marks.identifyOutcome ?? 'returning'));
    });
    // A response that never finishes: its client closed the connection first ('close' also follows every 'finish').
    if (identify) res.once('close', () => record('abandoned'));
    next();
  };
}
