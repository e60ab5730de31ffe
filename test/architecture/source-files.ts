// The project's own source files, as the architecture checks read them: lib/ and app/, without tests and
// without Prisma's generated client. Pure reading, with the TypeScript compiler's parser (no type check).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export const ROOT = path.resolve(import.meta.dirname, '../..');

const SOURCE = /\.(ts|tsx)$/;
const NOT_SOURCE = /(\.test\.ts|\.d\.ts)$/;

/** Every source file under these folders (relative to the root, with forward slashes). */
export function sourceFiles(...folders: string[]): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(path.join(ROOT, dir))) {
      const file = `${dir}/${name}`;
      if (file === 'lib/generated') continue;
      if (statSync(path.join(ROOT, file)).isDirectory()) walk(file);
      else if (SOURCE.test(name) && !NOT_SOURCE.test(name)) files.push(file);
    }
  };
  for (const folder of folders) walk(folder);
  return files.sort();
}

/** The project files a file imports (type-only imports included: they are dependencies of its meaning). */
export function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(path.join(ROOT, file), 'utf8'), true, true);
  return importedFiles.flatMap(({ fileName }) => {
    const resolved = resolve(file, fileName);
    return resolved ? [resolved] : [];
  });
}

function resolve(from: string, specifier: string): string | undefined {
  let target: string;
  if (specifier.startsWith('@/')) target = specifier.slice(2);
  else if (specifier.startsWith('.'))
    target = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  else return undefined; // a package
  for (const candidate of [target, `${target}.ts`, `${target}.tsx`, `${target}/index.ts`]) {
    const full = path.join(ROOT, candidate);
    try {
      if (statSync(full).isFile()) return candidate;
    } catch {}
  }
  return undefined; // a JSON file, a stylesheet: not code
}

export function parse(file: string): ts.SourceFile {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  return ts.createSourceFile(
    file,
    text,
    ts.ScriptTarget.Latest,
    true,
    file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
}
