/**
 * The repository's Dockerfile as data, parsed with dockerfile-ast (the parser behind the
 * dockerfile-utils linter): the facts of the runtime stage that the deploy tests hold the
 * examples, the Kubernetes manifests and the e2e runs to.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DockerfileParser, type Instruction } from 'dockerfile-ast';
import { REPO_ROOT } from '../helpers/run-cli.js';

export const DOCKERFILE_PATH = path.join(REPO_ROOT, 'Dockerfile');

/** One stage: its base image and instructions (FROM excluded), in order. */
export interface Stage {
  readonly from: string;
  readonly name: string | undefined;
  readonly instructions: readonly Instruction[];
}

/** What a container of the final stage starts with. */
export interface ImageFacts {
  readonly stages: readonly Stage[];
  /** The exact Node.js version of the `node:<version>-…` base images (all stages agree). */
  readonly nodeVersion: string;
  readonly entrypoint: readonly string[];
  readonly cmd: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly workdir: string;
  readonly user: string;
  readonly volumes: readonly string[];
  readonly exposed: readonly string[];
  readonly stopSignal: string | undefined;
  readonly healthcheck: { readonly flags: Record<string, string>; readonly cmd: string[] };
}

function jsonArray(text: string, what: string): string[] {
  const value: unknown = JSON.parse(text.replace(/\\\r?\n/g, ' '));
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw new Error(`${what} is not the JSON (exec) form: ${text}`);
  }
  return value;
}

function splitStages(instructions: readonly Instruction[]): Stage[] {
  const stages: Array<{ from: string; name: string | undefined; instructions: Instruction[] }> = [];
  for (const instruction of instructions) {
    if (instruction.getKeyword() === 'FROM') {
      const [from, as, name] = instruction.getArguments().map((arg) => arg.getValue());
      stages.push({
        from: from ?? '',
        name: as?.toUpperCase() === 'AS' ? name : undefined,
        instructions: [],
      });
    } else {
      stages.at(-1)?.instructions.push(instruction);
    }
  }
  return stages;
}

function last(stage: Stage, keyword: string): Instruction | undefined {
  return stage.instructions.filter((i) => i.getKeyword() === keyword).at(-1);
}

/** Parses the Dockerfile and reads the runtime (last) stage. */
export function readImage(text = readFileSync(DOCKERFILE_PATH, 'utf8')): ImageFacts {
  const dockerfile = DockerfileParser.parse(text);
  const stages = splitStages(dockerfile.getInstructions());
  const runtime = stages.at(-1);
  if (!runtime) throw new Error('Dockerfile has no FROM');
  const versions = new Set(stages.map((stage) => /^node:(\d+\.\d+\.\d+)-/.exec(stage.from)?.[1]));
  const [nodeVersion] = versions;
  if (versions.size !== 1 || nodeVersion === undefined) {
    throw new Error(`stages do not share one exact node:<x.y.z>-… base: ${[...versions].join()}`);
  }
  const env: Record<string, string> = {};
  for (const instruction of dockerfile.getENVs()) {
    if (!runtime.instructions.includes(instruction)) continue;
    for (const property of instruction.getProperties()) {
      env[property.getName()] = property.getValue() ?? '';
    }
  }
  const args = (keyword: string): string[] =>
    runtime.instructions
      .filter((i) => i.getKeyword() === keyword)
      .flatMap((i) => i.getArguments().map((arg) => arg.getValue()));
  const healthcheck = dockerfile.getHEALTHCHECKs().at(-1);
  const healthText = healthcheck?.getArgumentsContent() ?? '';
  return {
    stages,
    nodeVersion,
    entrypoint: jsonArray(last(runtime, 'ENTRYPOINT')?.getArgumentsContent() ?? '[]', 'ENTRYPOINT'),
    cmd: jsonArray(last(runtime, 'CMD')?.getArgumentsContent() ?? '[]', 'CMD'),
    env,
    workdir: last(runtime, 'WORKDIR')?.getArgumentsContent() ?? '/',
    user: last(runtime, 'USER')?.getArgumentsContent() ?? 'root',
    volumes: args('VOLUME'),
    exposed: args('EXPOSE'),
    stopSignal: last(runtime, 'STOPSIGNAL')?.getArgumentsContent() ?? undefined,
    healthcheck: {
      flags: Object.fromEntries(
        (healthcheck?.getFlags() ?? []).map((flag) => [flag.getName(), flag.getValue() ?? '']),
      ),
      cmd: jsonArray(healthText.replace(/^CMD\s+/, ''), 'HEALTHCHECK CMD'),
    },
  };
}
