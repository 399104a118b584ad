import { createHash } from 'node:crypto';
import type { RedisTarget } from '@svc/redis-client';
import { batchTransport, SingleNodeTransport } from './batch-transport';
import type { BatchTransport } from './batch-transport';
import { encodeCommand, encodeParts, RespConnection, RespReplyError } from './resp-connection';
import type { RespArg, RespConnectionError, RespHandler, RespReply } from './resp-connection';

type Arg = string | number;
export type Reply = [Error | null, unknown];

/**
 * A command concurrent pipelines share. In one flush, the members every pipeline gives for
 * the same command, keys and fixed arguments go out as ONE call. The gateway's per-search
 * commands on keys shared by every account (a provider's leases, the settlement dirty set)
 * are of this kind, and so are the money scripts of one account (its admissions, its
 * settlements): under load each costs one command per flush instead of one per search.
 *
 * The call is `command ...keys ...fixed ...memberArgs` for a command with fixed keys, or,
 * with `dynamicKeys`, `command numkeys ...keys ...memberKeys ...fixed ...memberArgs` (a
 * script defined without numberOfKeys), members in the order the pipelines gave them.
 */
export interface MergedCommand {
  /** The command (or script defined with defineCommand) sent once per group per flush. */
  readonly command: string;
  /**
   * 'head': before every pipeline's own commands (a lease released in this flush is free
   * for a lease taken in the same flush); 'tail': after them, in `order` (a dirty mark
   * after the settlement that appended the record it points at).
   */
  readonly stage: 'head' | 'tail';
  /** Among the merged commands of one stage, lower first. */
  readonly order: number;
  /** Members carry keys of their own (a script over one account's keys and each search's). */
  readonly dynamicKeys: boolean;
  /** A member given twice in one flush is sent once (single-argument members whose reply no member reads). */
  readonly unique: boolean;
  /** One member's value out of the shared reply (`index`: the member's place in the call); an Error fails that member alone. */
  readonly pick: (reply: unknown, index: number) => unknown;
}

const nothing = (): null => null;

/** Set and sorted-set members removed or added together; no member reads the count. */
export const MERGED_ZREM: MergedCommand = { command: 'zrem', stage: 'head', order: 0, dynamicKeys: false, unique: true, pick: nothing };
export const MERGED_SADD: MergedCommand = { command: 'sadd', stage: 'tail', order: 9, dynamicKeys: false, unique: true, pick: nothing };

/** The values of a pipeline's replies, in order; throws the first command error. */
export function replyValues(results: readonly Reply[]): unknown[] {
  return results.map(([error, value]) => {
    if (error !== null) throw error;
    return value;
  });
}

/**
 * A reply with one element per member, in order (the money scripts, the provider leases);
 * an element `{'err', message}` is that member's own failure.
 */
export function pickElement(reply: unknown, index: number): unknown {
  const element = Array.isArray(reply) ? (reply as unknown[])[index] : undefined;
  if (element === undefined) return new Error('no reply for a merged command member');
  if (Array.isArray(element) && element[0] === 'err') return new Error(String(element[1]));
  return element;
}

/**
 * One call of a script defined with a fixed number of keys, its KEYS and ARGV apart (what the
 * money scripts' argument encoders return; `keys.length` is the script's number of keys).
 */
export interface ScriptCall {
  readonly kind: 'script';
  readonly name: string;
  readonly keys: readonly string[];
  readonly args: readonly Arg[];
}

/** One member of a MergedCommand (see BatchPipeline.merge), as the money scripts' encoders return it. */
export interface MergedCall {
  readonly kind: 'merged';
  readonly merged: MergedCommand;
  readonly keys: readonly string[];
  readonly fixed: readonly Arg[];
  readonly memberKeys: readonly string[];
  readonly memberArgs: readonly Arg[];
}

/** Nothing: the member keys of a merged call whose members carry none. */
export const NO_MEMBER_KEYS: readonly string[] = [];

type Item =
  /** A plain command (a builtin, or a script called by name with its key count first); only its arguments may be bytes. */
  | { readonly kind: 'plain'; readonly name: string; readonly args: readonly RespArg[] }
  | ScriptCall
  | MergedCall;

