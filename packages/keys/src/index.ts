export { generateSecret, hashSecret, parseBearer, labelOf, kindOfSecret } from './key-format';
export type { KeyKind, ParsedBearer } from './key-format';
export {
  encryptProviderKey, decryptProviderKey, rewrapProviderKey, providerKeyLabel, kekRingFromEnv, serviceKekRing,
  ProviderKeyCryptoError, KekConfigError,
} from './provider-key-envelope';
export type { ProviderKeyEnvelope, Kek, KekRing } from './provider-key-envelope';
export { generateOAuthSecret, isOAuthSecret, parseAccessToken } from './oauth-token-format';
export type { OAuthSecretKind, ParsedAccessToken } from './oauth-token-format';
