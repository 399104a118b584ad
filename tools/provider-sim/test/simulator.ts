import type { FastifyInstance } from 'fastify';
import { freePort } from '@svc/test-kit';
import { buildSimulator } from '../src/server';

/**
 * A simulator for the tests of one describe block: built before them and closed after.
 * `listen: true` serves it on a free loopback port (`base` is its URL), for tests over real
 * HTTP; otherwise the tests call `app.inject`.
 */
export function simulatorForTests(options: { listen?: boolean } = {}): { app: FastifyInstance; base: string } {
  const sim = { app: undefined as unknown as FastifyInstance, base: '' };
  beforeAll(async () => {
    sim.app = buildSimulator();
    if (options.listen === true) {
      const port = await freePort();
      await sim.app.listen({ port, host: '127.0.0.1' });
      sim.base = `http://127.0.0.1:${port}`;
    } else {
      await sim.app.ready();
    }
  });
  afterAll(async () => {
    await sim.app.close();
  });
  return sim;
}

/** The failures a `sim:<provider>=<behaviour>` directive asks for, and the status each answers with at that provider. */
export interface FailureStatuses { error500: number; error429: number; quota: number; badkey: number }

/**
 * One test per failure directive of `provider`: `search` sends a query carrying it, the answer
 * has the provider's status for it and a body that `checkBody` accepts (the provider's error shape).
 */
export function itAnswersEachFailure(
  provider: string,
  statuses: FailureStatuses,
  search: (query: string) => Promise<{ statusCode: number; json(): unknown }>,
  checkBody: (body: unknown) => void,
): void {
  it.each(Object.entries(statuses))(`sim:${provider}=%s answers %i`, async (behaviour, status) => {
    const response = await search(`q sim:${provider}=${behaviour}`);
    expect(response.statusCode).toBe(status);
    checkBody(response.json());
  });
}
