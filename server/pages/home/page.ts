// GET /: what the service is and where to go next (sign up or in, the
// dashboard, the documentation, the API reference, the demo, the service's
// status). Static markup; home.js only fills in the status from /readyz.
import type { RequestHandler } from 'express';
import { pageHtml } from '../html.js';

const BODY = `<main>
<section class="panel hero">
  <h1>deviceid</h1>
  <p>A self-hostable device identification service. A small script on your site collects browser signals; this service answers with a stable <strong>visitor id</strong> for the device, a confidence score and verdicts (bot, VPN, Tor, incognito, tampering…). Your backend reads the full event with a secret key.</p>
  <div class="cta">
    <a class="btn primary" href="/login?next=%2Fdashboard">Sign up or sign in</a>
    <a class="btn secondary" href="/demo">See it identify your browser</a>
  </div>
</section>
<section class="panel">
  <h2>Start here</h2>
  <ol class="steps">
    <li><a href="/login?next=%2Fdashboard">Create an account</a> (the first account of a new instance is its administrator; others need an invitation unless sign-up is open).</li>
    <li>In the <a href="/dashboard">dashboard</a>, pick a project and copy its install snippet: one script tag, or <code>npm install @deviceid/agent</code>.</li>
    <li>Try the agent on the <a href="/demo">demo page</a>: your visitor id, confidence, verdicts and the full event.</li>
    <li>Read events from your backend: <a href="/docs">API reference</a>, or the typed client <code>@deviceid/client</code>.</li>
  </ol>
</section>
<section class="panel">
  <h2>Reference</h2>
  <ul class="links">
    <li><a href="/docs/index">Documentation</a>: running the service, integrating it, how it works</li>
    <li><a href="/docs">API reference</a> (rendered from <a href="/openapi.json">/openapi.json</a>; the dashboard's private operations: <a href="/openapi/dashboard.json">/openapi/dashboard.json</a>)</li>
    <li><a href="/dashboard">Dashboard</a>: projects, keys, usage</li>
    <li>Status: <span id="status" class="muted">checking…</span> (<a href="/readyz">/readyz</a>, <a href="/healthz">/healthz</a>)</li>
  </ul>
</section>
</main>`;

export const homePage = (): RequestHandler => {
  const html = pageHtml({ title: 'deviceid · device identification', script: 'home.js', body: BODY });
  return (_req, res) => {
    res.type('html').send(html);
  };
};
