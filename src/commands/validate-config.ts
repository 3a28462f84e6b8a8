import path from 'node:path';
import {
  formatProblem,
  loadConfig,
  loadDotEnv,
  type ConfigProblem,
  type LoadResult,
  type NodeConfig,
  wsUrlOf,
} from '../core/index.js';
import type { CommandIo, ExitCode } from './io.js';
import { formatCredits, formatLimit, renderJson, renderTable } from './output.js';

/** Flags of `cascade validate-config`. */
export interface ValidateConfigOptions {
  readonly config?: string | undefined;
  readonly json?: boolean | undefined;
}

function methodsPriced(node: NodeConfig): string {
  const named = node.pricing.named.size;
  const fallback = node.pricing.unknownMethodCost;
  return fallback === undefined ? `${named}` : `${named} + others at ${fallback}`;
}

function nodeJson(node: NodeConfig, cwd: string) {
  return {
    name: node.name,
    tier: node.tier,
    url: node.redactedUrl,
    ws_url: wsUrlOf(node).redacted,
    rps_limit: node.rpsLimit === Infinity ? null : node.rpsLimit,
    max_concurrent: node.maxConcurrent === Infinity ? null : node.maxConcurrent,
    monthly_limit: node.monthlyLimit ?? null,
    spillover_threshold: node.spilloverThreshold === Infinity ? null : node.spilloverThreshold,
    reset_day: node.resetDay,
    price_list: path.relative(cwd, node.pricing.path) || node.pricing.path,
    methods_priced: node.pricing.named.size,
    unknown_method_cost: node.pricing.unknownMethodCost ?? null,
  };
}

/** A problem for --json: always the same four keys (`hint` null when there is none). */
function problemJson(problem: ConfigProblem) {
  return {
    file: problem.file,
    path: problem.path,
    message: problem.message,
    hint: problem.hint ?? null,
  };
}

/** Renders the result for people. */
export function renderValidation(result: LoadResult, cwd: string): string {
  const lines: string[] = [];
  for (const problem of result.errors) lines.push(`error: ${formatProblem(problem)}`);
  for (const problem of result.warnings) lines.push(`warning: ${formatProblem(problem)}`);
  if (result.config) {
    const rows = result.config.nodes.map((node) => [
      node.name,
      String(node.tier),
      node.redactedUrl,
      formatLimit(node.rpsLimit),
      formatLimit(node.maxConcurrent),
      formatCredits(node.monthlyLimit),
      formatCredits(node.spilloverThreshold),
      String(node.resetDay),
      path.relative(cwd, node.pricing.path) || node.pricing.path,
      methodsPriced(node),
    ]);
    lines.push(
      renderTable(
        [
          'node',
          'tier',
          'url',
          'rps',
          'max concurrent',
          'monthly limit',
          'spillover at',
          'reset day',
          'price list',
          'methods priced',
        ],
        rows,
      ),
    );
    lines.push(`${result.path}: OK, ${result.config.nodes.length} node(s)`);
  } else {
    lines.push(`${result.path}: ${result.errors.length} problem(s); nothing was started`);
  }
  return `${lines.join('\n')}\n`;
}

/** `cascade validate-config`: load config + price lists, print problems or the node table. */
export function runValidateConfig(options: ValidateConfigOptions, io: CommandIo): ExitCode {
  loadDotEnv(io.cwd, io.env);
  const result = loadConfig({ configPath: options.config, env: io.env, cwd: io.cwd });
  if (options.json) {
    io.out(
      renderJson({
        ok: result.config !== undefined,
        path: result.path,
        errors: result.errors.map(problemJson),
        warnings: result.warnings.map(problemJson),
        nodes: result.config?.nodes.map((node) => nodeJson(node, io.cwd)) ?? [],
      }),
    );
  } else if (result.config) {
    io.out(renderValidation(result, io.cwd));
  } else {
    io.err(renderValidation(result, io.cwd));
  }
  return result.config ? 0 : 1;
}
