import { isIP } from 'node:net';
import type { ProblemList } from './problem-list.js';
import { describeType } from './toml-fields.js';

/** One `trusted_proxies` entry: an address and how many leading bits of it must match. */
export interface ProxyRange {
  readonly address: string;
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
}

/** Parses `"10.0.0.0/8"`, `"192.0.2.10"`, `"fd00::/8"` or `"::1"`; undefined when it is neither. */
export function parseProxyRange(text: string): ProxyRange | undefined {
  const slash = text.indexOf('/');
  const address = slash === -1 ? text : text.slice(0, slash);
  const version = isIP(address);
  if (version === 0) return undefined;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  const bits = version === 4 ? 32 : 128;
  if (slash === -1) return { address, prefix: bits, family };
  const prefixText = text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  return prefix <= bits ? { address, prefix, family } : undefined;
}

const HINT =
  'the addresses of your load balancers or reverse proxies, e.g. trusted_proxies = ["10.0.0.0/8", "192.0.2.10"]; host names are not resolved';

/**
 * Reads `[server] trusted_proxies`: a list of IP addresses and CIDR ranges. Returns the
 * entries as written (empty when absent), or undefined after reporting a problem.
 */
export function readProxyRanges(
  value: unknown,
  file: string,
  problems: ProblemList,
): readonly string[] | undefined {
  const path = 'server.trusted_proxies';
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    problems.error(file, path, `must be a list, got ${describeType(value)}`, HINT);
    return undefined;
  }
  let ok = true;
  value.forEach((entry: unknown, index) => {
    const at = `${path}[${index}]`;
    if (typeof entry !== 'string') {
      problems.error(file, at, `must be a string, got ${describeType(entry)}`, HINT);
      ok = false;
    } else if (parseProxyRange(entry) === undefined) {
      problems.error(file, at, `'${entry}' is not an IP address or CIDR range`, HINT);
      ok = false;
    }
  });
  return ok ? (value as string[]) : undefined;
}
