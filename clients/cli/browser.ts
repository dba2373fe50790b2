// Opening the verification URL in the user's browser, when there is one to
// open it in (never over SSH, never without a display on Unix).
import { spawn } from 'node:child_process';

export interface BrowserEnv {
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
}

/** Why no browser can be offered here, or undefined when one can. */
export function noBrowserReason({ env = process.env, platform = process.platform }: BrowserEnv = {}): string | undefined {
  if (env.SSH_CONNECTION || env.SSH_CLIENT || env.SSH_TTY) return 'this is an SSH session';
  if (env.DEVICEID_BROWSER || env.BROWSER) return undefined;
  if (platform === 'darwin' || platform === 'win32') return undefined;
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return 'there is no graphical display';
  return undefined;
}

/** Only http(s) URLs are ever opened or printed as links. */
export function isWebUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}

/**
 * Starts the browser on `url` (`$DEVICEID_BROWSER` or `$BROWSER` when set,
 * else the platform's opener) and resolves once the opener process started.
 * The opener is detached: it never keeps this process alive.
 */
export function openInBrowser(url: string, { env = process.env, platform = process.platform }: BrowserEnv = {}): Promise<void> {
  if (!isWebUrl(url)) return Promise.reject(new TypeError('Only http(s) URLs can be opened'));
  const custom = env.DEVICEID_BROWSER || env.BROWSER;
  const [cmd, args]: [string, string[]] = custom
    ? [custom, [url]]
    : platform === 'darwin'
      ? ['open', [url]]
      : platform === 'win32'
        ? // Not `cmd /c start`: cmd would interpret & and ^ in the URL.
          ['rundll32', ['url.dll,FileProtocolHandler', url]]
        : ['xdg-open', [url]];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: 'ignore', detached: true, windowsHide: true });
    child.once('error', reject);
    child.once('spawn', () => {
      child.unref();
      resolve();
    });
  });
}
