// The browser agent served at /agent.js: built from clients/agent once per
// process (about 0.3 s) and kept in memory.
import { buildAgent } from '../../clients/agent/build.js';

let script: Promise<string> | undefined;

export function agentScript(): Promise<string> {
  script ??= buildAgent();
  return script;
}
