import type { ModelStatus, Provider } from '@svc/contracts';
import type { CatalogHealth } from '../catalog/catalog.service';
import { modelStatuses, statusBody, statusInputs } from './health.status';
import type { ProviderHealth } from './provider-health';

/**
 * Provider health as the catalog shows it: every model's status for GET /v1/models (from this
 * gateway's snapshot and the figures last read, never awaiting Redis) and the body of
 * GET /v1/status (figures read again when older than a few seconds; when Redis does not
 * answer, the last ones read).
 */
export function catalogHealth(health: ProviderHealth, configured: Readonly<Record<Provider, boolean>>, now: () => number = Date.now): CatalogHealth {
  return {
    statuses: (): Record<string, ModelStatus> => modelStatuses(statusInputs(health, configured, health.latestFigures(), now())),
    statusJson: async (requestId: string): Promise<string> => {
      const figures = await health.loadFigures().catch(() => health.latestFigures());
      const body = JSON.stringify(statusBody(statusInputs(health, configured, figures, now())));
      return `${body.slice(0, -1)},"request_id":${JSON.stringify(requestId)}}`;
    },
  };
}