interface Pending {
  readonly items: readonly Item[];
  resolve: (replies: Reply[]) => void;
  reject: (error: Error) => void;
  /** Told once the batch holding these commands is in the kernel's socket buffer (true), or could not be written now (false). */
  readonly written?: (onSocket: boolean) => void;
}

/** A pipeline sent without waiting for Redis: when it is on the socket, and Redis's answer. */
export interface SentPipeline {
  /**
   * True once the commands are in the kernel's send buffer to Redis (a process killed now
   * still delivers them); false when they could not be written now (the connection is not
   * up): then only `replies` tells what happened.
   */
  readonly written: Promise<boolean>;
  readonly replies: Promise<Reply[]>;
}

/** Where one item's reply is: a command of its own, or a member of a merged call. */
type Locator = number | { readonly group: Group; readonly member: number };

interface Group {
  readonly merged: MergedCommand;
  readonly keys: readonly string[];
  readonly fixed: readonly Arg[];
  readonly memberKeys: string[];
  readonly memberArgs: Arg[];
  /** Members so far. */
  count: number;
  /** First argument -> member index, for unique commands. */
  readonly seen: Map<Arg, number> | null;
  /** The group's command's position in the flush (its reply's index). */
  index: number;
}

/**
 * What this process's batches did since it started: pipelines whose answer their caller
 * awaited (exec), pipelines sent without waiting (send), and writes to Redis. Plain
 * counters; `npm run bench` reads them to count the round trips a search waits for.
 */
export const redisBatchCounters = { awaited: 0, sent: 0, writes: 0 };

/** A Lua script the batch sends by name (defineScript): by SHA, or whole on first use per connection. */
interface ScriptDefinition {
  readonly lua: string;
  readonly sha: string;
  /** Null: the caller gives the key count as the first argument. */
  readonly numberOfKeys: number | null;
}

/** One command of a flush: its name, its arguments as the arrays they already are in, the key that routes it. */
interface OutCommand {
  readonly name: string;
  readonly parts: readonly (readonly RespArg[])[];
  /** The first key (every key of one command shares its hash slot); null for a command without keys. */
  readonly key: string | null;
}

/** How often one command follows MOVED, ASK or TRYAGAIN before its caller gets the error. */
const MAX_REDIRECTIONS = 5;
/** TRYAGAIN (a multi-key command while its slot is being migrated): asked again after this, times the attempt (20, 40, ... ms). */
const TRYAGAIN_DELAY_MS = 20;

/**
 * Pipelines of concurrent searches, sent to Redis together. Every pipeline exec'd while the
 * event loop is busy with other I/O callbacks joins one batch, written as one payload when
 * the loop reaches its check phase (setImmediate). Under load that turns dozens of small
 * writes and reads into one each, on the gateway and on Redis; merged commands
 * (MergedCommand) turn each search's commands on shared keys into one command per flush.
 * Order within one pipeline is kept (merged 'head' commands go first and 'tail' ones last,
 * as a whole); a batch is not a transaction (neither is a pipeline), so every script stays
 * atomic on its own.
 *
 * The batch goes out on a connection of its own (RespConnection, to the same Redis as the
 * ioredis client given, with its options and the scripts defined on it), encoded here with
 * one handler per command: ioredis's per-command objects, promises and argument copies cost
 * the gateway about two and a half times the CPU per flush (docs/decisions/0007-batch-connection.md).
 *
 * `send()` does not wait for Redis: its `written` resolves once the batch is in the
 * kernel's socket buffer, which the settle path waits for before it replies (so the
 * settlement leaves the process before the answer does, and a search makes a single
 * awaited round trip).
 */
export class RedisBatch {
  private pending: Pending[] = [];
  private scheduled: NodeJS.Immediate | null = null;
  private readonly transport: BatchTransport;
  private readonly scripts = new Map<string, ScriptDefinition>();

