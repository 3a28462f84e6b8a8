/**
 * .env.example names every variable cascade reads — in the sources (`env.NAME`, commander's
 * `.env('NAME')`), in the shipped configs' node URLs, in the image and the examples — and
 * nothing that nobody reads. It sets none of them: a copied .env must not send empty keys.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/run-cli.js';

const text = readFileSync(path.join(REPO_ROOT, '.env.example'), 'utf8');
/** `# NAME=…` and `NAME=…` lines. */
const documented = new Set(
  [...text.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((match) => match[1]!),
);

function files(dir: string, suffix: RegExp): string[] {
  return readdirSync(path.join(REPO_ROOT, dir), { recursive: true })
    .map(String)
    .filter((file) => suffix.test(file))
    .map((file) => path.join(REPO_ROOT, dir, file))
    .filter((file) => statSync(file).isFile());
}

/** Names `pattern` captures in the files, comment lines (`#`, `//`, ` * `) left out. */
function namesIn(paths: string[], pattern: RegExp): Set<string> {
  const names = new Set<string>();
  for (const file of paths) {
    const code = readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => !/^\s*(#|\/\/|\*|\/\*)/.test(line))
      .join('\n');
    for (const match of code.matchAll(pattern)) {
      names.add(match.slice(1).find((group) => group !== undefined)!);
    }
  }
  return names;
}

describe('.env.example', () => {
  const sources = files('src', /(?<!\.test)\.ts$/);
  const fromCode = namesIn(sources, /\benv(?:\.|\[')([A-Z][A-Z0-9_]+)/g);
  const fromFlags = namesIn(sources, /\.env\(\s*'([A-Z][A-Z0-9_]+)',?\s*\)/g);
  const fromConfigs = namesIn(files('config/balancer_config', /\.toml$/), /\$\{?([A-Z]\w*)/g);
  const fromExamples = namesIn(
    [...files('examples', /\.(toml|yml|yaml)$/), path.join(REPO_ROOT, 'Dockerfile')],
    /\$\{?([A-Z][A-Z0-9_]*)|process\.env\.([A-Z_]+)/g,
  );

  it('documents every variable the sources, shipped configs and examples read', () => {
    expect(fromCode).toContain('CONFIG_PATH');
    expect(fromFlags).toContain('RPC_URL');
    const read = new Set([...fromCode, ...fromFlags, ...fromConfigs, ...fromExamples]);
    read.delete('MAINPID'); // systemd's, in the unit's ExecReload
    for (const name of read) expect(documented, name).toContain(name);
    expect(documented).toContain('HEALTHCHECK_URL');
  });

  it('names nothing that nobody reads', () => {
    const everything = [
      ...files('src', /\.ts$/),
      ...files('config', /\.toml$/),
      ...files('examples', /./),
      ...files('monitoring', /\.yml$/),
      path.join(REPO_ROOT, 'Dockerfile'),
    ]
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    const nodeOwn = new Set(['NODE_EXTRA_CA_CERTS']);
    for (const name of documented) {
      if (!nodeOwn.has(name)) expect(everything, name).toContain(name);
    }
  });

  it('leaves every variable commented out: unset is an error, empty would be sent', () => {
    const active = text.split('\n').filter((line) => /^\s*[A-Z][A-Z0-9_]*=/.test(line));
    expect(active).toEqual([]);
  });
});
