// The static markup of the Rules, Lists and Review pages (page.ts puts it in
// the dashboard's one page); decisions/*.ts fill it in. The choices come
// from the plain-data vocabulary the contract and the engine share.
import { LIST_KINDS } from '../../../contract/decisions.js';
import { RULE_ACTIONS } from '../../../contract/ruleFields.js';

const KINDS: Record<(typeof LIST_KINDS)[number], string> = {
  visitorId: 'visitor ids',
  linkedId: 'linkedIds',
  ip: 'IP addresses and CIDR ranges',
  asn: 'AS numbers',
  country: 'countries (two letters)',
};

const options = (values: readonly string[], label: (v: string) => string = (v) => v) => values.map((v) => `<option value="${v}">${label(v)}</option>`).join('');

const RULES = `<section id="view-rules" class="view" aria-labelledby="rules-title" hidden>
  <h1 id="rules-title" tabindex="-1">Rules</h1>
  <p id="rules-load-error" class="error panel" role="alert" hidden></p>
  <section class="panel" id="ruleset-panel" aria-label="Rules of the chosen project">
    <p class="muted">Every identification of the project goes through these rules in order: the first enabled live rule that matches decides its action; a test rule only records that it matched. Your server reads the decision in the full event, webhooks and sealed results.</p>
    <p id="ruleset-version" role="status"></p>
    <p id="ruleset-role" class="muted" hidden></p>
    <p id="ruleset-error" class="error" role="alert" hidden></p>
    <div id="ruleset-conflict" class="warning" hidden>
      <p id="ruleset-conflict-text" role="alert"></p>
      <button type="button" id="ruleset-reload" class="btn small secondary">Load the latest version</button>
    </div>
    <table class="data" id="rules-table" hidden>
      <thead><tr><th scope="col">#</th><th scope="col">Rule</th><th scope="col">Action</th><th scope="col">Mode</th><th scope="col">Enabled</th><th scope="col">Hits 24 h</th><th scope="col">Hits 7 days</th><th scope="col">Errors 24 h</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody id="rules-body"></tbody>
    </table>
    <p id="rules-empty" class="muted" hidden>No rules yet: every identification gets the default action. Add a rule, or start from a template below.</p>
    <form id="ruleset-form" class="row" novalidate>
      <label>When no live rule matches <select id="ruleset-default">${options(RULE_ACTIONS)}</select></label>
      <button type="button" id="rule-add" class="btn secondary">New rule</button>
      <button type="submit" id="ruleset-save" class="btn accent">Save</button>
      <button type="button" id="ruleset-discard" class="btn secondary">Discard changes</button>
    </form>
    <p id="ruleset-dirty" class="muted" role="status"></p>
    <p id="ruleset-status" class="ok" role="status"></p>
    <h2 class="sub">Start from a template</h2>
    <ul id="rule-templates" class="templates"></ul>
  </section>
  <section class="panel" id="rule-editor" aria-labelledby="rule-editor-title" hidden>
    <h2 id="rule-editor-title"></h2>
    <p><a id="rule-back" href="/dashboard/rules">All rules</a></p>
    <p id="rule-editor-role" class="muted" hidden></p>
    <div class="editor">
      <form id="rule-form" novalidate>
        <label>Name <input type="text" id="rule-name" maxlength="100" required autocomplete="off"></label>
        <div class="row">
          <label>Action <select id="rule-action">${options(RULE_ACTIONS)}</select></label>
          <label>Mode <select id="rule-mode"><option value="live">live: acts</option><option value="test">test: records only</option></select></label>
          <label class="confirm"><input type="checkbox" id="rule-enabled"> <span>Enabled</span></label>
        </div>
        <label>Expression (CEL) <textarea id="rule-expression" class="code" rows="6" maxlength="4000" spellcheck="false" autocomplete="off" autocapitalize="off" aria-describedby="rule-check"></textarea></label>
        <pre id="rule-marker" class="marker" aria-hidden="true" hidden></pre>
        <div id="rule-check" role="status"></div>
        <ul id="rule-sample" class="sample"></ul>
        <fieldset id="rule-block" hidden>
          <legend>Block response</legend>
          <label>Status (400–499) <input type="text" id="rule-status" inputmode="numeric" maxlength="3" placeholder="403"></label>
          <label>Headers, one per line <textarea id="rule-headers" class="code" rows="3" spellcheck="false" placeholder="content-type: application/json"></textarea></label>
          <label>Body <textarea id="rule-body" class="code" rows="3" spellcheck="false" placeholder='{"error":"Not allowed"}'></textarea></label>
          <p class="muted">Empty: 403 with a JSON error.</p>
        </fieldset>
        <p id="rule-error" class="error" role="alert" hidden></p>
        <div class="row" id="rule-actions"><button type="submit" class="btn accent">Done</button> <button type="button" id="rule-cancel" class="btn secondary">Cancel</button></div>
        <p id="rule-done-help" class="muted">Done keeps the rule in this draft; Save on the list of rules makes it a new version.</p>
      </form>
      <aside class="reference" aria-labelledby="reference-title">
        <h3 id="reference-title">Fields and functions</h3>
        <label>Find <input type="text" id="reference-filter" autocomplete="off" spellcheck="false" aria-describedby="reference-help"></label>
        <p id="reference-help" class="muted">Choose one to insert it at the cursor.</p>
        <ul id="reference-list" class="reference-list"></ul>
      </aside>
    </div>
  </section>
</section>`;

