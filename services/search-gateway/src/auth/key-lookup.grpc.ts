import { credentials, Metadata } from '@grpc/grpc-js';
import type { KeyLookup } from '@svc/contracts';
import { AccountAdminClient, keyRecordFromProto } from '@svc/grpc';
import { currentTraceparent } from '@svc/tracing';

/** The owner's answer for a hash, or a fault (unreachable, bad answer). */
export type OwnerLookup = { kind: 'found'; lookup: KeyLookup } | { kind: 'error'; error: unknown };

/** The seam to account-admin's LookupKey (which also fills Redis). */
export interface KeyOwner {
  lookup(keyHash: string): Promise<OwnerLookup>;
}

const LOOKUP_DEADLINE_MS = 3000;

/** LookupKey over gRPC to account-admin; never throws. */
export class GrpcKeyOwner implements KeyOwner {
  private readonly client: AccountAdminClient;

  constructor(address: string, private readonly deadlineMs = LOOKUP_DEADLINE_MS) {
    this.client = new AccountAdminClient(address, credentials.createInsecure());
  }

  lookup(keyHash: string): Promise<OwnerLookup> {
    return new Promise((resolve) => {
      const deadline = new Date(Date.now() + this.deadlineMs);
      const metadata = new Metadata();
      const traceparent = currentTraceparent();
      if (traceparent !== undefined) metadata.set('traceparent', traceparent);
      this.client.lookupKey({ keyHash }, metadata, { deadline }, (error, response) => {
        if (error !== null) {
          resolve({ kind: 'error', error });
          return;
        }
        if (!response.found) {
          resolve({ kind: 'found', lookup: { found: false } });
          return;
        }
        if (response.key === undefined) {
          resolve({ kind: 'error', error: new Error('LookupKey answered found without a key') });
          return;
        }
        try {
          resolve({ kind: 'found', lookup: { found: true, record: keyRecordFromProto(response.key) } });
        } catch (cause) {
          resolve({ kind: 'error', error: cause });
        }
      });
    });
  }

  close(): void {
    this.client.close();
  }
}
