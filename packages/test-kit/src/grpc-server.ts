import { Server, ServerCredentials } from '@grpc/grpc-js';

/** A grpc-js server on a free loopback port, for a test's stand-in of a service. */
export interface LoopbackGrpcServer {
  readonly server: Server;
  readonly port: number;
  /** `127.0.0.1:<port>`, as a service's *_GRPC_URL names it. */
  readonly address: string;
  stop(): Promise<void>;
}

/** Starts a grpc-js server on 127.0.0.1 and a free port; `setup` adds its services first. */
export async function startGrpcServer(setup: (server: Server) => void = () => undefined): Promise<LoopbackGrpcServer> {
  const server = new Server();
  setup(server);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error === null ? resolve(bound) : reject(error)));
  });
  return {
    server,
    port,
    address: `127.0.0.1:${port}`,
    stop: () => new Promise((resolve) => server.tryShutdown(() => resolve())),
  };
}
