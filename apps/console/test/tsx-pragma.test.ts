import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * tsx (npm start's runner) reads only the tsconfig of its working directory, the repository root,
 * which has none: each .tsx names preact's JSX runtime itself, or it would compile to React calls.
 */
it('every .tsx of the console names the preact JSX runtime in its first line', () => {
  const src = join(__dirname, '..', 'src');
  const files = (readdirSync(src, { recursive: true }) as string[]).filter((f) => f.endsWith('.tsx'));
  expect(files.length).toBeGreaterThan(5);
  const without = files.filter(
    (f) => readFileSync(join(src, f), 'utf8').split('\n')[0] !== '/** @jsxRuntime automatic @jsxImportSource preact */',
  );
  expect(without.map((f) => relative(src, join(src, f)))).toEqual([]);
});
