// GET /dashboard and its pages (views.ts): overview, events, visitor,
// rules, lists and review (decisionsMarkup.ts), install, API keys, webhooks,
// sealed results, settings and, for the administrator, the instance. Not
// signed in → 303 to /login?next=<this page>. Every address serves this one
// static page; its script shows the view the address names and fills it
// through the page client.
import type { RequestHandler } from 'express';
import { RELATED_THRESHOLD } from '../../../contract/visitors.js';
import type { AccountsService } from '../../accounts/service.js';
import { pageHtml } from '../html.js';
import { signedInPage } from '../signedIn.js';
import { BOT_CATEGORIES, botCategoryLabel } from './bots.js';
import { DECISIONS_MARKUP } from './decisionsMarkup.js';

/** From which probability a related visitor is shown (the related-visitors routes answer none below it). */
const RELATED_PERCENT = `${Math.round(RELATED_THRESHOLD * 100)}%`;

const BODY = `<main class="wide dash">
<nav class="dash-nav" aria-label="Dashboard">
  <a href="/dashboard" data-view="overview">Overview</a>
  <a href="/dashboard/events" data-view="events">Events</a>
  <a href="/dashboard/visitors" data-view="visitor">Visitor</a>
  <a href="/dashboard/rules" data-view="rules">Rules</a>
  <a href="/dashboard/lists" data-view="lists">Lists</a>
  <a href="/dashboard/review" data-view="reviews">Review</a>
  <a href="/dashboard/install" data-view="install">Install</a>
  <a href="/dashboard/keys" data-view="keys">API keys</a>
  <a href="/dashboard/webhooks" data-view="webhooks">Webhooks</a>
  <a href="/dashboard/sealing" data-view="sealing">Sealed results</a>
  <a href="/dashboard/settings" data-view="settings">Settings</a>
  <a href="/dashboard/members" data-view="members">Members</a>
  <a href="/dashboard/audit" data-view="audit">Audit log</a>
  <a href="/dashboard/instance" data-view="instance" id="nav-instance" hidden>Instance</a>
</nav>
<div class="dash-main">
<section class="panel" id="loading"><p class="muted" role="status">Loading…</p></section>
<p id="load-error" class="error panel" role="alert" hidden></p>
<form id="account-choice" class="row project-choice" hidden><label>Account <select id="account"></select></label> <span id="account-role" class="muted"></span></form>
<p id="account-error" class="error" role="alert" hidden></p>
<p id="view-denied" class="panel" role="status" hidden></p>
<form id="project-choice" class="row project-choice" hidden><label>Project <select id="project"></select></label></form>

<section id="view-overview" class="view" aria-labelledby="overview-title" hidden>
  <h1 id="overview-title" tabindex="-1">Overview</h1>
  <section class="panel" id="plan-panel" aria-labelledby="plan-title">
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
  <section class="panel" id="day-panel" aria-labelledby="day-title">
    <h2 id="day-title">Last 24 hours: <span id="day-project"></span></h2>
    <p id="day-status" class="muted" role="status"></p>
    <p id="day-error" class="error" role="alert" hidden></p>
    <div id="day-charts" class="spark-grid"></div>
    <p id="day-empty" class="muted" hidden>No identifications in this project in the last 24 hours. <a href="/dashboard/install">Install the agent</a> on your site, or try the <a href="/demo">demo page</a>.</p>
  </section>
</section>

<section id="view-events" class="view" aria-labelledby="events-title" hidden>
  <h1 id="events-title" tabindex="-1">Events</h1>
  <section class="panel" id="events-panel" aria-label="Search events">
    <p class="muted">The identifications of the chosen project, newest first. Choose a row for its full event, a visitor id for that device's page.</p>
    <form id="events-filter" class="filters" novalidate>
      <label>Visitor id <input type="text" id="f-visitorId" maxlength="64" placeholder="iq_…" spellcheck="false" autocomplete="off"></label>
      <label>linkedId <input type="text" id="f-linkedId" maxlength="256" spellcheck="false" autocomplete="off"></label>
      <label>IP or CIDR <input type="text" id="f-ip" maxlength="50" placeholder="203.0.113.0/24" spellcheck="false" autocomplete="off"></label>
      <label>Country <input type="text" id="f-country" maxlength="2" placeholder="DE" spellcheck="false" autocomplete="off" aria-describedby="country-help"></label>
      <label>From (UTC) <input type="datetime-local" id="f-start"></label>
      <label>To (UTC) <input type="datetime-local" id="f-end"></label>
      <label>Bot <select id="f-bot">
        <option value="">any</option>
        <option value="all">bots, good or bad</option>
        <option value="bad">bad bots</option>
        <option value="good">good bots (verified or signed)</option>
        <option value="none">no bot</option>
      </select></label>
      <label>Bot category <select id="f-botCategory">
        <option value="">any</option>
        ${BOT_CATEGORIES.map((c) => `<option value="${c}">${botCategoryLabel(c)}</option>`).join('\n        ')}
      </select></label>
      <label>Bot identity <select id="f-botIdentity">
        <option value="">any</option>
        <option value="verified">verified (operator's addresses or DNS)</option>
        <option value="signed">signed (Web Bot Auth)</option>
        <option value="spoofed">spoofed (fails its operator's check)</option>
        <option value="unknown">unknown</option>
      </select></label>
      <label>Min. suspect score <input type="number" id="f-minSuspectScore" min="0" max="100" step="1" inputmode="numeric"></label>
      <label>Suspect flag <select id="f-suspect" class="tri"></select></label>
      <label>VPN <select id="f-vpn" class="tri"></select></label>
      <label>Tor <select id="f-tor" class="tri"></select></label>
      <label>Proxy <select id="f-proxy" class="tri"></select></label>
      <label>Incognito <select id="f-incognito" class="tri"></select></label>
      <label>Tampering <select id="f-tampering" class="tri"></select></label>
      <label>Virtual machine <select id="f-virtualMachine" class="tri"></select></label>
      <label>DevTools open <select id="f-devtools" class="tri"></select></label>
      <label>IP blocklist <select id="f-ipBlocklist" class="tri"></select></label>
      <label>Order <select id="f-reverse">
        <option value="">newest first</option>
        <option value="true">oldest first</option>
      </select></label>
      <div class="row"><button type="submit" class="btn small accent">Filter</button> <button type="button" id="events-clear" class="btn small secondary">Clear</button></div>
    </form>
    <p id="country-help" class="muted">Country: two letters (ISO 3166-1), any case.</p>
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
      <h2 id="event-detail-title">Event <span id="event-detail-id" class="mono"></span></h2>
      <p id="event-detail-error" class="error" role="alert" hidden></p>
      <pre id="event-json" class="json" tabindex="0" aria-label="The full event as JSON"></pre>
      <button type="button" id="event-detail-close" class="btn small secondary">Close</button>
    </section>
  </section>
</section>

<section id="view-visitor" class="view" aria-labelledby="visitor-title" hidden>
  <h1 id="visitor-title" tabindex="-1">Visitor <span id="visitor-id" class="mono"></span></h1>
  <form id="visitor-open" class="row" novalidate>
    <label>Visitor id <input type="text" id="visitor-open-id" maxlength="64" placeholder="iq_…" spellcheck="false" autocomplete="off"></label>
    <button type="submit" class="btn small accent">Open</button>
  </form>
  <p id="visitor-open-error" class="error" role="alert" hidden></p>
  <p id="visitor-none" class="muted">Open a visitor from the <a href="/dashboard/events">Events</a> page (choose its visitor id), or enter its id above.</p>
  <section class="panel" id="visitor-panel" aria-label="Visitor" hidden>
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
        <dt>linkedIds seen</dt>
        <dd id="visitor-linked" class="text"></dd>
      </dl>
      <section id="related" class="sub" aria-labelledby="related-title" hidden>
        <h2 id="related-title">Related visitors in <span id="related-project"></span></h2>
        <p id="related-status" class="muted" role="status"></p>
        <p id="related-error" class="error" role="alert" hidden></p>
        <p id="related-about" class="muted" hidden>Other visitors of this project judged to be the same machine in another browser or browser profile (${RELATED_PERCENT} likely or more), the most recently seen together first. Each also shares a network, an OS, a core count and a time zone with this visitor.</p>
        <p id="related-empty" class="muted" hidden>No related visitors in this project. Related visitors are the same machine in another browser or browser profile, met on a network they share; none of this project's other visitors passed the threshold (${RELATED_PERCENT} likely).</p>
        <table class="data" id="related-table" hidden>
          <thead><tr><th scope="col">Visitor</th><th scope="col">Probability</th><th scope="col">Evidence</th><th scope="col">Last seen together (UTC)</th></tr></thead>
          <tbody id="related-body"></tbody>
        </table>
        <button type="button" id="related-more" class="btn small secondary" hidden>More related visitors</button>
        <p id="related-more-error" class="error" role="alert" hidden></p>
      </section>
      <h2 id="visits-title" class="sub">Visits</h2>
      <p class="muted">Its visits in every project of the account, newest first. <a id="visitor-events" href="/dashboard/events">Its events (with IP addresses)</a></p>
    </div>
    <table class="data" id="visits-table" hidden>
      <thead><tr><th scope="col">Time (UTC)</th><th scope="col">Location</th><th scope="col">Network</th><th scope="col">Browser</th><th scope="col">Confidence</th><th scope="col">Risk</th></tr></thead>
      <tbody id="visits-body"></tbody>
    </table>
    <p id="visits-empty" class="muted" hidden>No older visits.</p>
    <button type="button" id="visits-more" class="btn small secondary" hidden>Older visits</button>
    <p id="visits-more-error" class="error" role="alert" hidden></p>
  </section>
  <section class="panel" id="forget-panel" aria-labelledby="forget-title" hidden>
    <h2 id="forget-title">Delete this visitor's data</h2>
    <p>Deletes the device and everything stored about it — its events, visits, merged visitors and tokens — in every project. If it comes back, it is a new visitor. This cannot be undone.</p>
    <div id="forget-actions" class="row"><button type="button" id="forget" class="btn danger">Delete visitor data</button></div>
    <p id="forget-status" class="ok" role="status"></p>
    <p id="forget-error" class="error" role="alert" hidden></p>
  </section>
</section>

${DECISIONS_MARKUP}

<section id="view-install" class="view" aria-labelledby="install-view-title" hidden>
  <h1 id="install-view-title" tabindex="-1">Install</h1>
  <section class="panel" id="install-panel" aria-labelledby="install-title">
    <h2 id="install-title">The agent on your site: <span id="install-project"></span></h2>
    <p id="install-note" class="muted"></p>
    <p id="install-error" class="error" role="alert" hidden></p>
    <h3>On a plain page</h3>
    <textarea id="snippet-html" class="snippet" rows="9" readonly spellcheck="false" aria-label="Snippet for a plain page"></textarea>
    <button type="button" id="copy-snippet-html" class="btn small accent" aria-label="Copy the plain-page snippet">Copy</button>
    <h3>With npm and a bundler</h3>
    <textarea id="snippet-npm" class="snippet" rows="6" readonly spellcheck="false" aria-label="Snippet for npm"></textarea>
    <button type="button" id="copy-snippet-npm" class="btn small accent" aria-label="Copy the npm snippet">Copy</button>
    <p id="install-status" class="ok" role="status"></p>
    <p class="muted">Then read the event on your server with a secret key: <code>GET /v1/events/:requestId</code> (see the <a href="/docs">API reference</a>) or <code>@deviceid/client</code>. Try it first on the <a href="/demo">demo page</a>.</p>
  </section>
  <section class="panel" id="proxy-panel" aria-labelledby="proxy-title">
    <h2 id="proxy-title">First-party proxy</h2>
    <p class="muted">Serve the agent and identify from a path of your own site (<code>/metrics</code>): the service then sets an HttpOnly device cookie on your site that outlives Safari's 7-day deletion of script storage, and blockers see only your site. The proxy sends the project's proxy secret with each call.</p>
    <p id="proxy-state" role="status"></p>
    <div class="row"><button type="button" id="proxy-create" class="btn accent">Create secret</button> <button type="button" id="proxy-revoke" class="btn danger" hidden>Revoke secret</button></div>
    <p id="proxy-error" class="error" role="alert" hidden></p>
    <div id="proxy-secret"></div>
    <h3>Is proxied traffic arriving?</h3>
    <p id="proxy-traffic" role="status"></p>
    <p id="proxy-last-error"></p>
    <p id="proxy-traffic-error" class="error" role="alert" hidden></p>
    <h3>Set up the proxy</h3>
    <label>Where it runs <select id="proxy-kind">
      <option value="nextjs">Next.js (App Router)</option>
      <option value="express">Express</option>
      <option value="worker">Cloudflare Workers</option>
      <option value="nginx">nginx</option>
      <option value="caddy">Caddy</option>
    </select></label>
    <textarea id="snippet-proxy" class="snippet" rows="14" readonly spellcheck="false" aria-label="Proxy setup"></textarea>
    <button type="button" id="copy-snippet-proxy" class="btn small accent" aria-label="Copy the proxy setup">Copy</button>
    <p id="proxy-copy-status" class="ok" role="status"></p>
    <p class="muted">Then point the agent at the path: <code>DeviceId.load({ apiKey, endpoint: '/metrics' })</code> and <code>&lt;script src="/metrics/agent.js"&gt;</code>. The secret stays in the proxy's configuration, never in a page.</p>
  </section>
</section>

<section id="view-keys" class="view" aria-labelledby="keys-title" hidden>
  <h1 id="keys-title" tabindex="-1">API keys</h1>
  <section class="panel" id="keys-panel" aria-label="Keys of the chosen project">
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
    <p id="keys-loading" class="muted" role="status" hidden>Loading…</p>
    <p id="keys-empty" class="muted" hidden>No keys in this project yet: create a live key for your site (a test key for development), a secret key for your server.</p>
  </section>
</section>

<section id="view-webhooks" class="view" aria-labelledby="webhooks-title" hidden>
  <h1 id="webhooks-title" tabindex="-1">Webhooks</h1>
  <section class="panel" id="integrations-panel" aria-label="Webhook endpoints of the chosen project">
    <p class="muted">Every identification of the project is POSTed to each endpoint, signed (deviceid-signature); verify it with verifyWebhook of @deviceid/client.</p>
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
    <p id="hooks-loading" class="muted" role="status" hidden>Loading…</p>
    <p id="hooks-empty" class="muted" hidden>No endpoints in this project yet: add your server's URL above to receive each identification.</p>
    <div id="deliveries" hidden>
      <h2 id="deliveries-title">Deliveries</h2>
      <table class="data">
        <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col">Next attempt</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
        <tbody id="deliveries-body"></tbody>
      </table>
      <p id="deliveries-empty" class="muted" hidden>No deliveries yet: they start with the project's next identification.</p>
    </div>
  </section>
</section>

<section id="view-sealing" class="view" aria-labelledby="sealing-title" hidden>
  <h1 id="sealing-title" tabindex="-1">Sealed results</h1>
  <section class="panel" id="sealing-panel" aria-label="Sealed results of the chosen project">
    <p class="muted">With sealing on, identify answers an encrypted blob that only your backend can open, so the page's script cannot read or alter the result.</p>
    <p id="sealing-state" role="status"></p>
    <div class="row"><button id="sealing-key" class="btn accent" type="button">Turn on</button> <button id="sealing-off" class="btn secondary" type="button" hidden>Turn off</button></div>
    <p id="sealing-error" class="error" role="alert" hidden></p>
    <div id="sealing-secret"></div>
  </section>
</section>

<section id="view-settings" class="view" aria-labelledby="settings-title" hidden>
  <h1 id="settings-title" tabindex="-1">Settings</h1>
  <section class="panel" id="projects-panel" aria-labelledby="projects-title">
    <h2 id="projects-title">Projects</h2>
    <table class="data">
      <thead><tr><th scope="col">Name</th><th scope="col">Allowed domains</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody id="projects-body"></tbody>
    </table>
    <form id="edit-form" class="sub" hidden novalidate>
      <h3>Edit <span id="edit-title"></span></h3>
      <label>Name <input type="text" id="edit-name" maxlength="100" required></label>
      <label>Allowed domains <textarea id="edit-domains" rows="3" aria-describedby="domains-help"></textarea></label>
      <label class="confirm"><input type="checkbox" id="edit-linked" aria-describedby="linked-help"> <span>Use the linkedId as evidence</span></label>
      <p id="linked-help" class="muted">A visit whose linkedId (your own id for the signed-in user) was seen on a device, with a fingerprint like that device's, is recognised even after it lost its storage. A linkedId alone never joins two devices.</p>
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
</section>

<section id="view-members" class="view" aria-labelledby="members-title" hidden>
  <h1 id="members-title" tabindex="-1">Members</h1>
  <section class="panel" id="members-panel" aria-label="Members of this account">
    <p class="muted">Everyone who works in this account and their role. Owners change roles and remove members; an account always keeps an owner.</p>
    <p id="members-error" class="error" role="alert" hidden></p>
    <p id="members-status" class="ok" role="status"></p>
    <table class="data">
      <thead><tr><th scope="col">Member</th><th scope="col">Role</th><th scope="col">Joined</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody id="members-body"></tbody>
    </table>
  </section>
  <section class="panel" id="member-invitations-panel" aria-labelledby="member-invitations-title">
    <h2 id="member-invitations-title">Invite someone</h2>
    <form id="member-invite-form" class="row" novalidate>
      <label>Email <input type="email" id="member-invite-email" maxlength="254" autocomplete="off" required aria-describedby="member-invite-help"></label>
      <label>Role <select id="member-invite-role"></select></label>
      <button type="submit" class="btn accent">Invite</button>
    </form>
    <p id="member-invite-help" class="muted">Only that address may use the link, once, within 7 days: it signs up or signs in and joins this account.</p>
    <p id="member-invite-error" class="error" role="alert" hidden></p>
    <p id="member-invite-status" class="ok" role="status"></p>
    <div id="member-invite-link"></div>
    <h3>Pending invitations</h3>
    <table class="data">
      <thead><tr><th scope="col">For</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Expires</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody id="member-invitations-body"></tbody>
    </table>
    <p id="member-invitations-empty" class="muted" hidden>No pending invitations.</p>
  </section>
</section>

<section id="view-audit" class="view" aria-labelledby="audit-title" hidden>
  <h1 id="audit-title" tabindex="-1">Audit log</h1>
  <section class="panel" id="audit-panel" aria-label="Changes in this account">
    <p class="muted">Every change in this account, newest first: who made it, when and from which address.</p>
    <form id="audit-filter" class="filters" novalidate>
      <label>Member <select id="audit-member"><option value="">anyone</option></select></label>
      <label>Action <select id="audit-action"><option value="">any</option></select></label>
      <label>From (UTC) <input type="datetime-local" id="audit-start"></label>
      <label>To (UTC) <input type="datetime-local" id="audit-end"></label>
      <div class="row"><button type="submit" class="btn small accent">Filter</button> <button type="button" id="audit-clear" class="btn small secondary">Clear</button></div>
    </form>
    <p id="audit-error" class="error" role="alert" hidden></p>
    <p id="audit-status" class="muted" role="status"></p>
    <table class="data" id="audit-table" hidden>
      <thead><tr><th scope="col">When (UTC)</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Address</th></tr></thead>
      <tbody id="audit-body"></tbody>
    </table>
    <p id="audit-empty" class="muted" hidden>No changes match these filters.</p>
    <button type="button" id="audit-more" class="btn small secondary" hidden>Load more</button>
    <p id="audit-more-error" class="error" role="alert" hidden></p>
  </section>
</section>

<section id="view-instance" class="view" aria-labelledby="instance-title" hidden>
  <h1 id="instance-title" tabindex="-1">Instance</h1>
  <p id="instance-denied" class="muted" hidden>Only the administrator of this instance manages accounts, invitations and plans.</p>
  <section class="panel" id="accounts-panel" aria-labelledby="accounts-title" hidden>
    <h2 id="accounts-title">Accounts and plans</h2>
    <p id="accounts-status" class="muted" role="status"></p>
    <p id="accounts-error" class="error" role="alert" hidden></p>
    <table class="data">
      <thead><tr><th scope="col">Users</th><th scope="col">Created</th><th scope="col">Plan</th></tr></thead>
      <tbody id="accounts-body"></tbody>
    </table>
  </section>
  <section class="panel" id="plans-panel" aria-labelledby="plans-title" hidden>
    <h2 id="plans-title">Plans and their limits</h2>
    <p id="plans-error" class="error" role="alert" hidden></p>
    <table class="data">
      <thead><tr><th scope="col">Plan</th><th scope="col">Requests per second</th><th scope="col">Live calls per month</th></tr></thead>
      <tbody id="plans-body"></tbody>
    </table>
    <p class="muted">Per account, across its keys. Over either limit identify answers 429 with Retry-After: there is no burst above the per-second rate and no overage beyond the monthly quota, which counts calls with live keys only (test keys never count). The operator sets the limits with <code>PLANS</code>.</p>
  </section>
  <section class="panel" id="invitations-panel" aria-labelledby="invitations-title" hidden>
    <h2 id="invitations-title">Invitations</h2>
    <form id="invite-form" class="row" novalidate>
      <label>Email (optional) <input type="email" id="invite-email" maxlength="254" autocomplete="off" aria-describedby="invite-help"></label>
      <button type="submit" class="btn accent">Invite</button>
    </form>
    <p id="invite-help" class="muted">The link is valid for 7 days and creates one account; with an email, only that address may use it.</p>
    <p id="invite-error" class="error" role="alert" hidden></p>
    <p id="invite-status" class="ok" role="status"></p>
    <div id="invite-link"></div>
    <table class="data">
      <thead><tr><th scope="col">For</th><th scope="col">Status</th><th scope="col">Expires</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody id="invitations-body"></tbody>
    </table>
    <p id="invitations-empty" class="muted" hidden>No invitations yet: invite someone above.</p>
  </section>
</section>

</div>
</main>`;

export const dashboardPage = (accounts: AccountsService): RequestHandler =>
  signedInPage(accounts, pageHtml({ title: 'Dashboard · deviceid', script: 'dashboard.js', body: BODY }));
