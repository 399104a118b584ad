import type { OnApplicationShutdown } from '@nestjs/common';
import type { ProviderRegistry } from '../providers';

/** Closes the provider adapters' keep-alive pools once the HTTP server has stopped. */
export class SearchLifecycle implements OnApplicationShutdown {
  constructor(private readonly providers: ProviderRegistry) {}

  async onApplicationShutdown(): Promise<void> {
    await this.providers.close();
  }
}
