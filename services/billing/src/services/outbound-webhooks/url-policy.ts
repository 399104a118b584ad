import { addressRefusal, hostRefusal } from '@svc/address-policy';
import type { AddressReach } from '@svc/address-policy';

/**
 * Where billing may send a webhook (docs/decisions/0028, 0047). By default only https URLs
 * whose every address is public (the platform's one address policy, `@svc/address-policy`).
 * With WEBHOOK_ALLOW_HTTP_AND_LOOPBACK (the local stack and tests), http and loopback
 * addresses are allowed too; private, link-local, transition and the other special ranges
 * stay refused. The URL is checked when an endpoint is saved (its scheme, and its host when
 * that is an address literal or a localhost name), and every delivery checks the addresses
 * DNS answers at connection time (deliver.ts), so a name that later resolves inward is
 * refused too.
 */
export interface UrlPolicy {
  allowHttpAndLoopback: boolean;
}

/** How far a webhook delivery may reach under the policy. */
export function reachOf(policy: UrlPolicy): AddressReach {
  return policy.allowHttpAndLoopback ? 'public-and-loopback' : 'public';
}

/** Why an address is refused, or null when billing may connect to it. */
export function refusedAddress(address: string, policy: UrlPolicy): string | null {
  return addressRefusal(address, reachOf(policy));
}

/** Why a URL may not be an endpoint's, or null. `url` already passed the DTO's URL check. */
export function refusedUrl(url: string, policy: UrlPolicy): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'url must be an absolute URL';
  }
  if (parsed.protocol !== 'https:' && !(policy.allowHttpAndLoopback && parsed.protocol === 'http:')) {
    return policy.allowHttpAndLoopback ? 'url must be an http(s) URL' : 'url must be an https URL';
  }
  if (parsed.username !== '' || parsed.password !== '') return 'url must not contain credentials';
  const refused = hostRefusal(parsed.hostname, reachOf(policy));
  return refused === null ? null : `url must not name ${refused}`;
}
