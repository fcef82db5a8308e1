export { loadConsoleConfig, type ConsoleConfig } from './config';
export { consoleApp, startConsole, type RunningConsole } from './server';
export { CONTENT_SECURITY_POLICY } from './http/security-headers';
export { SESSION_COOKIE } from './http/cookies';
