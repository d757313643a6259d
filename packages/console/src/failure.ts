// What a failed request tells a person: the server's own words (`error` of the documented
// error body) and the status, or why no answer came.
import { AuthenticationError, ConnectionError, SvcError } from '@svc/client';

function serverSays(error: SvcError): string {
  const body = error.body as { error?: unknown } | undefined;
  return typeof body?.error === 'string' ? body.error : error.message;
}

export function describeFailure(error: unknown): string {
  if (error instanceof AuthenticationError) return `${serverSays(error)} (HTTP 401). Check the project's API key and secret key, and sign in again.`;
  if (error instanceof ConnectionError) return `The server did not answer (${error.message}). Is it running?`;
  if (error instanceof SvcError) return `${serverSays(error)} (HTTP ${error.status})`;
  return error instanceof Error ? error.message : String(error);
}
