/**
 * The Dockerfile and .dockerignore, checked without a container engine: the dockerfile-utils
 * linter (every rule it has, as an error) finds nothing, and the runtime stage is what the
 * issue and the README promise. Building and running the image needs Docker: README "Install
 * and deploy" gives the one command per check.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as dockerignore from '@balena/dockerignore';
import type { Ignore } from '@balena/dockerignore';
import type { Instruction, ModifiableInstruction } from 'dockerfile-ast';
import { validate, ValidationSeverity, type ValidatorSettings } from 'dockerfile-utils';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/run-cli.js';
import { DOCKERFILE_PATH, readImage } from '../support/dockerfile.js';

const STRICT: Required<ValidatorSettings> = {
  deprecatedMaintainer: ValidationSeverity.ERROR,
  directiveCasing: ValidationSeverity.ERROR,
  emptyContinuationLine: ValidationSeverity.ERROR,
  instructionCasing: ValidationSeverity.ERROR,
  instructionCmdMultiple: ValidationSeverity.ERROR,
  instructionEntrypointMultiple: ValidationSeverity.ERROR,
  instructionHealthcheckMultiple: ValidationSeverity.ERROR,
  instructionJSONInSingleQuotes: ValidationSeverity.ERROR,
  instructionWorkdirRelative: ValidationSeverity.ERROR,
};

const dockerfile = readFileSync(DOCKERFILE_PATH, 'utf8');
const image = readImage(dockerfile);
const runtime = image.stages.at(-1)!;
/** COPY, ADD and HEALTHCHECK carry flags (`--from=build`). */
const flagsOf = (instruction: Instruction): string[] =>
  (instruction as ModifiableInstruction)
    .getFlags()
    .map((flag) => `${flag.getName()}=${flag.getValue() ?? ''}`);
const runs = runtime.instructions
  .filter((i) => i.getKeyword() === 'RUN')
  .map((i) => i.getArgumentsContent() ?? '');

describe('Dockerfile', () => {
  it('passes the dockerfile-utils linter with every rule as an error', () => {
    const problems = validate(dockerfile, STRICT).map(
      (d) =>
        `line ${d.range.start.line + 1}: ${typeof d.message === 'string' ? d.message : d.message.value}`,
    );
    expect(problems).toEqual([]);
  });

  it('is linted for real: a broken Dockerfile gets errors', () => {
    const broken = 'from node:24\nWORKDIR relative\nCMD serve\nCMD ["a"]\nEXPOSE port\n';
    expect(validate(broken, STRICT).length).toBeGreaterThanOrEqual(3);
  });

  it('builds with dev dependencies, then runs on npm ci --omit=dev and the packed files only', () => {
    expect(image.stages).toHaveLength(2);
    expect(image.stages[0]!.name).toBe('build');
    expect(image.stages[0]!.instructions.map((i) => i.getArgumentsContent()).join('\n')).toMatch(
      /npm ci (?!.*--omit)/,
    );
    expect(runs.some((run) => /npm ci --omit=dev/.test(run))).toBe(true);
    const copies = runtime.instructions.filter((i) => i.getKeyword() === 'COPY');
    for (const copy of copies) {
      expect(flagsOf(copy)).toContain('from=build');
    }
  });

  it('pins one exact Node 24 on a slim base', () => {
    expect(image.nodeVersion).toMatch(/^24\.\d+\.\d+$/);
    for (const stage of image.stages) expect(stage.from).toMatch(/^node:24\.\d+\.\d+-\w+-slim\b/);
  });

  it('runs `cascade serve` as the unprivileged user, config from CONFIG_PATH, usage in /data', () => {
    expect(image.entrypoint).toEqual(['cascade']);
    expect(image.cmd).toEqual(['serve']);
    expect(image.user).not.toMatch(/^(root|0)(:|$)/);
    expect(image.exposed).toEqual(['3000']);
    expect(image.env.CONFIG_PATH).toMatch(/^\/app\/config\//);
    // The working directory is the volume: the default quotas_path lands in it.
    expect(image.workdir).toBe('/data');
    expect(image.volumes).toEqual(['/data']);
    expect(runs.join('\n')).toMatch(/chown node:node \/data/);
    expect(image.user).toBe('node');
    expect(image.stopSignal).toBe('SIGTERM');
  });

  it('checks health with node itself (no curl in slim images) on /health', () => {
    expect(image.healthcheck.cmd[0]).toBe('node');
    expect(image.healthcheck.cmd.join(' ')).toContain('127.0.0.1:3000/health');
    expect(Object.keys(image.healthcheck.flags).sort()).toEqual(
      ['interval', 'retries', 'start-period', 'timeout'].sort(),
    );
  });
});

describe('.dockerignore', () => {
  // Its types say `export default`, but the module is CommonJS (module.exports = the factory),
  // which ESM sees as the default export.
  const ignore = dockerignore.default as unknown as () => Ignore;
  const rules = ignore().add(readFileSync(path.join(REPO_ROOT, '.dockerignore'), 'utf8'));
  const sent = (file: string): boolean => !rules.ignores(file);

  it('sends every file the build stage copies from the context', () => {
    const sources = image.stages[0]!.instructions.filter(
      (i) => i.getKeyword() === 'COPY' && flagsOf(i).length === 0,
    ).flatMap((i) =>
      i
        .getArguments()
        .slice(0, -1)
        .map((arg) => arg.getValue()),
    );
    expect(sources).toContain('src');
    for (const source of sources) expect(sent(source), source).toBe(true);
    for (const file of ['src/cli.ts', 'src/core/index.ts', 'config/provider_config/helius.toml']) {
      expect(sent(file), file).toBe(true);
    }
  });

  it('keeps dependencies, build output, tests, results, caches and secrets out', () => {
    for (const file of [
      'node_modules/pino/package.json',
      'dist/cli.js',
      'test/e2e/serve.test.ts',
      'src/core/errors.test.ts',
      'results/hotpath.json',
      'scripts/bench-hotpath.ts',
      'benchmarks/bench-hotpath.ts',
      '.cache/node24/bin/node',
      '.git/HEAD',
      '.env',
      'quotas.json',
      'examples/basic_setup/docker-compose.yml',
    ]) {
      expect(sent(file), file).toBe(false);
    }
  });
});
