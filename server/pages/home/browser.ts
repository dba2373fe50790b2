// The home page's status line, from /readyz.
const status = document.getElementById('status');

async function check(): Promise<void> {
  if (!status) return;
  try {
    const res = await fetch('/readyz', { cache: 'no-store' });
    status.textContent = res.ok ? 'operational' : 'degraded: the database cannot be reached';
    status.className = res.ok ? 'ok' : 'error';
  } catch {
    status.textContent = 'unknown: the service did not answer';
    status.className = 'error';
  }
}

void check();
