import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** The absolute path of an executable on PATH, or undefined (tests skip, saying why). */
export function onPath(binary: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, binary);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}
