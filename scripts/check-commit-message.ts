// Checks a commit message's subject: an area prefix (`callback-svc: `, `docs: `) and under 72
// characters, so `git log --oneline` reads as a list of changes by area. With a file argument (a
// commit-msg hook passes the message's file) it checks that message; without, the last commit's.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import process from 'node:process';

const MAX_SUBJECT = 71;
const AREA_PREFIX = /^[a-z0-9][a-z0-9./, -]*: \S/;

const file = process.argv[2];
const message = file
  ? readFileSync(file, 'utf8')
  : execFileSync('git', ['log', '-1', '--format=%B'], { encoding: 'utf8' });
const subject = message.split('\n').find((line) => line.trim() !== '' && !line.startsWith('#')) ?? '';

const problems: string[] = [];
if (subject.length > MAX_SUBJECT) problems.push(`it is ${subject.length} characters; keep it under 72`);
if (!AREA_PREFIX.test(subject)) problems.push('it needs an area prefix, as in "callback-svc: retry on 503"');
// Merge commits and reverts are written by git itself.
const byGit = /^(Merge|Revert) /.test(subject);
if (problems.length > 0 && !byGit) {
  process.stderr.write(`commit subject "${subject}": ${problems.join('; ')} (CONTRIBUTING.md, Commits)\n`);
  process.exit(1);
}
