/** Temporary directories for tests: created under os.tmpdir(), removed by `cleanup()`. */
import { afterEach, beforeEach } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A temporary directory and the way to remove it. */
export interface TempDir {
  /** Absolute path of the directory. */
  readonly dir: string;
  /** Absolute path of `relative` inside the directory. */
  readonly path: (relative: string) => string;
  /** Writes `files` (relative path → contents), creating parent folders; returns `dir`. */
  readonly write: (files: Readonly<Record<string, string>>) => string;
  /** Removes the directory and everything in it. Safe to call twice. */
  readonly cleanup: () => void;
}

/** Creates a fresh directory `<tmp>/<prefix>XXXXXX`. */
export function makeTempDir(prefix = 'cascade-test-'): TempDir {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  const resolve = (relative: string) => path.join(dir, relative);
  return {
    dir,
    path: resolve,
    write: (files) => {
      writeFiles(dir, files);
      return dir;
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Writes `files` (relative path → contents) under `dir`, creating parent folders. */
export function writeFiles(dir: string, files: Readonly<Record<string, string>>): void {
  for (const [relative, contents] of Object.entries(files)) {
    const file = path.join(dir, relative);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, contents);
  }
}

/**
 * Runs `body` with a fresh temp dir and removes the dir afterwards, whatever happens.
 * For a dir shared by several tests, call makeTempDir in beforeEach and cleanup in afterEach.
 */
export async function withTempDir<T>(
  body: (temp: TempDir) => T | Promise<T>,
  prefix?: string,
): Promise<T> {
  const temp = makeTempDir(prefix);
  try {
    return await body(temp);
  } finally {
    temp.cleanup();
  }
}

/**
 * A fresh temporary directory for every test of the calling file (made in beforeEach, removed
 * in afterEach), behind one handle that always points at the current test's directory.
 */
export function useTempDir(prefix?: string): TempDir {
  let current: TempDir | undefined;
  beforeEach(() => {
    current = makeTempDir(prefix);
  });
  afterEach(() => current?.cleanup());
  const now = (): TempDir => {
    if (!current) throw new Error('useTempDir: only inside a test');
    return current;
  };
  return {
    get dir() {
      return now().dir;
    },
    path: (relative) => now().path(relative),
    write: (files) => now().write(files),
    cleanup: () => now().cleanup(),
  };
}
