/** Where an operation accepts the project's API key (`x-svc-credentials` of the specs). */
export interface CredentialLocation {
  in: 'body' | 'form' | 'query' | 'header';
  name: string;
}

/** One security scheme of a security requirement, as declared in the bundle. */
export type SecuritySchemeRule =
  | { name: string; type: 'http'; scheme: string }
  | { name: string; type: 'apiKey' | 'oauth2' | 'openIdConnect'; in?: 'query' | 'header' | 'cookie'; param?: string };

/** How an array parameter or form field is serialized (OpenAPI `style` and `explode`). */
export interface ArrayStyle {
  style: string;
  explode: boolean;
}

/** How a listing is paged (`x-svc-pagination` of the specs; see specs/shared/conventions.md). */
export interface PaginationRule {
  /** `token`: follow `next`; `offset`: count the items read; `none`: one answer holds every item. */
  style: 'token' | 'offset' | 'none';
  /** Query parameter carrying the page token or the offset. */
  parameter?: string;
  /** Answer member holding the next page's token (`null` on the last page). */
  next?: string;
  /** Query parameter of the page size. */
  limit?: string;
  /** Answer member holding the items; absent when the answer is the array itself. */
  items?: string;
}

/** How one operation is serialized and authenticated, read from the bundles by scripts/generate.mjs. */
export interface OperationRule {
  operationId: string;
  /** Interface group (bundle name) the operation belongs to. */
  group: string;
  /** Where the API key may go, in order of preference. */
  credentials: CredentialLocation[];
  /** Alternatives (OR) of requirements (AND of schemes); `[]` inside means "anonymous allowed". */
  security: SecuritySchemeRule[][];
  /** The request body may be JSON. */
  jsonBody: boolean;
  /**
   * The request body may be form-encoded; `jsonFields` are form fields whose value is JSON text,
   * `arrays` the array fields with a declared style (`explode: false` joins the items into one value).
   */
  form: { mediaType: string; jsonFields: string[]; arrays: Record<string, ArrayStyle> } | null;
  query: {
    /** Query parameters whose value is JSON text (`content: application/json`). */
    json: string[];
    /** Array query parameters repeated once per item, each item JSON text (`x-svc-json-items`). */
    jsonItems: string[];
    /** Array query parameters and their serialization style. */
    arrays: Record<string, ArrayStyle>;
  };
  /** How the success body is read: `text` when every success media type is text/* (CSV). */
  parseAs: 'json' | 'text';
  /** The request may be sent again without harm: an idempotent method, or `x-svc-idempotent` (event uploads, deduplicated by `insert_id`). */
  retrySafe: boolean;
  /** How the operation's listing is paged; `null` when it lists nothing. */
  pagination: PaginationRule | null;
}
