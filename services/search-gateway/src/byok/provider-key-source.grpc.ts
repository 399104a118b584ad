import { credentials, Metadata } from '@grpc/grpc-js';
import { isProvider } from '@svc/contracts';
import type { Provider } from '@svc/contracts';
import { AccountAdminClient } from '@svc/grpc';
import type { ProviderKeyEnvelope } from '@svc/keys';

export interface StoredEnvelope {
  readonly provider: Provider;
  readonly envelope: ProviderKeyEnvelope;
}

/** Where the gateway gets an account's provider-key envelopes (ciphertext only). */
export interface ProviderKeySource {
  envelopes(accountId: string): Promise<StoredEnvelope[]>;
}

const DEADLINE_MS = 3000;

/** GetProviderKeys over gRPC to account-admin, which answers from PostgreSQL. */
export class GrpcProviderKeySource implements ProviderKeySource {
  private readonly client: AccountAdminClient;

  constructor(address: string, private readonly deadlineMs = DEADLINE_MS) {
    this.client = new AccountAdminClient(address, credentials.createInsecure());
  }

  envelopes(accountId: string): Promise<StoredEnvelope[]> {
    return new Promise((resolve, reject) => {
      this.client.getProviderKeys({ accountId }, new Metadata(), { deadline: new Date(Date.now() + this.deadlineMs) }, (error, response) => {
        if (error !== null) {
          reject(error);
          return;
        }
        const out: StoredEnvelope[] = [];
        for (const key of response.keys) {
          if (!isProvider(key.provider)) continue;
          out.push({ provider: key.provider, envelope: { kekId: key.kekId, wrappedKey: key.wrappedKey, ciphertext: key.ciphertext } });
        }
        resolve(out);
      });
    });
  }

  close(): void {
    this.client.close();
  }
}
