// Entry of the `deviceid` command (bin/deviceid.mjs loads it). Signals abort
// the login cleanly; a second Ctrl-C exits at once.
import { EXIT, run } from './main.js';

const controller = new AbortController();
const onSignal = (signal: NodeJS.Signals) => {
  const code = signal === 'SIGINT' ? EXIT.INTERRUPTED : EXIT.ABORTED;
  if (controller.signal.aborted) process.exit(code);
  controller.abort(signal);
};
for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, onSignal);

try {
  process.exitCode = await run(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    platform: process.platform,
    signal: controller.signal,
  });
} catch (err) {
  process.stderr.write(`deviceid: unexpected error: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = EXIT.UNEXPECTED;
}
