// Install: the agent snippets for the chosen project, carrying a browser key
// created in this page's session (its value is shown once) or a placeholder.
import { api } from '../browser/client.js';
import { copy, COPY_BY_HAND, el, text } from '../browser/dom.js';
import { report, type ApiKey, type Projects } from './types.js';

export interface Install {
  /** Shows the snippets for the chosen project. */
  show(): void;
  /** A browser key was just created: its value goes into that project's snippets. */
  fresh(projectId: string, value: string): void;
}

export function installPanel(projects: Projects): Install {
  /** Values of browser keys created on this page, per project. */
  const freshKeys = new Map<string, string>();
  let keys: readonly ApiKey[] = [];

  const render = () => {
    const project = projects.current();
    text('install-project', project?.name ?? '');
    const origin = location.origin;
    const fresh = project && freshKeys.get(project.id);
    const active = keys.find((k) => k.status === 'active' && k.type === 'live') ?? keys.find((k) => k.status === 'active' && k.type === 'test');
    const key = fresh ?? 'svc_live_YOUR_KEY';
    const note = fresh
      ? 'The snippets carry the key you just created. Copy them now: the key is shown only once.'
      : active
        ? `Paste the value of a browser key of this project (for example ${active.hint}, “${active.name}”): it was shown once when created. Or create a live key on the API keys page and it is filled in here.`
        : 'This project has no browser key yet: create a live key on the API keys page (a test key for development) and it is filled in here.';
    text('install-note', note);
    el<HTMLTextAreaElement>('snippet-html').value = `<script src="${origin}/agent.js"></script>
<script>
  DeviceId.load({ apiKey: '${key}', endpoint: '${origin}' })
    .then((agent) => agent.get({ linkedId: 'user-42' }))
    .then((result) => {
      // Send result.requestId to your backend; it reads the full event with a secret key.
      console.log(result.visitorId, result.requestId);
    });
</script>`;
    el<HTMLTextAreaElement>('snippet-npm').value = `npm install @deviceid/agent

import { load } from '@deviceid/agent';

const agent = await load({ apiKey: '${key}', endpoint: '${origin}' });
const { visitorId, requestId } = await agent.get({ linkedId: 'user-42' });`;
  };

  for (const id of ['snippet-html', 'snippet-npm']) {
    el(`copy-${id}`).addEventListener('click', () => {
      void copy(el<HTMLTextAreaElement>(id)).then((ok) => text('install-status', ok ? 'Copied' : COPY_BY_HAND));
    });
  }
  projects.onList(render);
  return {
    show() {
      keys = [];
      render();
      const projectId = projects.current()?.id;
      if (!projectId) return;
      void api.account.listKeys({ params: { projectId } }).then((res) => {
        if (projectId !== projects.current()?.id) return;
        if (res.status !== 200) return report('install-error', res);
        keys = res.body.keys;
        render();
      });
    },
    fresh: (projectId, value) => void freshKeys.set(projectId, value),
  };
}
