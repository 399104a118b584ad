export { FakeStripe, parseStripeForm, FAKE_API_VERSION } from './fake-stripe';
export type { CardBehaviour, FakeStripeOptions, FakeEvent, DeliveryOptions, DeliveryResult, FailureMode, RecordedRequest, JsonObject } from './fake-stripe';
