// GET /dashboard: plan and usage, projects, API keys, the events explorer
// and visitor timeline, webhooks and sealed results of the signed-in
// account. Not signed in → 303 to /login?next=<this page>. The page is static
// markup; its script fills it through the dashboard API (the ts-rest clients
// of contract/account.ts and the other dashboard areas).
import type { RequestHandler } from 'express';
import type { AccountsService } from '../../accounts/service.js';
import { pageHtml } from '../html.js';
import { signedInPage } from '../signedIn.js';

const BODY = `<main class="wide">
<h1>Dashboard</h1>
<section class="panel" id="loading"><p class="muted">Loading…</p></section>
<p id="load-error" class="error panel" role="alert" hidden></p>

<section class="panel" id="plan-panel" aria-labelledby="plan-title" hidden>
  <h2 id="plan-title">Plan and usage</h2>
  <dl>
    <dt>Plan</dt>
    <dd id="plan-name"></dd>
    <dt>Requests per second</dt>
    <dd id="limit-rps"></dd>
    <dt>Monthly quota</dt>
    <dd><span id="limit-monthly"></span> <span class="muted">identify calls with live keys</span></dd>
    <dt>This month</dt>
    <dd><span id="usage-count"></span> <span id="usage-percent" class="muted"></span><br>
      <meter id="usage-meter" min="0" value="0" aria-label="Share of the monthly quota used"></meter></dd>
  </dl>
  <figure class="chart">
    <div id="chart"></div>
    <figcaption id="chart-caption" class="muted"></figcaption>
  </figure>
  <form id="plan-form" class="row">
    <label>Switch plan <select id="plan-select" name="plan">
      <option value="free">Free</option>
      <option value="builder">Builder</option>
      <option value="growth">Growth</option>
      <option value="scale">Scale</option>
    </select></label>
    <button type="submit" id="plan-submit" class="btn accent">Switch</button>
  </form>
  <p id="plan-assigned" class="muted" hidden>Plans are assigned by the administrator of this instance.</p>
  <p id="plan-status" class="ok" role="status"></p>
  <p id="plan-error" class="error" role="alert" hidden></p>
</section>

<section class="panel" id="projects-panel" aria-labelledby="projects-title" hidden>
  <h2 id="projects-title">Projects</h2>
  <table class="data">
    <thead><tr><th scope="col">Name</th><th scope="col">Allowed domains</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
    <tbody id="projects-body"></tbody>
  </table>
  <form id="edit-form" class="sub" hidden novalidate>
    <h3>Edit <span id="edit-title"></span></h3>
    <label>Name <input type="text" id="edit-name" maxlength="100" required></label>
    <label>Allowed domains <textarea id="edit-domains" rows="3" aria-describedby="domains-help"></textarea></label>
    <p id="edit-error" class="error" role="alert" hidden></p>
    <div class="row"><button type="submit" class="btn accent">Save</button> <button type="button" id="edit-cancel" class="btn secondary">Cancel</button></div>
  </form>
  <form id="project-form" class="sub" novalidate>
    <h3>New project</h3>
    <label>Name <input type="text" id="project-name" maxlength="100" required></label>
    <label>Allowed domains <textarea id="project-domains" rows="3" aria-describedby="domains-help"></textarea></label>
    <p id="domains-help" class="muted">Host names such as shop.example.com or *.example.com, separated by commas or new lines. Empty: identify accepts any host.</p>
    <p id="project-error" class="error" role="alert" hidden></p>
    <button type="submit" class="btn accent">Create project</button>
  </form>
</section>

<section class="panel" id="keys-panel" aria-labelledby="keys-title" hidden>
  <h2 id="keys-title">API keys</h2>
  <label>Project <select id="key-project"></select></label>
  <form id="key-form" class="row" novalidate>
    <label>Key name <input type="text" id="key-name" maxlength="100" required></label>
    <label>Type <select id="key-type">
      <option value="live">live: browsers, counted</option>
      <option value="test">test: browsers, not counted</option>
      <option value="secret">secret: servers only</option>
    </select></label>
    <button type="submit" class="btn accent">Create key</button>
  </form>
  <p id="key-error" class="error" role="alert" hidden></p>
  <p id="key-status" class="ok" role="status"></p>
  <div id="new-key"></div>
  <table class="data">
    <thead><tr>
      <th scope="col">Name</th><th scope="col">Type</th><th scope="col">Hint</th><th scope="col">Source</th><th scope="col">Status</th>
      <th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Age</th><th scope="col"><span class="sr-only">Actions</span></th>
    </tr></thead>
    <tbody id="keys-body"></tbody>
  </table>
  <p id="keys-empty" class="muted" hidden>No keys in this project yet.</p>
</section>

<section class="panel" id="install-panel" aria-labelledby="install-title" hidden>
  <h2 id="install-title">Install the agent on your site: <span id="install-project"></span></h2>
  <p id="install-note" class="muted"></p>
  <h3>On a plain page</h3>
  <textarea id="snippet-html" class="snippet" rows="9" readonly spellcheck="false" aria-label="Snippet for a plain page"></textarea>
  <button type="button" id="copy-snippet-html" class="btn small accent" aria-label="Copy the plain-page snippet">Copy</button>
  <h3>With npm and a bundler</h3>
  <textarea id="snippet-npm" class="snippet" rows="6" readonly spellcheck="false" aria-label="Snippet for npm"></textarea>
  <button type="button" id="copy-snippet-npm" class="btn small accent" aria-label="Copy the npm snippet">Copy</button>
  <p id="install-status" class="ok" role="status"></p>
  <p class="muted">Then read the event on your server with a secret key: <code>GET /v1/events/:requestId</code> (see the <a href="/docs">API reference</a>) or <code>@deviceid/client</code>. Try it first on the <a href="/demo">demo page</a>.</p>
</section>

<section class="panel" id="events-panel" aria-labelledby="events-title" hidden>
  <h2 id="events-title">Events: <span id="events-project"></span></h2>
  <p class="muted">The newest identifications of the project chosen under API keys. Choose a row for its full event, a visitor id for that device's visits.</p>
  <form id="events-filter" class="filters" novalidate>
    <label>Visitor id <input type="text" id="f-visitor" maxlength="64" placeholder="iq_…" spellcheck="false" autocomplete="off"></label>
    <label>linkedId <input type="text" id="f-linked" maxlength="256" spellcheck="false" autocomplete="off"></label>
    <label>Bot <select id="f-bot">
      <option value="">any</option>
      <option value="all">bots, good or bad</option>
      <option value="bad">bad bots</option>
      <option value="good">good bots (crawlers)</option>
      <option value="none">no bot</option>
    </select></label>
    <label>Suspect <select id="f-suspect">
      <option value="">any</option>
      <option value="true">flagged suspect</option>
      <option value="false">not flagged</option>
    </select></label>
    <div class="row"><button type="submit" class="btn small accent">Filter</button> <button type="button" id="events-clear" class="btn small secondary">Clear</button></div>
  </form>
  <p id="events-error" class="error" role="alert" hidden></p>
  <p id="events-status" class="muted" role="status"></p>
  <table class="data" id="events-table" hidden>
    <thead><tr><th scope="col">Time (UTC)</th><th scope="col">Visitor</th><th scope="col">IP, location</th><th scope="col">Verdict</th><th scope="col">Confidence</th></tr></thead>
    <tbody id="events-body"></tbody>
  </table>
  <p id="events-empty" class="muted" hidden></p>
  <button type="button" id="events-more" class="btn small secondary" hidden>Load more</button>
  <p id="events-more-error" class="error" role="alert" hidden></p>
  <section id="event-detail" class="sub" aria-labelledby="event-detail-title" hidden>
    <h3 id="event-detail-title">Event <span id="event-detail-id" class="mono"></span></h3>
    <p id="event-detail-error" class="error" role="alert" hidden></p>
    <pre id="event-json" class="json" tabindex="0" aria-label="The full event as JSON"></pre>
    <button type="button" id="event-detail-close" class="btn small secondary">Close</button>
  </section>
</section>

<section class="panel" id="visitor-panel" aria-labelledby="visitor-title" hidden>
  <button type="button" id="visitor-back" class="link">← Back to events</button>
  <h2 id="visitor-title" tabindex="-1">Visitor <span id="visitor-id" class="mono"></span></h2>
  <p id="visitor-status" class="muted" role="status"></p>
  <p id="visitor-error" class="error" role="alert" hidden></p>
  <div id="visitor-facts" hidden>
    <dl>
      <dt>Visits</dt>
      <dd id="visitor-total"></dd>
      <dt>First seen</dt>
      <dd id="visitor-first"></dd>
      <dt>Merged from</dt>
      <dd id="visitor-merged" class="mono"></dd>
    </dl>
    <p class="muted">Its visits in every project of the account, newest first. <button type="button" id="visitor-events" class="link">Show its events (with IP addresses)</button></p>
  </div>
  <table class="data" id="visits-table" hidden>
    <thead><tr><th scope="col">Time (UTC)</th><th scope="col">Location</th><th scope="col">Network</th><th scope="col">Browser</th><th scope="col">Confidence</th><th scope="col">Risk</th></tr></thead>
    <tbody id="visits-body"></tbody>
  </table>
  <p id="visits-empty" class="muted" hidden>No older visits.</p>
  <button type="button" id="visits-more" class="btn small secondary" hidden>Older visits</button>
  <p id="visits-more-error" class="error" role="alert" hidden></p>
</section>

<section class="panel" id="integrations-panel" aria-labelledby="integrations-title" hidden>
  <h2 id="integrations-title">Webhooks and sealed results</h2>
  <p class="muted">For the project chosen under API keys.</p>
  <h3>Webhooks</h3>
  <p class="muted">Every identification of the project is POSTed to each endpoint, signed (deviceid-signature); verify it with verifyWebhook of deviceid/client.</p>
  <form id="hook-form" class="row" novalidate>
    <label>Endpoint URL <input type="text" inputmode="url" id="hook-url" maxlength="2048" required placeholder="https://api.example.com/deviceid"></label>
    <button type="submit" class="btn accent">Add endpoint</button>
  </form>
  <p id="hook-error" class="error" role="alert" hidden></p>
  <p id="hook-status" class="ok" role="status"></p>
  <div id="hook-secret"></div>
  <table class="data">
    <thead><tr><th scope="col">URL</th><th scope="col">Secret</th><th scope="col">Created</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
    <tbody id="hooks-body"></tbody>
  </table>
  <p id="hooks-empty" class="muted" hidden>No endpoints in this project yet.</p>
  <div id="deliveries" hidden>
    <h3 id="deliveries-title">Deliveries</h3>
    <table class="data">
      <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col">Next attempt</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody id="deliveries-body"></tbody>
    </table>
    <p id="deliveries-empty" class="muted" hidden>No deliveries yet.</p>
  </div>
  <h3>Sealed results</h3>
  <p id="sealing-state" class="muted"></p>
  <div class="row"><button id="sealing-key" class="btn accent" type="button">Turn on</button> <button id="sealing-off" class="btn secondary" type="button" hidden>Turn off</button></div>
  <p id="sealing-error" class="error" role="alert" hidden></p>
  <div id="sealing-secret"></div>
</section>
</main>`;

export const dashboardPage = (accounts: AccountsService): RequestHandler =>
  signedInPage(accounts, pageHtml({ title: 'Dashboard · deviceid', script: 'dashboard.js', body: BODY }));
