import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { addressRefusal } from './address-policy';
import type { AddressReach } from './address-policy';

/** Resolves a name to every address it has (the system's resolver, or a test's). */
export type Resolver = (hostname: string, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

export const systemResolver: Resolver = (hostname, callback) =>
  dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => callback(error, addresses ?? []));

/** A connection refused because a name resolved to an address the policy does not reach. */
export class RefusedAddressError extends Error {
  readonly code = 'ERR_ADDRESS_REFUSED';

  constructor(
    readonly hostname: string,
    readonly reason: string,
  ) {
    super(`${hostname} resolves to ${reason}`);
  }
}

/** The RefusedAddressError behind a failed request (HTTP clients wrap connect errors), or null. */
export function refusedAddressOf(error: unknown): RefusedAddressError | null {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth++) {
    if (current instanceof RefusedAddressError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/**
 * The DNS lookup to give a socket (`lookup` of node:http, node:https and net.connect; undici's
 * `connect.lookup`): it resolves the name itself and checks every answer, so the address the
 * socket connects to is one that was checked (no window for a rebinding answer between a check
 * and the connection). A name with any refused answer is refused whole, so a mix of a public
 * and a private answer cannot steer the choice.
 */
export function guardedLookup(reach: AddressReach, resolver: Resolver = systemResolver): LookupFunction {
  return (hostname: string, options: LookupOptions, callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void): void => {
    resolver(hostname, (error, answers) => {
      if (error !== null) return callback(error, '', 0);
      for (const answer of answers) {
        const refused = addressRefusal(answer.address, reach);
        if (refused !== null) return callback(new RefusedAddressError(hostname, refused), '', 0);
      }
      const family = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
      const wanted = family === 0 ? answers : answers.filter((answer) => answer.family === family);
      const first = wanted[0];
      if (first === undefined) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
      if (options.all === true) return callback(null, wanted);
      return callback(null, first.address, first.family);
    });
  };
}
