/**
 * `npm start`: runs every app of the system on this machine, each in its own process (as in
 * production), with the development defaults. Ctrl-C (or SIGTERM) stops them all gracefully; if one
 * app dies, the others are stopped too and the exit code says so.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..');
// Order matters only for readability of the logs: every app waits for Postgres and NATS by itself.
const APPS = ['clients-svc', 'receivables-svc', 'booklet-svc', 'callback-svc', 'bank-sandbox', 'gateway'];

const children = new Map<string, ChildProcess>();
let stopping = false;

for (const app of APPS) {
  const entry = join(root, 'apps', app, 'src', 'main.ts');
  if (!existsSync(entry)) continue;
  const child = spawn(process.execPath, ['--import', 'tsx', entry], { cwd: root, stdio: 'inherit', env: process.env });
  children.set(app, child);
  child.on('exit', (code, signal) => {
    children.delete(app);
    if (!stopping) {
      console.error(`[start] ${app} exited (code ${code}, signal ${signal}); stopping the others`);
      process.exitCode = 1;
      stopAll();
    }
    if (children.size === 0) process.exit();
  });
}
console.error(`[start] started ${[...children.keys()].join(', ')}; gateway on http://localhost:${process.env.PORT ?? 3000}`);

function stopAll(): void {
  stopping = true;
  for (const child of children.values()) child.kill('SIGTERM');
}
process.on('SIGINT', stopAll);
process.on('SIGTERM', stopAll);
