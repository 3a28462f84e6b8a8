import { describe, expect, it } from 'vitest';
import { RequestOutcome, type ProxyMetrics } from './metrics.js';
import { FleetSeries } from './prom-fleet-series.js';
import { createPromMetrics } from './prom-metrics.js';

interface FakeWorker {
  readonly id: number;
  readonly metrics: ProxyMetrics;
  connected: boolean;
  silent?: boolean;
}

function worker(id: number): FakeWorker {
  return { id, metrics: createPromMetrics({ version: 'test' }), connected: true };
}

function served(w: FakeWorker, requests: number): void {
  for (let i = 0; i < requests; i++) w.metrics.request(RequestOutcome.forwarded, 0.001);
}

const fleet = () =>
  new FleetSeries<FakeWorker & { isConnected(): boolean }>(async (w) =>
    w.silent ? undefined : await w.metrics.series!(),
  );

const forwarded = (text: string): number =>
  Number(/^rpc_requests_total\{outcome="forwarded"\} (\d+)$/m.exec(text)?.[1]);

const live = (...workers: FakeWorker[]) =>
  workers.map((w) => Object.assign(w, { isConnected: () => w.connected }));

describe('FleetSeries', () => {
  it('adds up the workers, and keeps what an exited one counted by the last scrape', async () => {
    const series = fleet();
    const [a, b] = live(worker(1), worker(2));
    served(a!, 30);
    served(b!, 20);
    expect(forwarded(await series.render([a!, b!]))).toBe(50);
    // b crashes; its replacement starts from 0.
    served(b!, 5); // after the last scrape: lost with it
    series.retire(2);
    const [c] = live(worker(3));
    served(c!, 4);
    served(a!, 1);
    expect(forwarded(await series.render([a!, c!]))).toBe(31 + 20 + 4);
    // Two exits folded into one: still every count of the last scrapes.
    series.retire(3);
    const [d] = live(worker(4));
    expect(forwarded(await series.render([a!, d!]))).toBe(31 + 20 + 4);
    // Histograms keep their labels through the fold.
    expect(await series.render([a!, d!])).toMatch(
      /^rpc_request_duration_seconds_count\{outcome="forwarded"\} 55$/m,
    );
  });

  it('fails a scrape a connected worker did not answer, and skips one that left', async () => {
    const series = fleet();
    const [a, b] = live(worker(1), worker(2));
    served(a!, 3);
    b!.silent = true;
    await expect(series.render([a!, b!])).rejects.toThrow('1 of 2 workers sent no metrics');
    b!.connected = false;
    expect(forwarded(await series.render([a!, b!]))).toBe(3);
  });
});
