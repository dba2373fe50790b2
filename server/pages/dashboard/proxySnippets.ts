// The first-party proxy's setups the install page offers, for a service at
// `service` and a proxy secret (a placeholder until one is created on the
// page). The nginx and Caddy recipes are docs/proxy.md's, tested against a
// real server (test/clients/proxy/webservers.test.ts); a test keeps these equal.
export const PROXY_KINDS = ['nextjs', 'express', 'worker', 'nginx', 'caddy'] as const;
export type ProxyKind = (typeof PROXY_KINDS)[number];
export const SECRET_PLACEHOLDER = 'svc_proxy_YOUR_SECRET';

export function proxySnippet(kind: ProxyKind, service: string, secret: string): string {
  switch (kind) {
    case 'nextjs':
      return `// npm install @deviceid/proxy
// app/metrics/[...path]/route.ts; DEVICEID_PROXY_SECRET=${secret} in the server's environment
import { createProxyHandler } from '@deviceid/proxy';

const proxy = createProxyHandler({
  serviceUrl: '${service}',
  secret: process.env.DEVICEID_PROXY_SECRET!,
  clientIp: { header: 'x-forwarded-for', hops: 1 }, // Vercel sets it; elsewhere the header your platform writes
});
export { proxy as GET, proxy as POST };`;
    case 'express':
      return `// npm install @deviceid/proxy; DEVICEID_PROXY_SECRET=${secret} in the server's environment
import { createProxyMiddleware } from '@deviceid/proxy';

app.set('trust proxy', 1); // if a load balancer is in front: req.ip and req.protocol then come from it
app.use(createProxyMiddleware({ serviceUrl: '${service}', secret: process.env.DEVICEID_PROXY_SECRET! }));`;
    case 'worker':
      return `// npm install @deviceid/proxy; route shop.example.com/metrics/* to the worker
// npx wrangler secret put DEVICEID_PROXY_SECRET  (${secret})
import { createProxyHandler } from '@deviceid/proxy';

export default {
  fetch: (request: Request, env: { DEVICEID_PROXY_SECRET: string }) =>
    createProxyHandler({ serviceUrl: '${service}', secret: env.DEVICEID_PROXY_SECRET, clientIp: 'cf-connecting-ip' })(request),
};`;
    case 'nginx':
      return `# The device cookie alone, or no Cookie at all.
map $cookie__didh $deviceid_cookie {
    ""      "";
    default "_didh=$cookie__didh";
}

# In your site's server block:
location /metrics/ {
    proxy_pass ${service}/;
    proxy_ssl_server_name on;
    proxy_http_version 1.1;
    proxy_connect_timeout 5s;
    proxy_read_timeout 10s;
    # Only what identify needs: none of the browser's other cookies or credentials.
    proxy_pass_request_headers off;
    proxy_set_header Content-Type $content_type;
    proxy_set_header X-API-Key $http_x_api_key;
    proxy_set_header Origin $http_origin;
    proxy_set_header Referer $http_referer;
    proxy_set_header User-Agent $http_user_agent;
    proxy_set_header Accept $http_accept;
    proxy_set_header Accept-Language $http_accept_language;
    proxy_set_header Sec-CH-UA $http_sec_ch_ua;
    proxy_set_header Sec-CH-UA-Mobile $http_sec_ch_ua_mobile;
    proxy_set_header Sec-CH-UA-Platform $http_sec_ch_ua_platform;
    proxy_set_header Sec-Fetch-Site $http_sec_fetch_site;
    proxy_set_header Sec-Fetch-Mode $http_sec_fetch_mode;
    proxy_set_header Sec-Fetch-Dest $http_sec_fetch_dest;
    proxy_set_header If-None-Match $http_if_none_match;
    proxy_set_header Cookie $deviceid_cookie;
    proxy_set_header Connection "";
    proxy_set_header deviceid-proxy-secret "${secret}";
    proxy_set_header deviceid-proxy-client-ip $remote_addr;
    proxy_set_header deviceid-proxy-host $host;
    proxy_set_header deviceid-proxy-proto $scheme;
}`;
    case 'caddy':
      return `shop.example.com {
	handle_path /metrics/* {
		# The device cookie alone, or no Cookie at all.
		@did header_regexp did Cookie (?:^|;\\s*)(_didh=[A-Za-z0-9._-]+)
		@nodid not header_regexp Cookie (?:^|;\\s*)_didh=[A-Za-z0-9._-]+
		request_header @did Cookie {re.did.1}
		request_header @nodid -Cookie
		reverse_proxy ${service} {
			header_up Host {upstream_hostport}
			header_up -Authorization
			header_up -Proxy-Authorization
			header_up -Deviceid-Proxy-Error
			header_up deviceid-proxy-secret "${secret}"
			header_up deviceid-proxy-client-ip {http.request.remote.host}
			header_up deviceid-proxy-host {http.request.host}
			header_up deviceid-proxy-proto {http.request.scheme}
		}
	}
}`;
  }
}
