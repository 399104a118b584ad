export { addressRefusal, classifyAddress, hostRefusal, REFUSAL } from './address-policy';
export type { AddressClass, AddressReach } from './address-policy';
export { guardedLookup, refusedAddressOf, RefusedAddressError, systemResolver } from './guarded-lookup';
export type { Resolver } from './guarded-lookup';
export { IPV4_MAPPED, IPV6_GLOBAL_UNICAST, SPECIAL_RANGES } from './ranges';
export type { RangeGroup, SpecialRange } from './ranges';
