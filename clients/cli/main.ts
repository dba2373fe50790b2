// The `deviceid` command. Everything for the human goes to stderr; stdout
// carries only what a script may capture (the `export` line of --print).
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { AbortedError, createKeyClient, DeviceIdError, NetworkError, RateLimitError, TimeoutError } from '@deviceid/client';
import { authorizeDevice, type Verification } from './authorize.js';
import { noBrowserReason, openInBrowser } from './browser.js';
import {
  API_KEY_ENV,
  checkWritable,
  credentialsPath,
  CredentialsFileError,
  loadCredential,
  removeCredential,
  saveCredential,
  type StoredCredential,
} from './credentials.js';
import { GrantConsumedError, GrantDeniedError, GrantExpiredError } from './errors.js';

/** Exit codes of `deviceid` (documented in `deviceid --help`). */
export const EXIT = {
  OK: 0,
  /** Anything not listed below (server error, unexpected answer, bug). */
  UNEXPECTED: 1,
  /** Bad command line. */
  USAGE: 2,
  /** The user denied the request on the consent page. */
  DENIED: 3,
  /** The code expired before it was approved. */
  EXPIRED: 4,
  /** Stopped by SIGTERM/SIGHUP (or another abort). */
  ABORTED: 5,
  /** The key of this code was already collected. */
  CONSUMED: 6,
  /** The service could not be reached (network or timeout). */
  UNREACHABLE: 7,
  /** The credentials file could not be written. */
  STORAGE: 8,
  /** `status`: no key stored for the service, or it no longer works. */
  NO_WORKING_KEY: 9,
  /** Interrupted with Ctrl-C (SIGINT): 128 + 2. */
  INTERRUPTED: 130,
} as const;

export const DEFAULT_BASE_URL = 'http://localhost:8080';
export const VERSION = '0.1.0';

const HELP = `Usage: deviceid <login|logout|status> [options]

  login   Signs this machine in to a deviceid service with a device code: open
          the printed URL, check the code, pick a project and approve. The new
          live key is stored in a file only you can read (or printed with
          --print); a key stored before for the same service is replaced and
          revoked, unless --keep-old.
  logout  Revokes the stored key on the service and forgets it.
  status  Shows the service, the stored key's hint and whether it still works.

Options:
  --base-url <url>  Service URL (default: $DEVICEID_BASE_URL or ${DEFAULT_BASE_URL})
  --name <name>     login: name shown on the consent page; the key is named "<name> (CLI)"
                    (default: "deviceid CLI on <hostname>")
  --no-browser      login: do not offer to open a browser
  --print           login: print "export ${API_KEY_ENV}=..." on stdout instead of storing the key
  --keep-old        login: keep the key stored before active (it is still replaced in the file)
  -h, --help        Show this help
  -v, --version     Show the version

Environment:
  DEVICEID_BASE_URL          Default service URL
  DEVICEID_CREDENTIALS_FILE  Credentials file (default: $XDG_CONFIG_HOME/deviceid/credentials.json,
                             or ~/.config/deviceid/credentials.json)
  DEVICEID_BROWSER, BROWSER  Command that opens the browser

Exit codes:
  0    signed in
  1    unexpected error
  2    usage error
  3    denied on the consent page
  4    the code expired before it was approved
  5    aborted (SIGTERM, SIGHUP)
  6    the key of this code was already collected
  7    the service could not be reached
  8    the credentials file could not be written
  9    status: no key stored, or the stored key no longer works
  130  interrupted (Ctrl-C)
`;

export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; pause?: () => unknown };
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  /** Aborts the login; its reason 'SIGINT' maps to exit 130, anything else to 5. */
  signal?: AbortSignal;
  /** Opens the browser (replaceable in tests). */
  openBrowser?: (url: string) => Promise<void>;
}

class UsageError extends Error {}

function defaultClientName(): string {
  const host =
    hostname()
      // eslint-disable-next-line no-control-regex -- control characters are what is stripped
      .replace(/[\u0000-\u001f\u007f-\u009f]/g, '')
      .slice(0, 40) || 'unknown host';
  return `deviceid CLI on ${host}`;
}

