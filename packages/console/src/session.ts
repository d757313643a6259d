// The project's keys live in this tab's session storage only: never in the URL or a cookie,
// gone when the tab closes or on sign-out. Every request goes through the typed client.
import { createAppClient, type AppClient } from '@svc/client';

export interface Keys {
  apiKey: string;
  secretKey: string;
}

export type Client = AppClient<true>;

const STORAGE_KEY = 'svc-console-keys';

export function storedKeys(): Keys | undefined {
  try {
    const keys = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as Partial<Keys> | null;
    return typeof keys?.apiKey === 'string' && typeof keys.secretKey === 'string' ? { apiKey: keys.apiKey, secretKey: keys.secretKey } : undefined;
  } catch {
    return undefined;
  }
}

export function storeKeys(keys: Keys): void {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(keys));
}

export function forgetKeys(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}

/**
 * A client of this server's app host (the console is served there), throwing on errors. A
 * person is waiting: a refusal (a cost limit's 429 too) is shown at once, not retried.
 */
export function appClient(keys: Keys): Client {
  return createAppClient({ ...keys, baseUrl: location.origin, throwOnError: true, maxRetries: 0 });
}
