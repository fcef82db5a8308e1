export { loadConsoleConfig, type ConsoleConfig } from './config';
export { consoleApp, startConsole, type RunningConsole } from './server';
export { CONTENT_SECURITY_POLICY } from './http/security-headers';
export { SECURE_SESSION_COOKIE, SESSION_COOKIE, sessionCookieName } from './http/cookies';
