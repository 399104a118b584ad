/**
 * What other workspaces may take from billing (its package entry point; the service itself
 * starts from main.ts): the DTOs that tools/openapi writes the OpenAPI document from, and the
 * usage answer types the contract tests check against @svc/contracts.
 */
export { CheckoutBodyDto } from './http/checkout/checkout.dto';
export { DayRangeQueryDto, UsageQueryDto } from './http/usage/usage.dto';
export type { UsageRowView, UsageView } from './http/usage/usage.dto';
export { EventsQueryDto } from './http/events/events.dto';
export { CreateEndpointDto, UpdateEndpointDto } from './http/webhook-endpoints/endpoints.dto';
export { AutoTopupSettingsDto, AutoTopupSetupDto, BillingSettingsDto } from './http/settings/settings.dto';
export { CreateResearchDto, ResearchListQueryDto } from './http/research/research.dto';
