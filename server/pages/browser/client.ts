// The options of the ts-rest clients page scripts call our API with (cookies
// of this origin). A network failure becomes an answer like any other
// (status 0 with an {error} text), shown next to the action that failed.
import { tsRestFetchApi } from '@ts-rest/core';

export const pageClientOptions = {
  baseUrl: '',
  baseHeaders: {},
  credentials: 'same-origin' as const,
  api: async (args: Parameters<typeof tsRestFetchApi>[0]) => {
    try {
      return await tsRestFetchApi(args);
    } catch {
      return { status: 0, body: { error: 'Could not reach the server. Check your connection and try again.' }, headers: new Headers() };
    }
  },
};
