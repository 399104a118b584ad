import { connect as netConnect } from 'node:net';
import type { Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { RedisEndpoint } from '@svc/redis-client';

/** A decoded RESP2 reply: simple and bulk strings (UTF-8), integers, nil, arrays, or the server's error. */
export type RespReply = string | number | null | RespReplyError | RespReply[];

/** An error reply from Redis (its message is the server's line, e.g. `NOSCRIPT ...`). */
export class RespReplyError extends Error {
  override readonly name = 'ReplyError';
}

/** The connection failed or closed before a command was answered (or it was never written). */
export class RespConnectionError extends Error {
  override readonly name = 'RespConnectionError';
}

const INCOMPLETE = Symbol('incomplete');
type Parsed = RespReply | typeof INCOMPLETE;

const CR = 13;
const PLUS = 43;
const MINUS = 45;
const COLON = 58;
const DOLLAR = 36;
const STAR = 42;

/**
 * RESP2 replies out of a byte stream, each handed to `onReply` whole and in order. A reply
 * split across chunks is parsed again from its start when the rest arrives (the gateway's
 * replies are small: a few hundred bytes per flush).
 */
export class RespDecoder {
  private buffer: Buffer | null = null;
  private offset = 0;

  constructor(private readonly onReply: (reply: RespReply) => void) {}

  /** Feeds one chunk; throws on bytes that are not RESP2 (the connection must then be dropped). */
  write(chunk: Buffer): void {
    if (this.buffer === null) {
      this.buffer = chunk;
    } else {
      this.buffer = Buffer.concat([this.buffer.subarray(this.offset), chunk]);
    }
    this.offset = 0;
    const buffer = this.buffer;
    while (this.offset < buffer.length) {
      const start = this.offset;
      const reply = this.parse(buffer);
      if (reply === INCOMPLETE) {
        this.offset = start;
        return;
      }
      this.onReply(reply);
    }
    this.buffer = null;
    this.offset = 0;
  }

  /** Forgets a partly received reply (the connection it came on is gone). */
  reset(): void {
    this.buffer = null;
    this.offset = 0;
  }

  private parse(buffer: Buffer): Parsed {
    const start = this.offset;
    if (start >= buffer.length) return INCOMPLETE;
    const lineEnd = buffer.indexOf(CR, start + 1);
    if (lineEnd === -1 || lineEnd + 1 >= buffer.length) return INCOMPLETE;
    const type = buffer[start];
    const next = lineEnd + 2;
    switch (type) {
      case PLUS:
        this.offset = next;
        return buffer.toString('utf8', start + 1, lineEnd);
      case MINUS:
        this.offset = next;
        return new RespReplyError(buffer.toString('utf8', start + 1, lineEnd));
      case COLON:
        this.offset = next;
        return integerAt(buffer, start + 1, lineEnd);
      case DOLLAR: {
        const length = integerAt(buffer, start + 1, lineEnd);
        if (length < 0) {
          this.offset = next;
          return null;
        }
        const end = next + length;
        if (end + 2 > buffer.length) return INCOMPLETE;
        this.offset = end + 2;
        return buffer.toString('utf8', next, end);
      }
      case STAR: {
        const count = integerAt(buffer, start + 1, lineEnd);
        this.offset = next;
        if (count < 0) return null;
        const items: RespReply[] = new Array<RespReply>(count);
        for (let i = 0; i < count; i++) {
          const item = this.parse(buffer);
          if (item === INCOMPLETE) return INCOMPLETE;
          items[i] = item;
        }
        return items;
      }
      default:
        throw new Error(`redis sent a reply that is not RESP2 (type byte ${String(type)})`);
    }
  }
}

/** The decimal integer in buffer[from, to) (an optional leading '-'). */
function integerAt(buffer: Buffer, from: number, to: number): number {
  let negative = false;
  let i = from;
  if (buffer[i] === MINUS) {
    negative = true;
    i++;
  }
  let value = 0;
  for (; i < to; i++) {
    const digit = (buffer[i] ?? 0) - 48;
    if (digit < 0 || digit > 9) throw new Error('redis sent a malformed integer');
    value = value * 10 + digit;
  }
  return negative ? -value : value;
}

/**
 * A text whose UTF-8 length its maker already measured (a result-cache entry, measured once for
 * its size limit): sent as it is, in the same write as the text around it, not measured again.
 */
export interface MeasuredText {
  readonly text: string;
  /** Its length in UTF-8 bytes. */
  readonly byteLength: number;
}

/** A command's argument: text (sent as UTF-8), a number (sent in decimal), or a measured text. */
export type RespArg = string | number | MeasuredText;

/** One command as RESP: `*n $len name $len arg ...`, the arguments of `head` before those of `args`. */
export function encodeCommand(name: string, args: readonly (string | number)[], head: readonly (string | number)[] = []): string {
  return encodeParts(name, [head, args]);
}

/**
 * One command as RESP whose arguments are the parts' in order (a script's SHA and key count,
 * its keys, its arguments, ...), without copying them into one array. Numbers are sent in
 * decimal. Every write of a batch is one string: a socket writes it without a gathered
 * write of separate chunks, each converted on its own (decision 0023, the store's answer).
 */
export function encodeParts(name: string, parts: readonly (readonly RespArg[])[]): string {
  let count = 1;
  for (const part of parts) count += part.length;
  let out = `*${count}\r\n$${name.length}\r\n${name}\r\n`;
  for (const part of parts) {
    for (const arg of part) {
      if (typeof arg === 'object') {
        out += `$${arg.byteLength}\r\n${arg.text}\r\n`;
        continue;
      }
      const text = typeof arg === 'string' ? arg : String(arg);
      out += `$${Buffer.byteLength(text)}\r\n${text}\r\n`;
    }
  }
  return out;
}

/** Where and how to reach one Redis node (parsed out of REDIS_URL by @svc/redis-client). */
export type RespEndpoint = RedisEndpoint;

export interface RespConnectionOptions {
  /** A connection attempt (TCP, TLS and the AUTH/SELECT handshake) gives up after this. */
  readonly connectTimeoutMs?: number;
  /** Reconnect delay after a failure: doubles from `retryBaseMs` up to `retryMaxMs`. */
  readonly retryBaseMs?: number;
  readonly retryMaxMs?: number;
  /** CLIENT SETNAME on every connection (operators see it in CLIENT LIST). */
  readonly clientName?: string;
  /** Told about connection failures (never about replies). */
  readonly onError?: (error: Error) => void;
}

export type RespStatus = 'connecting' | 'ready' | 'down' | 'closed';

/** A command's answer, or the connection's failure: exactly one call per command. */
export type RespHandler = (reply: RespReply | RespConnectionError) => void;

interface Waiting {
  readonly payload: string;
  readonly handlers: readonly RespHandler[];
  readonly written: (onSocket: boolean) => void;
}

/**
 * One Redis connection for the gateway's batched pipelines, with no per-command objects or
 * promises: a caller writes a whole batch as one pre-encoded payload with one handler per
 * command, and the replies come back to the handlers in order. (ioredis built a Command, a
 * promise and a flattened copy of the arguments for every command, which cost the gateway
 * about two and a half times the CPU per flush; docs/decisions/0007-batch-connection.md.)
 *
 * Behaviour on failure, by design the same as the ioredis client it stands beside (no
 * offline queue, nothing re-sent): while the connection is down a batch is refused at once;
 * commands in flight when it drops are failed with RespConnectionError (their callers decide:
 * the admission fails closed, a settlement is sent again by MoneyRepository); while a
 * (re)connection attempt is under way, batches wait for it (at most `connectTimeoutMs`).
 * Reconnects by itself with a doubling delay. The socket and timers never keep the process
 * alive.
 */
export class RespConnection {
  private socket: Socket | null = null;
  private state: RespStatus = 'down';
  /** Handlers of commands written on the current socket and not answered yet, oldest first. */
  private inFlight: RespHandler[] = [];
  private inFlightHead = 0;
  private waiting: Waiting[] = [];
  private retryMs: number;
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly decoder = new RespDecoder((reply) => this.onReply(reply));
  /** Bumped on every new socket: script SHAs known loaded are per connection. */
  private generation = 0;
  private readonly loadedScripts = new Set<string>();

  constructor(private readonly endpoint: RespEndpoint, private readonly options: RespConnectionOptions = {}) {
    this.retryMs = options.retryBaseMs ?? 50;
    this.open();
  }

  get status(): RespStatus {
    return this.state;
  }

  /** The script with this SHA was sent whole (EVAL) on the current connection. */
  isScriptLoaded(sha: string): boolean {
    return this.loadedScripts.has(sha);
  }

  markScriptLoaded(sha: string): void {
    this.loadedScripts.add(sha);
  }

  /** After a NOSCRIPT (SCRIPT FLUSH): send the script whole again next time. */
  forgetScript(sha: string): void {
    this.loadedScripts.delete(sha);
  }

  /**
   * Writes a batch (`handlers.length` commands, encoded in `payload`). `written` is told true
   * once the bytes are in the kernel's socket buffer, false when they were not written (the
   * connection is down, or dropped before they left the process); then every handler gets a
   * RespConnectionError.
   */
  send(payload: string, handlers: readonly RespHandler[], written: (onSocket: boolean) => void = noop): void {
    if (this.state === 'ready') {
      this.writeNow(payload, handlers, written);
      return;
    }
    if (this.state === 'connecting') {
      this.waiting.push({ payload, handlers, written });
      return;
    }
    const error = new RespConnectionError(this.state === 'closed' ? 'redis batch connection is closed' : 'redis batch connection is not up');
    queueMicrotask(() => {
      written(false);
      for (const handler of handlers) handler(error);
    });
  }

  /** Closes for good (shutdown): fails what is in flight or waiting; no reconnect. */
  close(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const socket = this.socket;
    this.socket = null;
    this.failAll(new RespConnectionError('redis batch connection is closed'));
    socket?.destroy();
  }

  private writeNow(payload: string, handlers: readonly RespHandler[], written: (onSocket: boolean) => void): void {
    const socket = this.socket;
    // A socket already destroyed (its 'close' still to come) takes nothing more.
    if (socket === null || socket.destroyed) {
      written(false);
      for (const handler of handlers) handler(new RespConnectionError('redis batch connection is not up'));
      return;
    }
    for (const handler of handlers) this.inFlight.push(handler);
    socket.write(payload);
    if (socket.writableLength === 0) {
      written(true);
      return;
    }
    // Buffered in the process: in the kernel once the socket drains, lost if it closes first.
    const onDrain = (): void => {
      socket.removeListener('close', onClose);
      written(true);
    };
    const onClose = (): void => {
      socket.removeListener('drain', onDrain);
      written(false);
    };
    socket.once('drain', onDrain);
    socket.once('close', onClose);
  }

  private open(): void {
    if (this.state === 'closed') return;
    this.state = 'connecting';
    this.generation += 1;
    this.loadedScripts.clear();
    this.decoder.reset();
    const { host, port, tls } = this.endpoint;
    const socket = tls === undefined ? netConnect({ host, port }) : tlsConnect({ ...tls, host, port });
    this.socket = socket;
    socket.unref();
    socket.setNoDelay(true);
    const generation = this.generation;
    const timeout = setTimeout(() => socket.destroy(new RespConnectionError(`redis batch connection to ${host}:${port} timed out`)), this.options.connectTimeoutMs ?? 2_000);
    timeout.unref();
    socket.once(tls === undefined ? 'connect' : 'secureConnect', () => this.handshake(socket, timeout));
    socket.on('data', (chunk: Buffer) => {
      if (generation !== this.generation) return;
      try {
        this.decoder.write(chunk);
      } catch (error) {
        socket.destroy(error instanceof Error ? error : new Error(String(error)));
      }
    });
    socket.on('error', (error: Error) => this.options.onError?.(error));
    socket.once('close', () => {
      clearTimeout(timeout);
      if (generation !== this.generation || this.state === 'closed') return;
      this.socket = null;
      this.failAll(new RespConnectionError('redis batch connection lost before the reply'));
      this.state = 'down';
      this.scheduleReconnect();
    });
  }

  /** AUTH, SELECT and CLIENT SETNAME, answered before anything else is written. */
  private handshake(socket: Socket, timeout: NodeJS.Timeout): void {
    const { username, password, db } = this.endpoint;
    const commands: string[] = [];
    if (password !== undefined && password !== '') {
      commands.push(username !== undefined && username !== '' ? encodeCommand('AUTH', [username, password]) : encodeCommand('AUTH', [password]));
    }
    if (db !== 0) commands.push(encodeCommand('SELECT', [db]));
    if (this.options.clientName !== undefined) commands.push(encodeCommand('CLIENT', ['SETNAME', this.options.clientName]));
    let left = commands.length;
    let failed = false;
    const ready = (): void => {
      clearTimeout(timeout);
      this.state = 'ready';
      this.retryMs = this.options.retryBaseMs ?? 50;
      const waiting = this.waiting;
      this.waiting = [];
      for (const batch of waiting) this.writeNow(batch.payload, batch.handlers, batch.written);
    };
    if (left === 0) {
      ready();
      return;
    }
    const handler: RespHandler = (reply) => {
      if (failed) return;
      if (reply instanceof Error) {
        failed = true;
        // Never the password: the server's error line names none.
        socket.destroy(new RespConnectionError(`redis refused the batch connection's handshake: ${reply.message}`));
        return;
      }
      left -= 1;
      if (left === 0) ready();
    };
    for (let i = 0; i < commands.length; i++) this.inFlight.push(handler);
    socket.write(commands.join(''));
  }

  private onReply(reply: RespReply): void {
    const handler = this.inFlight[this.inFlightHead];
    if (handler === undefined) {
      // A reply nobody asked for: the stream is out of step; start over on a new connection.
      this.socket?.destroy(new Error('redis sent a reply no command was waiting for'));
      return;
    }
    this.inFlight[this.inFlightHead] = noop;
    this.inFlightHead += 1;
    if (this.inFlightHead === this.inFlight.length) {
      this.inFlight = [];
      this.inFlightHead = 0;
    } else if (this.inFlightHead >= 1024) {
      this.inFlight = this.inFlight.slice(this.inFlightHead);
      this.inFlightHead = 0;
    }
    handler(reply);
  }

  private failAll(error: RespConnectionError): void {
    const inFlight = this.inFlight.slice(this.inFlightHead);
    this.inFlight = [];
    this.inFlightHead = 0;
    const waiting = this.waiting;
    this.waiting = [];
    for (const handler of inFlight) handler(error);
    for (const batch of waiting) {
      batch.written(false);
      for (const handler of batch.handlers) handler(error);
    }
  }

  private scheduleReconnect(): void {
    if (this.state === 'closed' || this.retryTimer !== null) return;
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, this.options.retryMaxMs ?? 2_000);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.open();
    }, delay);
    this.retryTimer.unref();
  }
}

function noop(): void {
  // nothing
}