  /**
   * `target`: the Redis (or Redis Cluster) of REDIS_URL and REDIS_CLUSTER, whose connection
   * failures go to `onConnectionError`; or a connection or transport of the caller's (tests).
   */
  constructor(target: RedisTarget | RespConnection | BatchTransport, onConnectionError?: (error: Error) => void) {
    if (target instanceof RespConnection) this.transport = new SingleNodeTransport(target);
    else if ('route' in target) this.transport = target;
    else this.transport = batchTransport(target, { clientName: 'svc-gateway-batch', ...(onConnectionError === undefined ? {} : { onError: onConnectionError }) });
  }

  /** The batch connections' state ('ready' when batches are written at once to every node). */
  get status(): RespConnection['status'] {
    return this.transport.status;
  }

  /** Closes the batch connections (shutdown, after the last settlement was answered). */
  close(): void {
    this.transport.close();
  }

  /**
   * A Lua script callable by `name` in pipelines (as a plain command or a MergedCommand).
   * `numberOfKeys` omitted: the caller gives the key count as the first argument.
   */
  defineScript(name: string, definition: { lua: string; numberOfKeys?: number }): void {
    this.scripts.set(name, { lua: definition.lua, sha: createHash('sha1').update(definition.lua).digest('hex'), numberOfKeys: definition.numberOfKeys ?? null });
  }

  pipeline(): BatchPipeline {
    return new BatchPipeline(this);
  }

  /** Queues one pipeline's items; resolves with one [error, reply] per item. */
  submit(items: readonly Item[]): Promise<Reply[]> {
    redisBatchCounters.awaited += 1;
    return new Promise<Reply[]>((resolve, reject) => {
      this.pending.push({ items, resolve, reject });
      this.scheduled ??= setImmediate(() => this.flush());
    });
  }

  /** Queues one pipeline's items; see SentPipeline. */
  send(items: readonly Item[]): SentPipeline {
    redisBatchCounters.sent += 1;
    let written: (onSocket: boolean) => void = () => undefined;
    const writtenPromise = new Promise<boolean>((resolve) => {
      written = resolve;
    });
    const replies = new Promise<Reply[]>((resolve, reject) => {
      this.pending.push({ items, resolve, reject, written });
      this.scheduled ??= setImmediate(() => this.flush());
    });
    // A refusal before the write also settles `written`.
    replies.catch(() => written(false));
    return { written: writtenPromise, replies };
  }

