/**
 * What other workspaces may take from billing (its package entry point; the service itself
 * starts from main.ts): the DTOs that tools/openapi writes the OpenAPI document from, and the
 * usage answer types the contract tests check against @svc/contracts.
 */
export { CheckoutBodyDto } from './checkout/checkout.dto';
export { DayRangeQueryDto, UsageQueryDto } from './usage/usage.dto';
export type { UsageRowView, UsageView } from './usage/usage.dto';
export { EventsQueryDto } from './events/events.dto';
export { CreateEndpointDto, UpdateEndpointDto } from './webhook-endpoints/endpoints.dto';
export { AutoTopupSettingsDto, AutoTopupSetupDto, BillingSettingsDto } from './billing-settings/settings.dto';