const LISTS = `<section id="view-lists" class="view" aria-labelledby="lists-title" hidden>
  <h1 id="lists-title" tabindex="-1">Lists</h1>
  <p id="lists-load-error" class="error panel" role="alert" hidden></p>
  <section class="panel" id="lists-panel" aria-label="Lists of the chosen project">
    <p class="muted">Named lists of visitor ids, linkedIds, IP addresses, AS numbers or countries that rules test with <code>inList('name', value)</code>.</p>
    <p id="lists-error" class="error" role="alert" hidden></p>
    <p id="lists-status" class="ok" role="status"></p>
    <table class="data" id="lists-table" hidden>
      <thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Entries</th><th scope="col">Description</th><th scope="col">Updated</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody id="lists-body"></tbody>
    </table>
    <p id="lists-empty" class="muted" hidden>No lists yet.</p>
    <form id="list-form" class="sub" novalidate>
      <h2>New list</h2>
      <div class="row">
        <label>Name <input type="text" id="list-name" maxlength="64" required autocomplete="off" spellcheck="false" aria-describedby="list-name-help"></label>
        <label>Kind <select id="list-kind">${options(LIST_KINDS, (k) => `${k}: ${KINDS[k as keyof typeof KINDS]}`)}</select></label>
      </div>
      <p id="list-name-help" class="muted">Letters, digits, _, . or -: a rule names it, e.g. <code>inList('blocked-ips', ip)</code>.</p>
      <label>Description (optional) <input type="text" id="list-description" maxlength="500" autocomplete="off"></label>
      <p id="list-create-error" class="error" role="alert" hidden></p>
      <button type="submit" class="btn accent">Create list</button>
    </form>
  </section>
  <section class="panel" id="list-panel" aria-labelledby="list-title" hidden>
    <h2 id="list-title"></h2>
    <p><a id="list-back" href="/dashboard/lists">All lists</a></p>
    <p id="list-facts"></p>
    <form id="list-describe" class="row" novalidate>
      <label>Description <input type="text" id="list-shown-description" maxlength="500" autocomplete="off"></label>
      <button type="submit" class="btn small secondary">Save description</button>
    </form>
    <p id="list-describe-status" class="ok" role="status"></p>
    <p id="list-error" class="error" role="alert" hidden></p>
    <form id="entries-filter" class="row" novalidate>
      <label>Values starting with <input type="text" id="entries-prefix" maxlength="300" autocomplete="off" spellcheck="false"></label>
      <button type="submit" class="btn small accent">Search</button> <button type="button" id="entries-clear" class="btn small secondary">Clear</button>
    </form>
    <p id="entries-status" class="muted" role="status"></p>
    <table class="data" id="entries-table" hidden>
      <thead><tr><th scope="col">Value</th><th scope="col">Note</th><th scope="col">Expires (UTC)</th><th scope="col">Added (UTC)</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody id="entries-body"></tbody>
    </table>
    <p id="entries-empty" class="muted" hidden></p>
    <button type="button" id="entries-more" class="btn small secondary" hidden>Load more</button>
    <p id="entries-more-error" class="error" role="alert" hidden></p>
    <form id="entries-add-form" class="sub" novalidate>
      <h3>Add values</h3>
      <label>Values, one per line <textarea id="entries-add" class="code" rows="5" spellcheck="false" autocomplete="off"></textarea></label>
      <div class="row">
        <label>Note (optional) <input type="text" id="entries-note" maxlength="500" autocomplete="off"></label>
        <label>Expires (UTC, optional) <input type="datetime-local" id="entries-expires"></label>
      </div>
      <p class="muted">A value already on the list gets the new note and expiry.</p>
      <p id="entries-add-error" class="error" role="alert" hidden></p>
      <ul id="entries-add-problems" class="problems"></ul>
      <p id="entries-add-status" class="ok" role="status"></p>
      <button type="submit" class="btn accent">Add</button>
    </form>
    <form id="entries-remove-form" class="sub" novalidate>
      <h3>Remove values</h3>
      <label>Values, one per line <textarea id="entries-remove" class="code" rows="3" spellcheck="false" autocomplete="off"></textarea></label>
      <p id="entries-remove-error" class="error" role="alert" hidden></p>
      <ul id="entries-remove-problems" class="problems"></ul>
      <p id="entries-remove-status" class="ok" role="status"></p>
      <button type="submit" class="btn danger">Remove</button>
    </form>
  </section>
</section>`;