  /** Writes everything queued now, as one payload. */
  flush(): void {
    if (this.scheduled !== null) {
      clearImmediate(this.scheduled);
      this.scheduled = null;
    }
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    const sent: Pending[] = [];
    const locators: Locator[][] = [];
    const head: Group[] = [];
    const tail: Group[] = [];
    const groups = new Map<string, Group>();
    for (const entry of batch) {
      const located: Locator[] = [];
      for (const item of entry.items) {
        if (item.kind !== 'merged') {
          located.push(-1);
          continue;
        }
        const id = groupId(item);
        let group = groups.get(id);
        if (group === undefined) {
          group = { merged: item.merged, keys: item.keys, fixed: item.fixed, memberKeys: [], memberArgs: [], count: 0, seen: item.merged.unique ? new Map() : null, index: -1 };
          groups.set(id, group);
          (item.merged.stage === 'head' ? head : tail).push(group);
        }
        const first = item.memberArgs[0];
        let member = first === undefined ? undefined : group.seen?.get(first);
        if (member === undefined) {
          member = group.count++;
          for (const key of item.memberKeys) group.memberKeys.push(key);
          for (const arg of item.memberArgs) group.memberArgs.push(arg);
          if (first !== undefined) group.seen?.set(first, member);
        }
        located.push({ group, member });
      }
      sent.push(entry);
      locators.push(located);
    }
    if (sent.length === 0) return;
    // Each command's arguments as the arrays they already are in, encoded in order.
    const commands: OutCommand[] = [];
    const emit = (group: Group): void => {
      const { merged, keys, memberKeys, fixed, memberArgs } = group;
      const parts = merged.dynamicKeys ? [[keys.length + memberKeys.length], keys, memberKeys, fixed, memberArgs] : [keys, memberKeys, fixed, memberArgs];
      group.index = commands.length;
      commands.push({ name: merged.command, parts, key: keys[0] ?? memberKeys[0] ?? null });
    };
    head.sort(byOrder).forEach(emit);
    sent.forEach((entry, e) => {
      const located = locators[e] ?? [];
      entry.items.forEach((item, i) => {
        if (item.kind === 'merged') return;
        located[i] = commands.length;
        if (item.kind === 'script') {
          commands.push({ name: item.name, parts: [item.keys, item.args], key: item.keys[0] ?? null });
          return;
        }
        // A plain command's first key: a builtin's first argument; a script's after its key count when it gives one.
        const first = this.scripts.get(item.name)?.numberOfKeys === null ? item.args[1] : item.args[0];
        commands.push({ name: item.name, parts: [item.args], key: first === undefined ? null : String(first) });
      });
    });
    tail.sort(byOrder).forEach(emit);
    redisBatchCounters.writes += 1;
    const results: Reply[] = new Array<Reply>(commands.length);
    let unanswered = commands.length;
    const answered = (): void => {
      sent.forEach((entry, e) => entry.resolve((locators[e] ?? []).map((at) => replyAt(results, at))));
    };
    // One payload per node (a single Redis: one in all), in the flush's order; sent together.
    const outgoing = new Map<RespConnection, { payload: string; handlers: RespHandler[] }>();
    commands.forEach((command, c) => {
      const store = (reply: RespReply | RespConnectionError): void => {
        results[c] = reply instanceof Error ? [reply, null] : [null, reply];
        unanswered -= 1;
        if (unanswered === 0) answered();
      };
      const connection = this.transport.route(command.key);
      let out = outgoing.get(connection);
      if (out === undefined) {
        out = { payload: '', handlers: [] };
        outgoing.set(connection, out);
      }
      out.payload += this.encode(connection, command);
      out.handlers.push(this.handler(connection, command, store, 0));
    });
    const writtenTo = sent.filter((entry) => entry.written !== undefined);
    let writesLeft = outgoing.size;
    let allOnSocket = true;
    for (const [connection, { payload, handlers }] of outgoing) {
      connection.send(payload, handlers, (onSocket) => {
        allOnSocket &&= onSocket;
        writesLeft -= 1;
        if (writesLeft === 0) for (const entry of writtenTo) entry.written?.(allOnSocket);
      });
    }
  }

  /** One command as RESP for this connection (a script by SHA once the connection has seen it whole). */
  private encode(connection: RespConnection, command: OutCommand): string {
    const script = this.scripts.get(command.name);
    return script === undefined ? encodeParts(command.name, command.parts) : encodeScript(connection, script, command.parts);
  }

  /**
   * A command's reply handler. Before the reply reaches `store` it follows what Redis (or a
   * Redis Cluster) asks: NOSCRIPT (SCRIPT FLUSH on the server) sends the script whole once
   * more; MOVED (the slot lives elsewhere now) sends it to that node and refreshes the slot
   * map; ASK (the slot is being migrated and the key is already there) sends ASKING and the
   * command to that node, once; TRYAGAIN (a multi-key command whose keys are split by a
   * migration in progress) sends it again after 20, 40, ... ms. Redis ran none of these commands, so
   * sending them again cannot apply anything twice.
   */
  private handler(connection: RespConnection, command: OutCommand, store: RespHandler, redirections: number): RespHandler {
    const script = this.scripts.get(command.name);
    return (reply) => {
      if (reply instanceof RespReplyError) {
        const message = reply.message;
        if (script !== undefined && message.startsWith('NOSCRIPT')) {
          connection.forgetScript(script.sha);
          connection.send(this.encode(connection, command), [this.handler(connection, command, store, redirections)]);
          return;
        }
        if (redirections < MAX_REDIRECTIONS && this.redirect(message, command, store, redirections)) return;
      }
      store(reply);
    };
  }

