import { credentials, Metadata, status } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { AppError } from '@svc/errors';
import { AccountAdminClient } from '@svc/grpc';
import type { Logger } from 'pino';

/** What billing needs from account-admin, the owner of accounts. */
export interface AccountDirectory {
  /** Creates an account (operator path); returns its id. */
  createAccount(input: { email?: string; name?: string }): Promise<{ accountId: string }>;
  /** False when account-admin answers NOT_FOUND. */
  accountExists(accountId: string): Promise<boolean>;
  close(): void;
}

const CALL_TIMEOUT_MS = 5_000;

function isServiceError(error: unknown): error is ServiceError {
  return error instanceof Error && typeof (error as Partial<ServiceError>).code === 'number';
}

/** account-admin over gRPC (AccountAdmin service from proto/). */
export class GrpcAccountDirectory implements AccountDirectory {
  private readonly client: InstanceType<typeof AccountAdminClient>;

  constructor(
    address: string,
    private readonly logger: Logger,
  ) {
    this.client = new AccountAdminClient(address, credentials.createInsecure());
  }

  createAccount(input: { email?: string; name?: string }): Promise<{ accountId: string }> {
    return new Promise((resolve, reject) => {
      this.client.createAccount(input, new Metadata(), { deadline: Date.now() + CALL_TIMEOUT_MS }, (error, account) => {
        if (error === null) {
          resolve({ accountId: account.accountId });
          return;
        }
        reject(this.mapError('CreateAccount', error));
      });
    });
  }

  accountExists(accountId: string): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.client.getAccount({ accountId }, new Metadata(), { deadline: Date.now() + CALL_TIMEOUT_MS }, (error) => {
        if (error === null) resolve(true);
        else if (error.code === status.NOT_FOUND) resolve(false);
        else reject(this.mapError('GetAccount', error));
      });
    });
  }

  close(): void {
    this.client.close();
  }

  /** A request account-admin rejects is the caller's problem; anything else is a fault. */
  private mapError(call: string, error: unknown): AppError {
    if (isServiceError(error) && (error.code === status.INVALID_ARGUMENT || error.code === status.ALREADY_EXISTS)) {
      return new AppError('invalid_request', error.details === '' ? 'account-admin rejected the request' : error.details);
    }
    this.logger.error({ call, grpc_code: isServiceError(error) ? error.code : undefined, err: error }, 'account-admin call failed');
    return new AppError('internal', 'internal error');
  }
}
