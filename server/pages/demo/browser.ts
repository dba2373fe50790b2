// The demo page script: a test key for the chosen project (created through
// the dashboard API once, then kept in localStorage), the agent's identify
// call, and the full event read back with the session. Everything from the
// server is set with textContent.
import { load } from '../../../clients/agent/index.js';
import { api, errorText, toLogin } from '../browser/client.js';
import { el, text } from '../browser/dom.js';
import { showWho, signOut } from '../browser/session.js';

const storageKey = (projectId: string) => `deviceid-demo-key:${projectId}`;

function fail(message: string): void {
  text('demo-status', '');
  const e = el('demo-error');
  e.textContent = message;
  e.hidden = false;
}

/** A working test key of the project: the stored one, or a new one. */
async function testKey(projectId: string): Promise<string> {
  const stored = localStorage.getItem(storageKey(projectId));
  if (stored) {
    const res = await api.keys.getSelf({ extraHeaders: { 'x-api-key': stored } });
    if (res.status === 200) return stored;
  }
  text('demo-status', 'Creating a test key for this page…');
  const res = await api.account.createKey({ params: { projectId }, body: { name: 'Demo page (test)', type: 'test' } });
  if (res.status !== 201) throw new Error(errorText(res));
  localStorage.setItem(storageKey(projectId), res.body.key);
  return res.body.key;
}

const pct = (n: number) => `${Math.round(n * 100)}%`;

async function run(event?: Event): Promise<void> {
  event?.preventDefault();
  el('demo-error').hidden = true;
  const projectId = el<HTMLSelectElement>('demo-project').value;
  const button = el<HTMLButtonElement>('demo-run');
  button.disabled = true;
  try {
    const apiKey = await testKey(projectId);
    text('demo-status', 'Collecting signals and identifying…');
    const agent = await load({ apiKey, endpoint: location.origin });
    const linkedId = el<HTMLInputElement>('demo-linked').value.trim();
    const answer = await agent.get({ ...(linkedId && { linkedId }), tag: { page: 'demo' } });
    // A project with sealed results answers a blob only its backend can open.
    if ('sealedResult' in answer) throw new Error('This project seals its results (turn sealing off in the dashboard to use the demo).');
    const result = answer;
    text('r-visitor', result.visitorId);
    text('r-confidence', `${result.confidence.toFixed(2)} (${pct(result.confidence)})`);
    text('r-visits', String(result.visitCount));
    text('r-bot', result.botProbability.toFixed(2));
    text('r-suspect', `${result.suspectScore} / 100`);
    text('r-ip', result.ip);
    text('r-request', result.requestId);
    const items = Object.entries(result.verdicts).map(([name, v]) => {
      const li = document.createElement('li');
      const fired = v.result;
      li.className = fired ? 'fired' : '';
      li.textContent = `${name}: ${fired ? 'yes' : 'no'}`;
      return li;
    });
    el('r-verdicts').replaceChildren(...items);
    const full = await api.demo.getAccountEvent({ params: { requestId: result.requestId } });
    text('r-event', full.status === 200 ? JSON.stringify(full.body, null, 2) : errorText(full));
    el('demo-result').hidden = false;
    text('demo-status', `Identified at ${new Date(result.timestamp).toLocaleTimeString()}.`);
  } catch (e) {
    const body = (e as { body?: { error?: string } }).body;
    fail(body?.error ? `The service refused: ${body.error}` : e instanceof Error ? e.message : String(e));
  } finally {
    button.disabled = false;
  }
}

async function start(): Promise<void> {
  const [me, list] = await Promise.all([api.account.getAccount(), api.account.listProjects()]);
  if (me.status === 401 || list.status === 401) return toLogin('/demo');
  if (me.status !== 200) return fail(errorText(me));
  if (list.status !== 200) return fail(errorText(list));
  showWho(
    me.body.user.email,
    () =>
      void signOut(
        () => location.assign('/'),
        (res) => fail(errorText(res)),
      ),
  );
  const select = el<HTMLSelectElement>('demo-project');
  select.replaceChildren(
    ...list.body.projects.map((p) => {
      const o = document.createElement('option');
      o.value = p.id;
      o.textContent = p.name;
      return o;
    }),
  );
  el('demo-form').addEventListener('submit', (e) => void run(e));
  await run();
}

void start();
