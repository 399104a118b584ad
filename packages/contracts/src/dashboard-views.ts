/**
 * The JSON of what only the dashboard shows (no /v1 endpoint, so no SDK type): management
 * keys and the OAuth consent and connected apps (account-admin), and the account's recent searches, purchases and daily spend
 * (billing's internal API, relayed by account-admin; decision 15). The services type their
 * answers with these, and the dashboard's web app imports this file (it imports only types,
 * which the bundler erases, so it takes the file as it is).
 */
import type { SearchFilters } from './filters';
import type { RequestKind } from './settlement';

/** A management key as the dashboard lists it. */
export interface ManagementKeyView {
  id: string;
  name: string;
  label: string;
  created_at: string;
  /** Added for the dashboard's table (its switch and "last used"); the contract's four fields come first. */
  disabled: boolean;
  updated_at: string;
  last_used_at: string | null;
}

/** One attempt of a search in the activity list. */
export interface ActivityAttemptView {
  model: string;
  provider: string;
  source: string;
  status: string;
  error: string | null;
  cost_usd: number;
  timed_out: boolean;
  /** Results returned (an extract: URLs that came back). */
  results: number;
  /** The result cache's part in an answered attempt: hit, joined, miss or off; null otherwise. */
  cache: string | null;
  /** What the cache saved this attempt against the model's full price. */
  saved_usd: number;
}

/** One search or extract in the activity list. */
export interface ActivityView {
  request_id: string;
  created_at: string;
  key_id: string;
  /** search (POST /v1/search, web_search) or extract (POST /v1/extract, web_fetch). */
  kind: RequestKind;
  /** The model of the final attempt: the one that answered (an extract: the last one that fetched a URL), else the last one tried. */
  model: string | null;
  /** success when an attempt answered, else failed. */
  status: 'success' | 'failed';
  cost_usd: number;
  /**
   * The filters the search was made with, as POST /v1/search's fields in canonical form
   * (hostnames lower-cased and sorted, date-times in UTC); null without filters.
   */
  filters: SearchFilters | null;
  attempts: ActivityAttemptView[];
}

/** One credit purchase. */
export interface PurchaseView {
  id: string;
  amount_usd: number;
  /** pending | paid | failed | expired */
  status: string;
  created_at: string;
  paid_at: string | null;
  refunded_usd: number;
  disputed_usd: number;
}

/** Spend per day and model (the usage chart). */
export interface DailySpendView {
  from: string;
  to: string;
  data: { date: string; model: string; attempts: number; cost_usd: number }[];
}

/** GET /dashboard/api/oauth/requests/{id}: the authorization request the consent page shows (tools/openapi OAuthConsentView). */
export interface ConsentView {
  id: string;
  client_id: string;
  client_name: string;
  redirect_host: string;
  /** Whether the client's identity is vouched for by its own https URL (a metadata document) or only self-declared (dynamic registration). */
  client_kind: 'metadata_document' | 'dynamic';
  expires_at: string;
}

/**
 * An app connected by OAuth, as GET /dashboard/api/connected-apps lists it (tools/openapi
 * ConnectedAppList). `Key`: the API key's shape as its reader types it.
 */
export interface ConnectedAppView<Key> {
  id: string;
  client_id: string;
  client_name: string;
  redirect_host: string;
  created_at: string;
  revoked_at: string | null;
  revoked_reason: string | null;
  /** The grant's API key (also in GET /v1/keys while live), with its limit and spend; null once the key is deleted. */
  key: Key | null;
  key_id: string;
}
