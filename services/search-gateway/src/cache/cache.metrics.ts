import { CATALOG } from '@svc/contracts';
import type { CacheStatus } from '@svc/contracts';
import { Counter, Gauge, HotCounter } from '@svc/metrics';
import type { Registry } from '@svc/metrics';

/**
 * The result cache's metrics: lookups by model and status (hit, miss, joined; `off` when a
 * search asked for none), the bytes of live entries this gateway stored, answers too large
 * to store, the cache Redis's failures by operation, and the hits answered from this
 * gateway's own copies with the bytes those copies hold. Labels are bounded (catalog models,
 * four statuses, four operations).
 */
export class CacheMetrics {
  private readonly lookups: HotCounter<'model' | 'status'>;
  private readonly tooLarge: Counter<string>;
  private readonly errors: Counter<'op'>;
  private readonly localHits: Counter<string>;
  private bytes: () => number = () => 0;
  private localBytes: () => number = () => 0;

  constructor(registry: Registry) {
    const registers = [registry];
    this.lookups = new HotCounter({ name: 'gateway_cache_lookups_total', help: 'Attempts by the result cache\'s part in them: hit (a stored answer), joined (the answer of an identical search in flight), miss (the provider was called), off (the search asked for no cache), by model', labelNames: ['model', 'status'], registers });
    for (const model of CATALOG) for (const status of ['hit', 'miss', 'joined', 'off'] as const) this.lookups.child(model.id, status);
    this.tooLarge = new Counter({ name: 'gateway_cache_oversized_total', help: 'Answers not stored because they were larger than CACHE_MAX_ENTRY_BYTES', registers });
    this.errors = new Counter({ name: 'gateway_cache_errors_total', help: 'Result cache Redis calls that failed (the search went on without the cache), by operation', labelNames: ['op'], registers });
    this.localHits = new Counter({ name: 'gateway_cache_local_hits_total', help: 'Hits this gateway answered from its own copy of an entry (CACHE_LOCAL_TTL_MS), without a Redis lookup; also counted in gateway_cache_lookups_total', registers });
    const localBytes = (): number => this.localBytes();
    new Gauge({
      name: 'gateway_cache_local_bytes',
      help: 'Bytes (keys and results) of the entry copies this gateway keeps in memory (at most CACHE_LOCAL_MAX_BYTES)',
      registers,
      collect() {
        this.set(localBytes());
      },
    });
    const bytes = (): number => this.bytes();
    new Gauge({
      name: 'gateway_cache_bytes_held',
      help: 'Bytes (keys and values) of the live result-cache entries this gateway stored; the sum over gateways bounds what the cache holds',
      registers,
      collect() {
        this.set(bytes());
      },
    });
  }

  counted(model: string, status: CacheStatus): void {
    this.lookups.child(model, status).inc();
  }

  oversized(): void {
    this.tooLarge.inc();
  }

  error(op: string): void {
    this.errors.inc({ op });
  }

  watchBytes(read: () => number): void {
    this.bytes = read;
  }

  localHit(): void {
    this.localHits.inc();
  }

  watchLocalBytes(read: () => number): void {
    this.localBytes = read;
  }
}