const REVIEWS = `<section id="view-reviews" class="view" aria-labelledby="reviews-title" hidden>
  <h1 id="reviews-title" tabindex="-1">Review</h1>
  <p id="reviews-load-error" class="error panel" role="alert" hidden></p>
  <section class="panel" id="reviews-panel" aria-label="Review queue of the chosen project">
    <p class="muted">Events a rule sent to review, newest first. A label goes into the event (search, webhooks, the export) and can put its visitor, linkedId or IP on a list in the same step.</p>
    <div class="row">
      <nav class="tabs" aria-label="Which events">
        <a href="/dashboard/review" data-status="pending">Pending</a>
        <a href="/dashboard/review?status=labeled" data-status="labeled">Labeled</a>
        <a href="/dashboard/review?status=all" data-status="all">All</a>
      </nav>
      <a id="labels-export" href="/dashboard/review" download hidden>Export labels (JSON lines)</a>
    </div>
    <p id="reviews-error" class="error" role="alert" hidden></p>
    <p id="reviews-status" class="ok" role="status"></p>
    <table class="data" id="reviews-table" hidden>
      <thead><tr><th scope="col">Time (UTC)</th><th scope="col">Visitor</th><th scope="col">IP, country</th><th scope="col">Page</th><th scope="col">Score</th><th scope="col">Rule</th><th scope="col">Label</th></tr></thead>
      <tbody id="reviews-body"></tbody>
    </table>
    <p id="reviews-empty" class="muted" hidden></p>
    <button type="button" id="reviews-more" class="btn small secondary" hidden>Load more</button>
    <p id="reviews-more-error" class="error" role="alert" hidden></p>
  </section>
</section>`;

export const DECISIONS_MARKUP = [RULES, LISTS, REVIEWS].join('\n\n');
