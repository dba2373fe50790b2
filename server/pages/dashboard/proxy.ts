// The first-party proxy of the chosen project, on the install page: its
// secret (created or rotated here and shown once; revoked), the setup for
// where the proxy runs, and whether proxied traffic arrives (the share of
// the last 24 hours' identify calls that came through a proxy, and the last
// error a proxy met).
import type { z } from 'zod';
import type { ProxySettingsSchema } from '../../../contract/proxy.js';
import { api } from '../browser/client.js';
import { copy, COPY_BY_HAND, el, reveal, text } from '../browser/dom.js';
import { proxySnippet, SECRET_PLACEHOLDER, type ProxyKind } from './proxySnippets.js';
import { fmt, LOCALE, report, utcTime, type Projects } from './types.js';

type Settings = z.infer<typeof ProxySettingsSchema>;

export function proxyPanel(projects: Projects): { show(): void } {
  /** A secret created on this page, per project: it goes into the setup (it is shown only once). */
  const fresh = new Map<string, string>();
  let projectId = '';

  const renderSnippet = () => {
    const kind = el<HTMLSelectElement>('proxy-kind').value as ProxyKind;
    el<HTMLTextAreaElement>('snippet-proxy').value = proxySnippet(kind, location.origin, fresh.get(projectId) ?? SECRET_PLACEHOLDER);
  };

  const render = (s: Settings) => {
    const rotation =
      s.previousSecretHint && s.previousValidUntil ? ` The previous secret (${s.previousSecretHint}) works until ${utcTime(s.previousValidUntil)}.` : '';
    text(
      'proxy-state',
      s.enabled
        ? `On: secret ${s.secretHint ?? ''}, created ${s.createdAt ? utcTime(s.createdAt) : ''}.${rotation}`
        : 'Off: no proxy secret yet. Create one, then set up the proxy below.',
    );
    el('proxy-create').textContent = s.enabled ? 'Rotate secret' : 'Create secret';
    el('proxy-revoke').hidden = !s.enabled;
  };

  const loadTraffic = async () => {
    report('proxy-traffic-error', null);
    const res = await api.proxy.getProxyTraffic({ params: { projectId } });
    if (res.status !== 200) return report('proxy-traffic-error', res);
    const t = res.body;
    text(
      'proxy-traffic',
      t.share === null
        ? 'No identify calls in the last 24 hours yet.'
        : `${fmt(t.proxied)} of ${fmt(t.identify)} identify calls in the last 24 hours came through a proxy (${t.share.toLocaleString(LOCALE, { style: 'percent', maximumFractionDigits: 1 })}).`,
    );
    const e = t.lastError;
    el('proxy-last-error').className = e ? 'error' : 'muted';
    text(
      'proxy-last-error',
      e
        ? `Last error (${e.source === 'proxy' ? 'reported by the proxy' : 'refused by the service'}, ${utcTime(e.at)}): ${e.message} [${e.code}]`
        : 'No proxy errors.',
    );
  };

  const load = async () => {
    report('proxy-error', null);
    text('proxy-state', 'Loading…');
    const res = await api.proxy.getProxy({ params: { projectId } });
    if (res.status !== 200) {
      text('proxy-state', '');
      return report('proxy-error', res);
    }
    render(res.body);
  };

  el('proxy-create').addEventListener('click', () => {
    void (async () => {
      const id = projectId;
      report('proxy-error', null);
      const res = await api.proxy.createProxySecret({ params: { projectId: id }, body: {} });
      if (res.status !== 201) return report('proxy-error', res);
      fresh.set(id, res.body.secret);
      render(res.body);
      renderSnippet();
      reveal(el('proxy-secret'), 'Proxy secret', res.body.secret, { fieldId: 'proxy-secret-value' });
    })();
  });
  el('proxy-revoke').addEventListener('click', () => {
    void (async () => {
      report('proxy-error', null);
      const res = await api.proxy.revokeProxySecret({ params: { projectId } });
      if (res.status !== 200) return report('proxy-error', res);
      fresh.delete(projectId);
      el('proxy-secret').replaceChildren();
      render(res.body);
      renderSnippet();
    })();
  });
  el('proxy-kind').addEventListener('change', renderSnippet);
  el('copy-snippet-proxy').addEventListener('click', () => {
    void copy(el<HTMLTextAreaElement>('snippet-proxy')).then((ok) => text('proxy-copy-status', ok ? 'Copied' : COPY_BY_HAND));
  });

  return {
    show() {
      projectId = projects.current()?.id ?? '';
      el('proxy-secret').replaceChildren();
      text('proxy-copy-status', '');
      renderSnippet();
      if (projectId) void Promise.all([load(), loadTraffic()]);
    },
  };
}
