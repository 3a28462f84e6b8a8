import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Ports handed to a process under test (an admin or metrics port, a "dead node") come from
 * below the kernel's ephemeral range. A port taken from the ephemeral range and released can
 * be handed out again by the very next `listen(0)` anywhere on the machine (a mock node, the
 * proxy's own port 0), and then the process under test finds it in use. Below that range only
 * an explicit bind takes a port, and each vitest worker draws from its own slice, so two
 * workers never hand out the same one.
 */
const SLICE = 1500;
const FIRST = 12_000;

function ephemeralLow(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/);
    const n = Number(low);
    return Number.isInteger(n) && n > FIRST + SLICE ? n : 32_768;
  } catch {
    return 32_768;
  }
}

const slices = Math.max(1, Math.floor((ephemeralLow() - FIRST) / SLICE));
const worker = Number(process.env.VITEST_POOL_ID ?? process.env.VITEST_WORKER_ID ?? process.pid);
const sliceStart = FIRST + ((Number.isFinite(worker) ? worker : process.pid) % slices) * SLICE;
let next = Math.floor(Math.random() * SLICE);

function canBind(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** The next port of this worker's slice that is free now (bound once, then released). */
async function claim(free: (port: number) => Promise<boolean>): Promise<number> {
  for (let tries = 0; tries < SLICE; tries++) {
    const port = sliceStart + (next++ % SLICE);
    if (await free(port)) return port;
  }
  throw new Error(`no free port in ${sliceStart}-${sliceStart + SLICE - 1}`);
}

/**
 * A TCP port on 127.0.0.1 that is free and that no `listen(0)` will be given. Also how tests
 * make a "dead node": nothing listens there.
 */
export function freePort(): Promise<number> {
  return claim(canBind);
}

/** A free port whose port + 1 is free too (the proxy's, and the one web3.js derives). */
export function freePortPair(): Promise<number> {
  return claim(async (port) => {
    // port + 1 must stay in this worker's slice, and is not handed out on its own later.
    if (port === sliceStart + SLICE - 1) return false;
    if (!(await canBind(port)) || !(await canBind(port + 1))) return false;
    next++;
    return true;
  });
}
