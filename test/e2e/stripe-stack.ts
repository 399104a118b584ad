import { useStack } from '@svc/test-kit';
import type { StackOptions, StackSuite, StackSuiteOptions } from '@svc/test-kit';
import { FakeStripe } from '../../tools/fake-stripe/src';
import type { FakeStripeOptions } from '../../tools/fake-stripe/src';

/**
 * A fake Stripe and a stack whose billing talks to it, for the calling `describe`: the fake
 * starts in a beforeAll before the stack (`options` builds the stack's options from it, e.g.
 * `billingEnv: stripe.billingEnv(2000)`) and stops in an afterAll once the stack has stopped.
 */
export function useStripeStack(
  stripeOptions: FakeStripeOptions,
  options: (stripe: FakeStripe) => StackOptions,
  suiteOptions?: StackSuiteOptions,
): StackSuite & { readonly stripe: FakeStripe } {
  let stripe: FakeStripe | undefined;
  const started = (): FakeStripe => {
    if (stripe === undefined) throw new Error('the fake Stripe has not started: read it inside a hook or a test');
    return stripe;
  };
  beforeAll(async () => {
    stripe = await FakeStripe.start(stripeOptions);
  });
  const suite = useStack(() => options(started()), suiteOptions);
  afterAll(() => stripe?.stop());
  return Object.defineProperty(suite, 'stripe', { get: started }) as StackSuite & { readonly stripe: FakeStripe };
}
