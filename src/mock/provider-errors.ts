/**
 * Rate-limit answers RPC providers send in front of their nodes: HTTP 429 with a JSON-RPC
 * error body. Providers publish no source; the bodies are the ones users quote verbatim in
 * public bug reports (cited per preset).
 */
import type { NodeErrorPreset } from './node-error-preset.js';

const TOO_MANY_REQUESTS = 429;

/** Rate-limit presets by name. */
export const PROVIDER_ERROR_PRESETS: Readonly<Record<string, NodeErrorPreset>> = {
  // Alchemy, as quoted in conduitxyz/node#36 and gitcoinco/grants-stack-indexer#156.
  'alchemy.rate_limit': {
    summary:
      'Alchemy: HTTP 429, code 429 "Your app has exceeded its compute units per second capacity…"',
    build: () => ({
      status: TOO_MANY_REQUESTS,
      code: 429,
      message:
        'Your app has exceeded its compute units per second capacity. If you have retries enabled, you can safely ignore this message. If not, check out https://docs.alchemy.com/reference/throughput',
    }),
  },
  // Infura, as quoted in INFURA/infura#201 (backoff advice in data.rate).
  'infura.rate_limit': {
    summary: 'Infura: HTTP 429, -32005 "project ID request rate exceeded", data {rate, see}',
    param: { name: 'backoff_seconds', kind: 'integer', fallback: 1 },
    build: (backoff) => ({
      status: TOO_MANY_REQUESTS,
      code: -32005,
      message: 'project ID request rate exceeded',
      data: {
        rate: { allowed_rps: 50, backoff_seconds: Number(backoff), current_rps: 52.3 },
        see: 'https://infura.io/docs/ethereum/json-rpc/ratelimits',
      },
    }),
  },
  // Solana's public endpoints (run by rpcpool), as quoted in solana-labs/solana-program-library#2784.
  'rpcpool.rate_limit': {
    summary: 'Solana public RPC: HTTP 429, code 429 "Too many requests for a specific RPC call…"',
    build: () => ({
      status: TOO_MANY_REQUESTS,
      code: 429,
      message:
        'Too many requests for a specific RPC call, contact your app developer or support@rpcpool.com.',
    }),
  },
};