function parse(argv: string[]) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        'base-url': { type: 'string' },
        name: { type: 'string' },
        'no-browser': { type: 'boolean' },
        print: { type: 'boolean' },
        'keep-old': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  return parsed;
}

function fmtLeft(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** Runs `deviceid <argv>` and resolves with the exit code. Never calls process.exit. */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const err = (line = '') => io.stderr.write(`${line}\n`);
  let args: ReturnType<typeof parse>;
  try {
    args = parse(argv);
    if (args.values.help || args.positionals[0] === 'help') {
      io.stdout.write(HELP);
      return EXIT.OK;
    }
    if (args.values.version) {
      io.stdout.write(`${VERSION}\n`);
      return EXIT.OK;
    }
    if (args.positionals.length === 0) throw new UsageError('missing command');
    if (!COMMANDS.includes(args.positionals[0] as Command)) throw new UsageError(`unknown command "${args.positionals[0]}"`);
    if (args.positionals.length > 1) throw new UsageError(`unexpected argument "${args.positionals[1]}"`);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    err(`deviceid: ${e.message}`);
    err('Run "deviceid --help" for usage.');
    return EXIT.USAGE;
  }

  const baseUrl = (args.values['base-url'] ?? io.env.DEVICEID_BASE_URL ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  try {
    const u = new URL(baseUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
  } catch {
    err('deviceid: --base-url must be an http(s) URL');
    return EXIT.USAGE;
  }
  const command = args.positionals[0] as Command;
  if (command === 'logout') return logout(baseUrl, io, err);
  if (command === 'status') return status(baseUrl, io, err);

  const clientName = (args.values.name ?? defaultClientName()).trim();
  if (clientName.length === 0 || clientName.length > 64) {
    err('deviceid: --name must be 1 to 64 characters');
    return EXIT.USAGE;
  }
  const print = args.values.print === true;
  const path = credentialsPath(io.env, io.platform);

  // Before asking the server for anything: a key we cannot store would be lost.
  if (!print) {
    try {
      await checkWritable(path);
    } catch (e) {
      err(`deviceid: ${(e as Error).message}`);
      err('Use --print to get the key on stdout instead, or set DEVICEID_CREDENTIALS_FILE.');
      return EXIT.STORAGE;
    }
  }

  const spinner = createSpinner(io.stderr);
  let stopPrompt = () => {};
  const offerBrowserReason = args.values['no-browser'] ? '--no-browser' : noBrowserReason({ env: io.env, platform: io.platform });
  const open = io.openBrowser ?? ((url: string) => openInBrowser(url, { env: io.env, platform: io.platform }));
  let expiresAt = 0;

  const onVerification = (v: Verification) => {
    expiresAt = v.expiresAt.getTime();
    err();
    err(`! Your one-time code: ${v.userCode}`);
    err();
    err('  Open this page, sign in, check that it shows the same code, pick a project and approve:');
    err(`  ${v.verificationUrl}`);
    err();
    if (offerBrowserReason === undefined && io.stdin.isTTY) {
      err(`- Press Enter to open ${new URL(v.verificationUrl).host} in your browser...`);
      stopPrompt = onEnter(io.stdin, () => {
        open(v.verificationUrl).then(
          () => spinner.note('Opened the page in your browser.'),
          () => spinner.note('Could not start a browser; open the URL above yourself.'),
        );
      });
    }
    spinner.start(() => `Waiting for approval (${fmtLeft(expiresAt - Date.now())} left)`);
  };

  try {
    const { apiKey } = await authorizeDevice({
      baseUrl,
      clientName,
      onVerification,
      ...(io.signal && { signal: io.signal }),
      onPoll: (s) => {
        if (s.status === 'retrying') spinner.note(`Connection problem (${s.error.code}); retrying in ${Math.ceil(s.waitMs / 1000)} s`);
      },
    });
    spinner.stop();
    stopPrompt();
    if (print) {
      err('✓ Approved.');
      io.stdout.write(`export ${API_KEY_ENV}='${apiKey}'\n`);
      return EXIT.OK;
    }
    let previous: StoredCredential | undefined;
    try {
      previous = await loadCredential(baseUrl, path);
      await saveCredential(baseUrl, { apiKey, clientName, createdAt: new Date().toISOString() }, path);
    } catch (e) {
      err(`✗ Approved, but the key could not be stored: ${(e as Error).message}`);
      err(`  Revoke the key "${clientName} (CLI)" under API Keys in the dashboard, then run "deviceid login --print".`);
      return EXIT.STORAGE;
    }
    err(`✓ Approved. Key saved to ${path} (readable only by you).`);
    err(`  It is listed as "${clientName} (CLI)" under API Keys, where you can revoke it.`);
    if (previous && previous.apiKey !== apiKey) {
      const old = keyHint(previous.apiKey);
      if (args.values['keep-old']) err(`  The key stored before (${old}) was replaced in the file and stays active (--keep-old).`);
      else err(`  ${await revokeReplaced(baseUrl, previous.apiKey, old)}`);
    }
    return EXIT.OK;
  } catch (e) {
    spinner.stop();
    stopPrompt();
    return report(e, io, err);
  }
}

const COMMANDS = ['login', 'logout', 'status'] as const;
type Command = (typeof COMMANDS)[number];

/** `svc_live_…a1B2`: enough to tell keys apart, never the key. */
export function keyHint(key: string): string {
  const m = /^(svc_[a-z]+_)/.exec(key);
  return `${m?.[1] ?? ''}…${key.slice(-4)}`;
}

const keyClient = (baseUrl: string, apiKey: string) =>
  createKeyClient({ baseUrl, apiKey, timeoutMs: 10_000, retries: 1, userAgent: `deviceid-cli/${VERSION}` });

/** After a new login: revokes the key it replaced; says what happened. */
async function revokeReplaced(baseUrl: string, oldKey: string, hint: string): Promise<string> {
  try {
    await keyClient(baseUrl, oldKey).revokeSelf();
    return `The key stored before (${hint}) was revoked.`;
  } catch (e) {
    if (e instanceof DeviceIdError && e.status === 401) return `The key stored before (${hint}) no longer worked; nothing to revoke.`;
    if (e instanceof DeviceIdError && e.status === 403)
      return `The key stored before (${hint}) was created in the dashboard; revoke it there if you no longer need it.`;
    return `The key stored before (${hint}) could not be revoked (${e instanceof Error ? e.message : String(e)}); revoke it under API Keys in the dashboard.`;
  }
}

/** `deviceid logout`: revokes the stored key on the service, then forgets it. */
async function logout(baseUrl: string, io: CliIo, err: (line?: string) => void): Promise<number> {
  const path = credentialsPath(io.env, io.platform);
  try {
    const stored = await loadCredential(baseUrl, path);
    if (!stored) {
      err(`Not signed in to ${baseUrl} (no key in ${path}).`);
      return EXIT.OK;
    }
    const hint = keyHint(stored.apiKey);
    try {
      await keyClient(baseUrl, stored.apiKey).revokeSelf();
      err(`✓ Revoked the key ${hint} on ${baseUrl}.`);
    } catch (e) {
      if (e instanceof DeviceIdError && e.status === 401) err(`The key ${hint} no longer worked on ${baseUrl}; nothing to revoke.`);
      else if (e instanceof DeviceIdError && e.status === 403)
        err(`The key ${hint} was created in the dashboard and stays active there; revoke it under API Keys if you no longer need it.`);
      else return report(e, io, err);
    }
    await removeCredential(baseUrl, path);
    err(`✓ Removed it from ${path}.`);
    return EXIT.OK;
  } catch (e) {
    return report(e, io, err);
  }
}

/** `deviceid status`: the service, the stored key's hint, and whether it still works. */
async function status(baseUrl: string, io: CliIo, err: (line?: string) => void): Promise<number> {
  const path = credentialsPath(io.env, io.platform);
  const out = (line: string) => io.stdout.write(`${line}\n`);
  try {
    out(`Service:     ${baseUrl}`);
    const stored = await loadCredential(baseUrl, path);
    if (!stored) {
      out(`Key:         none stored in ${path}`);
      err('Run "deviceid login" to get one.');
      return EXIT.NO_WORKING_KEY;
    }
    out(`Key:         ${keyHint(stored.apiKey)} ("${stored.clientName} (CLI)", stored ${stored.createdAt} in ${path})`);
    try {
      const info = await keyClient(baseUrl, stored.apiKey).self();
      out(`Works:       yes (${info.type} key of project ${info.projectId}, last used ${info.lastUsedAt ?? 'never'})`);
      return EXIT.OK;
    } catch (e) {
      if (e instanceof DeviceIdError && e.status === 401) {
        out('Works:       no: the service refuses it (revoked or deleted)');
        err('Run "deviceid login" to get a new key.');
        return EXIT.NO_WORKING_KEY;
      }
      if (e instanceof NetworkError || e instanceof TimeoutError) {
        out(`Works:       unknown: cannot reach the service (${e.message})`);
        return EXIT.UNREACHABLE;
      }
      throw e;
    }
  } catch (e) {
    return report(e, io, err);
  }
}

function report(e: unknown, io: CliIo, err: (line?: string) => void): number {
  if (e instanceof AbortedError) {
    const sigint = io.signal?.reason === 'SIGINT';
    err(sigint ? '✗ Interrupted.' : '✗ Aborted.');
    return sigint ? EXIT.INTERRUPTED : EXIT.ABORTED;
  }
  if (e instanceof GrantDeniedError) {
    err('✗ The request was denied in the browser. No key was created.');
    return EXIT.DENIED;
  }
  if (e instanceof GrantExpiredError) {
    err('✗ The code expired before it was approved. Run "deviceid login" again.');
    return EXIT.EXPIRED;
  }
  if (e instanceof GrantConsumedError) {
    err(`✗ ${e.message}.`);
    return EXIT.CONSUMED;
  }
  if (e instanceof RateLimitError) {
    err(`✗ The service refused to start another login for now${e.retryAfter ? `; try again in ${e.retryAfter} s` : ''}.`);
    return EXIT.UNEXPECTED;
  }
  if (e instanceof NetworkError || e instanceof TimeoutError) {
    err(`✗ Cannot reach the service: ${e.message}`);
    return EXIT.UNREACHABLE;
  }
  if (e instanceof DeviceIdError) {
    err(`✗ ${e.message}${e.requestId ? ` (request ${e.requestId})` : ''}`);
    return EXIT.UNEXPECTED;
  }
  if (e instanceof CredentialsFileError) {
    err(`✗ ${e.message}`);
    return EXIT.STORAGE;
  }
  err(`✗ Unexpected error: ${e instanceof Error ? e.message : String(e)}`);
  return EXIT.UNEXPECTED;
}

/** Calls `fn` on the first Enter; the returned function stops listening (and lets the process exit). */
function onEnter(stdin: CliIo['stdin'], fn: () => void): () => void {
  let done = false;
  const onData = (chunk: Buffer | string) => {
    if (String(chunk).includes('\n') || String(chunk).includes('\r')) {
      stop();
      fn();
    }
  };
  const stop = () => {
    if (done) return;
    done = true;
    stdin.removeListener('data', onData);
    stdin.pause?.();
  };
  stdin.on('data', onData);
  stdin.resume();
  return stop;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** A one-line spinner on a TTY; elsewhere one plain line, and notes as lines. */
function createSpinner(out: CliIo['stderr']) {
  let timer: NodeJS.Timeout | undefined;
  let text = () => '';
  let i = 0;
  const draw = () => out.write(`\r\x1b[2K${FRAMES[i++ % FRAMES.length]} ${text()}`);
  return {
    start(t: () => string) {
      text = t;
      if (!out.isTTY) {
        out.write(`${t()}...\n`);
        return;
      }
      draw();
      timer = setInterval(draw, 100);
    },
    note(line: string) {
      if (out.isTTY) out.write(`\r\x1b[2K  ${line}\n`);
      else out.write(`${line}\n`);
    },
    stop() {
      if (timer) {
        clearInterval(timer);
        timer = undefined;
        out.write('\r\x1b[2K');
      }
    },
  };
}
