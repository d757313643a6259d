// The typed client of @svc/client pointed at the mock of a host role, and a check of each
// answer against the spec that also records which operations a test file has driven.
import { createAppClient, type AppClient } from '@svc/client';
import { expect, inject } from 'vitest';
import { API_KEY } from './mock-requests.js';
import { expectSpecResponse } from './operation-responses.js';

export function mockAppClient(options: { headers?: Record<string, string>; fetch?: typeof fetch } = {}): AppClient {
  const baseUrl = inject('mockUrls')['app'];
  if (!baseUrl) throw new Error('no mock for host role app');
  return createAppClient({ apiKey: API_KEY, secretKey: 'secret-key-0123', baseUrl, ...options });
}

/** Records the operations whose answers were checked. */
export function operationLog() {
  const driven = new Set<string>();
  return {
    driven,
    /** Asserts the answer is documented, valid and free of Prism violations; returns its data. */
    check<T>(method: string, result: { data?: T; error?: unknown; response: Response }): T {
      expect(result.response.headers.get('sl-violations'), 'Prism reported violations of the request').toBeNull();
      const ref = expectSpecResponse(method, result.response, result.data ?? result.error);
      driven.add(ref.op.operationId);
      expect(result.data, JSON.stringify(result.error)).toBeDefined();
      return result.data as T;
    },
  };
}