  /** Follows MOVED, ASK or TRYAGAIN; false when the reply is none of them (or the transport does not follow it). */
  private redirect(message: string, command: OutCommand, store: RespHandler, redirections: number): boolean {
    const [kind, slot, address] = message.split(' ');
    if (kind === 'MOVED' && address !== undefined) {
      const next = this.transport.moved(Number(slot), address);
      if (next === null) return false;
      next.send(this.encode(next, command), [this.handler(next, command, store, redirections + 1)]);
      return true;
    }
    if (kind === 'ASK' && address !== undefined) {
      const next = this.transport.asked(address);
      if (next === null) return false;
      // ASKING is answered +OK (an error would show again on the command itself).
      next.send(encodeCommand('ASKING', []) + this.encode(next, command), [noReply, this.handler(next, command, store, redirections + 1)]);
      return true;
    }
    if (kind === 'TRYAGAIN') {
      const timer = setTimeout(() => {
        const next = this.transport.route(command.key);
        next.send(this.encode(next, command), [this.handler(next, command, store, redirections + 1)]);
      }, TRYAGAIN_DELAY_MS * (redirections + 1));
      timer.unref();
      return true;
    }
    return false;
  }
}

/** EVALSHA, or EVAL with the whole script the first time on a connection (as ioredis does). */
function encodeScript(connection: RespConnection, script: ScriptDefinition, parts: readonly (readonly RespArg[])[]): string {
  const loaded = connection.isScriptLoaded(script.sha);
  if (!loaded) connection.markScriptLoaded(script.sha);
  const body = loaded ? script.sha : script.lua;
  return encodeParts(loaded ? 'evalsha' : 'eval', [script.numberOfKeys === null ? [body] : [body, script.numberOfKeys], ...parts]);
}

function noReply(): void {
  // ASKING's +OK
}

/** Stable: groups of one order keep the order they were first seen in. */
function byOrder(a: Group, b: Group): number {
  return a.merged.order - b.merged.order;
}

function groupId(item: Extract<Item, { kind: 'merged' }>): string {
  return `${item.merged.command}\u0000${item.keys.join('\u0000')}\u0001${item.fixed.join('\u0000')}`;
}

function replyAt(results: readonly Reply[], at: Locator): Reply {
  if (typeof at === 'number') return results[at] ?? [new Error('no reply for a pipelined command'), null];
  const shared = results[at.group.index];
  if (shared === undefined) return [new Error('no reply for a merged command'), null];
  const [error, value] = shared;
  if (error !== null) return [error, null];
  const own = at.group.merged.pick(value, at.member);
  return own instanceof Error ? [own, null] : [null, own];
}

/** One search's commands, in order; `exec` resolves when the batch they joined is answered. */
export class BatchPipeline {
  private readonly items: Item[] = [];

  constructor(private readonly batch: RedisBatch) {}

  get length(): number {
    return this.items.length;
  }

  add(name: string, ...args: RespArg[]): this {
    this.items.push({ kind: 'plain', name, args });
    return this;
  }

  /**
   * A member of a command merged with other pipelines' (see MergedCommand): the group is
   * `keys` and `fixed`; the member adds `memberKeys` (dynamicKeys commands only) and
   * `memberArgs`. Its reply is `merged.pick`'s.
   */
  merge(merged: MergedCommand, keys: readonly string[], fixed: readonly Arg[], memberArgs: readonly Arg[], memberKeys: readonly string[] = NO_MEMBER_KEYS): this {
    if (memberKeys.length > 0 && !merged.dynamicKeys) throw new Error(`${merged.command} takes no keys of its members`);
    this.items.push({ kind: 'merged', merged, keys, fixed, memberKeys, memberArgs });
    return this;
  }

  /** A call an encoder made: a script's KEYS and ARGV, or a member of a merged command (its reply as `merge`'s). */
  call(call: ScriptCall | MergedCall): this {
    if (call.kind === 'merged' && call.memberKeys.length > 0 && !call.merged.dynamicKeys) throw new Error(`${call.merged.command} takes no keys of its members`);
    this.items.push(call);
    return this;
  }

  exec(): Promise<Reply[]> {
    return this.batch.submit(this.items);
  }

  /** Sends without waiting for the answer (see SentPipeline). */
  send(): SentPipeline {
    return this.batch.send(this.items);
  }
}
