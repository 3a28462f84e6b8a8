import { readFileSync } from 'node:fs';

/** The package version, read from package.json next to dist/. */
export function packageVersion(): string {
  const file = new URL('../../package.json', import.meta.url);
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { version?: string };
  return parsed.version ?? '0.0.0';
}
