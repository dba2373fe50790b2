// The dashboard's data as the contract types it, and what its panels share.
import type { z } from 'zod';
import type { AccountSchema, ApiKeySchema, ProjectSchema, UsageSchema } from '../../../contract/account.js';
import { toLogin, type Answer } from '../browser/client.js';
import { problem } from '../browser/dom.js';

export type Account = z.infer<typeof AccountSchema>;
export type Usage = z.infer<typeof UsageSchema>;
export type Project = z.infer<typeof ProjectSchema>;
export type ApiKey = z.infer<typeof ApiKeySchema>;

export const LOCALE = document.documentElement.lang || 'en';

export const fmt = (n: number) => n.toLocaleString(LOCALE);
export const calls = (n: number) => `${fmt(n)} ${n === 1 ? 'call' : 'calls'}`;
export const utcDate = (iso: string) => iso.slice(0, 10);
export const utcTime = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
export const utcSeconds = (iso: string | null) => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : '—');

/** The account's projects and the one the panels show. */
export interface Projects {
  list(): readonly Project[];
  current(): Project | undefined;
  /** Chooses a project of the list (what the address names); false when it is none. */
  choose(id: string): boolean;
  /** A new or edited project (the list keeps its order). */
  put(project: Project): void;
  /** Another project was chosen. */
  onSelect(listener: () => void): void;
  /** A project was added or renamed. */
  onList(listener: () => void): void;
}

export function projectsOf(initial: readonly Project[], select: HTMLSelectElement): Projects {
  let list = [...initial];
  const selected: (() => void)[] = [];
  const listed: (() => void)[] = [];
  const render = () => {
    const chosen = select.value || list[0]?.id || '';
    select.replaceChildren(
      ...list.map((p) => {
        const option = document.createElement('option');
        option.value = p.id;
        option.textContent = p.name;
        return option;
      }),
    );
    select.value = chosen;
  };
  select.addEventListener('change', () => selected.forEach((l) => l()));
  render();
  return {
    list: () => list,
    current: () => list.find((p) => p.id === select.value),
    choose(id) {
      if (!list.some((p) => p.id === id)) return false;
      select.value = id;
      return true;
    },
    put(project) {
      list = list.some((p) => p.id === project.id) ? list.map((p) => (p.id === project.id ? project : p)) : [...list, project];
      render();
      listed.forEach((l) => l());
    },
    onSelect: (listener) => void selected.push(listener),
    onList: (listener) => void listed.push(listener),
  };
}

/** A failed call's error beside the control that made it (null hides it); an expired session goes to sign-in. */
export function report(alertId: string, res: Answer | string | null): void {
  if (typeof res === 'object' && res?.status === 401) toLogin();
  problem(alertId, res);
}
