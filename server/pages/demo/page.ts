// GET /demo: the playground. Runs the browser agent on this very page with a
// test key of one of your projects (test keys never count against the quota)
// and shows what the service answered: visitor id, confidence, verdicts, and
// the full event. Signed-in users only (the key and the event are theirs).
import type { RequestHandler } from 'express';
import type { AccountsService } from '../../accounts/service.js';
import { pageHtml } from '../html.js';
import { signedInPage } from '../signedIn.js';

const BODY = `<main class="wide">
<h1>Demo: identify this browser</h1>
<section class="panel">
  <p>This page loads the agent (<code>/agent.js</code>) and calls <code>POST /v1/identify</code> with a <strong>test key</strong> of the project below, created for this page the first time and kept in this browser. Test calls never count against your quota; the dashboard's chart shows them apart. Reload, open a private window or another browser to see what changes.</p>
  <form id="demo-form" class="row">
    <label>Project <select id="demo-project"></select></label>
    <label>linkedId <input type="text" id="demo-linked" maxlength="256" value="demo-user"></label>
    <button type="submit" class="btn accent" id="demo-run" disabled>Identify me</button>
  </form>
  <p id="demo-status" class="muted" role="status"></p>
  <p id="demo-error" class="error" role="alert" hidden></p>
</section>
<section class="panel" id="demo-result" hidden aria-labelledby="result-title">
  <h2 id="result-title">What the service answered</h2>
  <dl>
    <dt>Visitor id</dt><dd id="r-visitor" class="mono"></dd>
    <dt>Confidence</dt><dd id="r-confidence"></dd>
    <dt>Visits</dt><dd id="r-visits"></dd>
    <dt>Bot probability</dt><dd id="r-bot"></dd>
    <dt>Suspect score</dt><dd id="r-suspect"></dd>
    <dt>IP</dt><dd id="r-ip" class="mono"></dd>
    <dt>Request id</dt><dd id="r-request" class="mono"></dd>
  </dl>
  <h3>Verdicts</h3>
  <ul id="r-verdicts" class="verdicts"></ul>
  <h3>Full event <span class="muted">(what your backend reads with a secret key: <code>GET /v1/events/:requestId</code>)</span></h3>
  <pre id="r-event" class="json" tabindex="0"></pre>
</section>
</main>`;

export const demoPage = (accounts: AccountsService): RequestHandler =>
  signedInPage(accounts, pageHtml({ title: 'Demo · deviceid', script: 'demo.js', body: BODY }));
