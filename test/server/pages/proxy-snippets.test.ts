// The install page's nginx and Caddy setups are docs/proxy.md's recipes (which
// test/clients/proxy/webservers.test.ts runs against real servers), with this
// service's address and the project's secret filled in.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { proxySnippet, SECRET_PLACEHOLDER } from '../../../server/pages/dashboard/proxySnippets.js';

const PROXY_DOC = readFileSync(new URL('../../../docs/proxy.md', import.meta.url), 'utf8');
const recipe = (name: string) => new RegExp(`<!-- recipe:${name} -->\\s*\`\`\`\\w+\\n([\\s\\S]*?)\`\`\``).exec(PROXY_DOC)![1]!.trimEnd();

describe('the dashboard’s proxy setups', () => {
  it('are docs/proxy.md’s nginx and Caddy recipes, for this service and secret', () => {
    for (const kind of ['nginx', 'caddy'] as const) {
      expect(proxySnippet(kind, 'https://deviceid.example.com', SECRET_PLACEHOLDER), kind).toBe(recipe(kind));
      const filled = proxySnippet(kind, 'https://ids.shop.example', 'svc_proxy_abc');
      expect(filled).toContain('https://ids.shop.example');
      expect(filled).toContain('"svc_proxy_abc"');
      expect(filled).not.toContain('deviceid.example.com');
    }
  });

  it('give the package’s handlers the service and keep the secret in the environment', () => {
    for (const kind of ['nextjs', 'express', 'worker'] as const) {
      const setup = proxySnippet(kind, 'https://ids.shop.example', SECRET_PLACEHOLDER);
      expect(setup, kind).toContain("from '@deviceid/proxy'");
      expect(setup, kind).toContain("serviceUrl: 'https://ids.shop.example'");
      expect(setup, kind).toMatch(/secret: (process\.)?env\.DEVICEID_PROXY_SECRET/);
    }
  });
});
