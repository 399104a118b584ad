import { PeriodicLoop } from './periodic-loop';

/** The background loop of account-admin's periodic work, on Jest's clock. */
describe('PeriodicLoop', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('runs a pass at once, then the interval after each pass ends; a failing pass is reported and the loop goes on', async () => {
    const runs: number[] = [];
    const failures: unknown[] = [];
    const loop = new PeriodicLoop(async () => {
      runs.push(Date.now());
      if (runs.length === 2) throw new Error('second pass fails');
    }, 1_000, (error) => failures.push(error));
    const start = Date.now();
    loop.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(runs.map((at) => at - start)).toEqual([0]);
    await jest.advanceTimersByTimeAsync(2_500);
    expect(runs.map((at) => at - start)).toEqual([0, 1_000, 2_000]);
    expect(failures).toEqual([new Error('second pass fails')]);
    await loop.stop();
    await jest.advanceTimersByTimeAsync(5_000);
    expect(runs).toHaveLength(3);
  });

  it('stop waits for the pass in progress, which can see it is stopping; nothing runs after', async () => {
    let release: () => void = () => undefined;
    const seen: boolean[] = [];
    const loop = new PeriodicLoop(async () => {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      seen.push(loop.stopped);
    }, 10, () => undefined);
    loop.start();
    await jest.advanceTimersByTimeAsync(0);
    let stopped = false;
    const stopping = loop.stop().then(() => {
      stopped = true;
    });
    await jest.advanceTimersByTimeAsync(100);
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(seen).toEqual([true]);
    await jest.advanceTimersByTimeAsync(100);
    expect(seen).toEqual([true]);
  });
});
