import type Redis from 'ioredis';

type Arg = string | number;
type Reply = [Error | null, unknown];

interface Queued {
  name: string;
  args: Arg[];
}

interface Pending {
  commands: Queued[];
  resolve: (replies: Reply[]) => void;
  reject: (error: Error) => void;
}

/**
 * Pipelines of concurrent searches, sent to Redis together. Every pipeline exec'd while the
 * event loop is busy with other I/O callbacks joins one batch, written as one ioredis pipeline
 * when the loop reaches its check phase (setImmediate). Under load that turns dozens of
 * small writes and reads into one each, on the gateway and on Redis, which is where a search
 * spent most of its CPU. Order within one pipeline is kept; a batch is not a transaction
 * (neither is a pipeline), so every script stays atomic on its own.
 *
 * `flush()` writes the queued batch at once: the settle path calls it before replying, so
 * the settlement is on the socket to Redis before the client can see the answer.
 */
export class RedisBatch {
  private pending: Pending[] = [];
  private scheduled: NodeJS.Immediate | null = null;

  constructor(private readonly redis: Redis) {}

  pipeline(): BatchPipeline {
    return new BatchPipeline(this);
  }

  /** Queues one pipeline's commands; resolves with one [error, reply] per command. */
  submit(commands: Queued[]): Promise<Reply[]> {
    return new Promise<Reply[]>((resolve, reject) => {
      this.pending.push({ commands, resolve, reject });
      this.scheduled ??= setImmediate(() => this.flush());
    });
  }

  /** Writes everything queued now, as one pipeline. */
  flush(): void {
    if (this.scheduled !== null) {
      clearImmediate(this.scheduled);
      this.scheduled = null;
    }
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    const pipeline = this.redis.pipeline();
    const dynamic = pipeline as unknown as Record<string, ((...args: Arg[]) => unknown) | undefined>;
    const sent: Pending[] = [];
    for (const entry of batch) {
      const unknown = entry.commands.find((command) => typeof dynamic[command.name] !== 'function');
      if (unknown !== undefined) {
        entry.reject(new Error(`unknown redis command ${unknown.name}`));
        continue;
      }
      for (const command of entry.commands) (dynamic[command.name] as (...args: Arg[]) => unknown).apply(pipeline, command.args);
      sent.push(entry);
    }
    if (sent.length === 0) return;
    pipeline.exec().then(
      (replies) => {
        if (replies === null) {
          const error = new Error('redis pipeline was discarded');
          for (const entry of sent) entry.reject(error);
          return;
        }
        let offset = 0;
        for (const entry of sent) {
          entry.resolve(replies.slice(offset, offset + entry.commands.length) as Reply[]);
          offset += entry.commands.length;
        }
      },
      (error: unknown) => {
        const failure = error instanceof Error ? error : new Error(String(error));
        for (const entry of sent) entry.reject(failure);
      },
    );
  }
}

/** One search's commands, in order; `exec` resolves when the batch they joined is answered. */
export class BatchPipeline {
  private readonly commands: Queued[] = [];

  constructor(private readonly batch: RedisBatch) {}

  get length(): number {
    return this.commands.length;
  }

  add(name: string, ...args: Arg[]): this {
    this.commands.push({ name, args });
    return this;
  }

  exec(): Promise<Reply[]> {
    return this.batch.submit(this.commands);
  }
}
