/**
 * Where the client reports its requests (`debug`), retries (`warn`) and failures (`error`);
 * `console` fits, and so do most logging libraries. Every method is optional.
 */
export interface Logger {
  debug?(message: string, details?: Record<string, unknown>): void;
  info?(message: string, details?: Record<string, unknown>): void;
  warn?(message: string, details?: Record<string, unknown>): void;
  error?(message: string, details?: Record<string, unknown>): void;
}

const MASK = '***';
/** Headers whose values are credentials. */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key']);
/** Query parameters and body fields whose values are credentials. */
const SECRET_FIELDS = ['api_key', 'secret_key'];

/** The URL with the credential query parameters masked. */
export function maskUrl(url: string): string {
  const parsed = new URL(url);
  let masked = false;
  for (const name of SECRET_FIELDS) {
    if (parsed.searchParams.has(name)) {
      parsed.searchParams.set(name, MASK);
      masked = true;
    }
  }
  return masked ? parsed.href : url;
}

/** The headers as a plain object, credentials masked. */
export function maskHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    out[name] = SECRET_HEADERS.has(name.toLowerCase()) ? MASK : value;
  });
  return out;
}

const JSON_SECRET = new RegExp(`("(?:${SECRET_FIELDS.join('|')})"\\s*:\\s*)"(?:[^"\\\\]|\\\\.)*"`, 'g');
const FORM_SECRET = new RegExp(`(^|[&?])(${SECRET_FIELDS.join('|')})=[^&#\\s]*`, 'g');

/**
 * A request body (JSON or url-encoded form), or any text that may quote one or a URL (an error
 * message), with the credential fields masked, cut to `max` characters.
 */
export function maskBody(text: string, max = 2000): string {
  const masked = text.replace(JSON_SECRET, `$1"${MASK}"`).replace(FORM_SECRET, `$1$2=${MASK}`);
  return masked.length > max ? `${masked.slice(0, max)}… (${masked.length} characters)` : masked;
}
