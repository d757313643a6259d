export interface MockDocument {
  file: string;
  groups: string[];
  renamed: { group: string; section: string; from: string; to: string }[];
  adapted: { operation: string; mediaType: string; field: string }[];
}
export interface StartMocksOptions {
  host?: string;
  ports?: Record<string, number>;
  basePort?: number;
  log?: ((line: string) => void) | null;
  verbose?: boolean;
  errors?: boolean;
  startTimeoutMs?: number;
  /** Where the role documents are written (default packages/mock/dist). */
  outDir?: string;
}
export interface RunningMocks {
  urls: Record<string, string>;
  documents: Record<string, MockDocument>;
  stop(): Promise<void>;
}
export const DEFAULT_PORTS: Readonly<Record<string, number>>;
export const packageDir: string;
export const mockDistDir: string;
export function specsDistDir(): string;
export interface ServerEntry {
  hostRole: string;
  region: string;
  url: string;
}
export interface ApiEntry {
  name: string;
  title: string;
  hostRole: string;
  operations: string[];
  servers: ServerEntry[];
  /** operationId → servers, for operations that declare their own. */
  operationServers?: Record<string, ServerEntry[]>;
}
export function loadApis(distDir?: string): ApiEntry[];
export function prepareDocuments(options?: { distDir?: string; outDir?: string }): Record<string, MockDocument>;
export function freePort(host?: string): Promise<number>;
export function startMocks(options?: StartMocksOptions): Promise<RunningMocks>;
export function mergeBundles(
  parts: { name: string; doc: object }[],
  options: { role: string },
): { doc: Record<string, unknown>; renamed: MockDocument['renamed'] };
export function splitByHostRole(
  api: Pick<ApiEntry, 'name' | 'hostRole' | 'operationServers'>,
  doc: object,
): Map<string, Record<string, unknown>>;
export function checkMerged<T extends object>(doc: T): T;
export function adaptForPrism(doc: object): MockDocument['adapted'];
