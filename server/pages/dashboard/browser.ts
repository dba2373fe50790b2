// The dashboard page script: loads the account, its usage and projects, and
// starts one panel per job over them. Each panel keeps its own state; what
// they share is the project list and choice (types.ts). The API is called
// only through the page client; everything from the server is set as text.
import { api } from '../browser/client.js';
import { el } from '../browser/dom.js';
import { showWho, signOut } from '../browser/session.js';
import { explorerPanel } from './explorer.js';
import { installPanel } from './install.js';
import { keysPanel } from './keys.js';
import { planPanel } from './plan.js';
import { projectsPanel } from './projects.js';
import { sealingPanel } from './sealing.js';
import { projectsOf, report } from './types.js';
import { webhooksPanel } from './webhooks.js';

async function start(): Promise<void> {
  const [me, usage, list] = await Promise.all([api.account.getAccount(), api.account.getUsage(), api.account.listProjects()]);
  el('loading').hidden = true;
  if (me.status !== 200) return report('load-error', me);
  if (usage.status !== 200) return report('load-error', usage);
  if (list.status !== 200) return report('load-error', list);
  showWho(me.body.user.email, () => {
    void signOut(
      () => location.assign('/login'),
      (res) => report('load-error', res),
    );
  });

  const projects = projectsOf(list.body.projects, el<HTMLSelectElement>('key-project'));
  planPanel({ account: me.body.account, usage: usage.body });
  projectsPanel(projects);
  const install = installPanel(projects);
  const keys = keysPanel(projects, install);
  const explorer = explorerPanel(projects);
  const webhooks = webhooksPanel(projects);
  const sealing = sealingPanel(projects);
  for (const id of ['plan-panel', 'projects-panel', 'keys-panel', 'install-panel']) el(id).hidden = false;

  const showProject = async () => {
    el('integrations-panel').hidden = !projects.current();
    explorer.show();
    await Promise.all([keys.load(), webhooks.show(), sealing.show()]);
  };
  projects.onSelect(() => void showProject());
  await showProject();
}

void start();
