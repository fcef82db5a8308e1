// Our copy of the standard's document is its upstream text with the fixes listed in openapi/FIXES.md
// applied, and nothing else. Each fix there carries one or more blocks, in fenced `yaml` code starting
// with a `# fix <id>` line: `old` lines replaced by `new` lines wherever they occur (at any indentation),
// exactly `count` times. Applying them backwards to our copy must give back the upstream text byte for
// byte; the test checks that against the upstream file's git blob id.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

export const FIXES_FILE = join(__dirname, '..', 'openapi', 'FIXES.md');

export interface FixBlock {
  id: string;
  count: number;
  old: string[];
  new: string[];
}

const BLOCK = /```yaml\n(# fix ([^\n]+)\n[\s\S]*?)```/g;

/** The fix blocks of FIXES.md, in the order they apply. */
export function fixBlocks(markdown = readFileSync(FIXES_FILE, 'utf8')): FixBlock[] {
  return [...markdown.matchAll(BLOCK)].map((match) => {
    const body = parse(match[1] ?? '') as { count: number; old: string; new: string };
    return { id: (match[2] ?? '').trim(), count: body.count, old: body.old.split('\n'), new: body.new.split('\n') };
  });
}

/** `text` with every block applied (forwards: upstream to ours; backwards: ours to upstream). */
export function applyFixes(text: string, blocks: FixBlock[], direction: 'forwards' | 'backwards'): string {
  const ordered = direction === 'forwards' ? blocks : [...blocks].reverse();
  return ordered.reduce((current, block) => {
    const [from, to] = direction === 'forwards' ? [block.old, block.new] : [block.new, block.old];
    return replaceBlock(current, from, to, block);
  }, text);
}

/** The git blob id of a text, as `git hash-object` gives it: how the upstream file is named in its repository. */
export function gitBlobId(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  return createHash('sha1')
    .update(Buffer.concat([Buffer.from(`blob ${bytes.length}\0`), bytes]))
    .digest('hex');
}

function replaceBlock(text: string, from: string[], to: string[], block: FixBlock): string {
  const lines = text.split('\n');
  const out: string[] = [];
  let found = 0;
  for (let i = 0; i < lines.length;) {
    const indent = matchAt(lines, i, from);
    if (indent === null) {
      out.push(lines[i] ?? '');
      i += 1;
      continue;
    }
    out.push(...to.map((line) => (line === '' ? '' : indent + line)));
    found += 1;
    i += from.length;
  }
  if (found !== block.count) {
    throw new Error(`fix ${block.id} matches ${found} times, FIXES.md says ${block.count}`);
  }
  return out.join('\n');
}

// The indentation at which `block` occurs at line `at`, or null when it does not.
function matchAt(lines: string[], at: number, block: string[]): string | null {
  const first = lines[at] ?? '';
  const indent = first.slice(0, first.search(/\S|$/));
  if (first !== indent + (block[0] ?? '')) return null;
  for (let j = 1; j < block.length; j += 1) {
    const expected = block[j] === '' ? '' : indent + block[j];
    if (lines[at + j] !== expected) return null;
  }
  return indent;
}
