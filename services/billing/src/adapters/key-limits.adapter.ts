import { credentials, Metadata } from '@grpc/grpc-js';
import type { LimitReset } from '@svc/contracts';
import { AccountAdminClient, limitResetFromProto } from '@svc/grpc';

export interface KeyLimit {
  keyId: string;
  accountId: string;
  limitMicros: number;
  limitReset: LimitReset | null;
}

/** Where key limits come from: account-admin owns keys (GetKeyLimits). */
export interface KeyLimitSource {
  limitsOf(keyIds: readonly string[]): Promise<KeyLimit[]>;
  close(): void;
}

const CALL_TIMEOUT_MS = 5_000;

/** GetKeyLimits on account-admin's gRPC API (the worker's key.limit.threshold checks). */
export class GrpcKeyLimitSource implements KeyLimitSource {
  private readonly client: InstanceType<typeof AccountAdminClient>;

  constructor(address: string) {
    this.client = new AccountAdminClient(address, credentials.createInsecure());
  }

  limitsOf(keyIds: readonly string[]): Promise<KeyLimit[]> {
    return new Promise((resolve, reject) => {
      this.client.getKeyLimits({ keyIds: [...keyIds] }, new Metadata(), { deadline: Date.now() + CALL_TIMEOUT_MS }, (error, response) => {
        if (error !== null) return reject(error);
        try {
          resolve(response.limits.map((l) => ({ keyId: l.keyId, accountId: l.accountId, limitMicros: l.limitMicros, limitReset: limitResetFromProto(l.limitReset) })));
        } catch (mapping) {
          reject(mapping as Error);
        }
      });
    });
  }

  close(): void {
    this.client.close();
  }
}
