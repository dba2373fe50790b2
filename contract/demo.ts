// What the demo page reads with the session: one full event of the signed-in
// user's account (a backend reads it with a secret key at /v1/events). Its own
// router, so that the dashboard's script does not bundle the event schemas.
import { z } from 'zod';
import { csrfResponses, sessionRoutes } from './account.js';
import { errorResponse, initContract, meta } from './common.js';
import { eventsContract, FullEventSchema } from './events.js';

const c = initContract();

export const demoContract = c.router(
  {
    getAccountEvent: {
      method: 'GET',
      path: '/api/events/:requestId',
      summary: "One full event of the signed-in user's account (the demo page shows it)",
      pathParams: z.object({ requestId: z.string() }),
      responses: {
        200: FullEventSchema,
        ...sessionRoutes,
        404: errorResponse('event_not_found', "'Event not found': unknown id or another account's event"),
      },
      metadata: meta({ auth: 'session', role: 'analyst' }),
    },
    updateAccountEvent: {
      method: 'PATCH',
      path: '/api/events/:requestId',
      summary: "Flag one of the account's events as suspect, or correct its linkedId and tag (what PATCH /v1/events does with a secret key)",
      pathParams: z.object({ requestId: z.string() }),
      body: eventsContract.updateEvent.body,
      responses: {
        200: FullEventSchema,
        ...sessionRoutes,
        ...csrfResponses,
        404: errorResponse('event_not_found', "'Event not found': unknown id or another account's event"),
      },
      metadata: meta({ auth: 'session', role: 'analyst', csrf: true }),
    },
  },
  { strictStatusCodes: true },
);
