import { Inject, Injectable } from '@nestjs/common';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Server, ServerCredentials, status } from '@grpc/grpc-js';
import type { sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import { AppError, grpcStatusOf } from '@svc/errors';
import { AccountAdminService, keyRecordToProto, limitResetToProto } from '@svc/grpc';
import { contextFromTraceparent, withSpan } from '@svc/tracing';
import type { AccountAdminServer, ProtoAccount } from '@svc/grpc';
import type { AccountRow } from '../accounts/accounts.repository';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';
import { LOGGER } from '../logging/logger';
import type { Logger } from '../logging/logger';
import { METRICS } from '../metrics/metrics';
import type { AccountAdminMetrics } from '../metrics/metrics';
import { AccountAdminRpcService } from './grpc.service';

function toProtoAccount(account: AccountRow): ProtoAccount {
  return {
    accountId: account.id,
    email: account.email ?? undefined,
    name: account.name ?? undefined,
    createdAtMs: account.createdAt.getTime(),
  };
}

/** The grpc-js server of AccountAdmin, started and stopped with the Nest application. */
@Injectable()
export class GrpcServerAdapter implements OnApplicationBootstrap, OnApplicationShutdown {
  private server: Server | null = null;
  private boundPort = 0;

  constructor(
    @Inject(AccountAdminRpcService) private readonly rpc: AccountAdminRpcService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(METRICS) private readonly metrics: AccountAdminMetrics,
  ) {}

  get port(): number {
    return this.boundPort;
  }

  async onApplicationBootstrap(): Promise<void> {
    const server = new Server();
    const implementation: AccountAdminServer = {
      lookupKey: (call, callback) => this.unary(call, callback, 'LookupKey', async (request) => {
        const lookup = await this.rpc.lookupKey(request.keyHash);
        return lookup.found ? { found: true, key: keyRecordToProto(lookup.record) } : { found: false, key: undefined };
      }),
      createAccount: (call, callback) => this.unary(call, callback, 'CreateAccount', async (request) =>
        toProtoAccount(await this.rpc.createAccount(request.email ?? null, request.name ?? null))),
      getAccount: (call, callback) => this.unary(call, callback, 'GetAccount', async (request) =>
        toProtoAccount(await this.rpc.getAccount(request.accountId))),
      getProviderKeys: (call, callback) => this.unary(call, callback, 'GetProviderKeys', async (request) => ({
        keys: (await this.rpc.getProviderKeys(request.accountId)).map(({ provider, envelope }) => ({
          provider, kekId: envelope.kekId, wrappedKey: envelope.wrappedKey, ciphertext: envelope.ciphertext,
        })),
      })),
      markKeysUsed: (call, callback) => this.unary(call, callback, 'MarkKeysUsed', async (request) => ({
        updated: await this.rpc.markKeysUsed(request.uses.map((use) => ({ keyId: use.keyId, usedAtMs: use.usedAtMs }))),
      })),
      getKeyLimits: (call, callback) => this.unary(call, callback, 'GetKeyLimits', async (request) => ({
        limits: (await this.rpc.getKeyLimits(request.keyIds)).map((limit) => ({
          keyId: limit.id, accountId: limit.accountId, limitMicros: limit.limitMicros, limitReset: limitResetToProto(limit.limitReset),
        })),
      })),
    };
    server.addService(AccountAdminService, implementation);
    this.boundPort = await new Promise<number>((resolve, reject) => {
      server.bindAsync(`${this.config.HOST}:${this.config.GRPC_PORT}`, ServerCredentials.createInsecure(), (error, port) =>
        error === null ? resolve(port) : reject(error));
    });
    this.server = server;
    this.logger.info({ port: this.boundPort }, 'gRPC listening');
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (server === null) return;
    this.server = null;
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => {
        server.forceShutdown();
        resolve();
      }, 5_000);
      server.tryShutdown(() => {
        clearTimeout(force);
        resolve();
      });
    });
  }

  private unary<Req, Res>(
    call: ServerUnaryCall<Req, Res>,
    callback: sendUnaryData<Res>,
    method: string,
    handle: (request: Req) => Promise<Res>,
  ): void {
    const started = performance.now();
    const traceparent = call.metadata.get('traceparent')[0];
    const run = typeof traceparent === 'string'
      ? withSpan(`grpc ${method}`, 'server', contextFromTraceparent(traceparent), () => handle(call.request))
      : handle(call.request);
    run.then(
      (response) => {
        callback(null, response);
        this.metrics.grpc.observe(method, 'OK', performance.now() - started);
      },
      (error: unknown) => {
        if (error instanceof AppError) {
          const code = grpcStatusOf(error.code);
          callback({ code, details: error.message });
          this.metrics.grpc.observe(method, status[code] ?? String(code), performance.now() - started);
          return;
        }
        this.logger.error({ method, err: error instanceof Error ? error.message : String(error) }, 'gRPC call failed');
        callback({ code: status.INTERNAL, details: 'internal error' });
        this.metrics.grpc.observe(method, 'INTERNAL', performance.now() - started);
      },
    );
  }
}
