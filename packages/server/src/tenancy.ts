// Organizations → projects (numeric app_id, API key, secret key) → experiment deployments
// (deployment keys), kept in `<data dir>/tenancy.json`. The file, not the DuckDB database,
// holds them so that the admin command can change them while the server runs (DuckDB lets
// one process open its file); the server reloads the file when it changes.
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync, renameSync, unwatchFile, watchFile, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

export interface Deployment {
  name: string;
  key: string;
  app_id: number;
}

export interface FeedbackSource {
  source_id: string;
  /** Only webhook sources accept ingestion (403 otherwise). */
  type: 'webhook' | 'integration';
}

/** An event stream of the project to a webhook (`sync_id` unique across projects). */
export interface StreamDestination {
  sync_id: string;
  url: string;
  /** Only events of these types are streamed; every event when absent. */
  event_types?: string[];
  /** Events accepted from this moment on (ms) are streamed. */
  created_at: number;
}

export interface Project {
  app_id: number;
  name: string;
  org_id: number;
  api_key: string;
  secret_key: string;
  deployments: Deployment[];
  feedback_sources: FeedbackSource[];
  /** IANA time zone of the project's reporting buckets; UTC when absent. */
  time_zone?: string;
  /** Whether the project may use the taxonomy API (the platform's Enterprise plan). */
  taxonomy?: boolean;
  stream_destinations?: StreamDestination[];
}

/** Whether a name is an IANA time zone this runtime knows. */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

export interface Organization {
  id: number;
  name: string;
}

interface TenancyFile {
  organizations: Organization[];
  projects: Project[];
}

const digest = (value: string) => hash('sha256', value, 'hex');

/** Constant-time equality of two secrets (compared through fixed-length digests). */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(hash('sha256', a, 'buffer'), hash('sha256', b, 'buffer'));
}

const newKey = () => randomBytes(16).toString('hex');

export class Tenancy {
  private data: TenancyFile = { organizations: [], projects: [] };
  private byApiKeyDigest = new Map<string, Project>();
  private byDeploymentDigest = new Map<string, Deployment>();
  readonly file: string;

  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    this.file = join(dataDir, 'tenancy.json');
    this.reload();
  }

  /** Reloads the file whenever another process (the admin command) rewrites it. */
  watch(): () => void {
    const listener = () => this.reload();
    watchFile(this.file, { interval: 500 }, listener);
    return () => unwatchFile(this.file, listener);
  }

  reload(): void {
    if (existsSync(this.file)) this.data = JSON.parse(readFileSync(this.file, 'utf8')) as TenancyFile;
    this.byApiKeyDigest = new Map(this.data.projects.map((p) => [digest(p.api_key), p]));
    this.byDeploymentDigest = new Map(this.data.projects.flatMap((p) => p.deployments.map((d) => [digest(d.key), d] as const)));
  }

  private save(): void {
    const temporary = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(this.data, null, 2));
    renameSync(temporary, this.file);
    this.reload();
  }

  get organizations(): readonly Organization[] {
    return this.data.organizations;
  }

  get projects(): readonly Project[] {
    return this.data.projects;
  }

  isEmpty(): boolean {
    return this.data.organizations.length === 0;
  }

  /** The project of an API key; the lookup goes by digest, the final comparison is constant-time. */
  projectByApiKey(apiKey: string): Project | undefined {
    const project = this.byApiKeyDigest.get(digest(apiKey));
    return project && sameSecret(project.api_key, apiKey) ? project : undefined;
  }

  projectByCredentials(apiKey: string, secretKey: string): Project | undefined {
    const project = this.projectByApiKey(apiKey);
    return project && sameSecret(project.secret_key, secretKey) ? project : undefined;
  }

  deploymentByKey(key: string): Deployment | undefined {
    const deployment = this.byDeploymentDigest.get(digest(key));
    return deployment && sameSecret(deployment.key, key) ? deployment : undefined;
  }

  projectOf(appId: number): Project | undefined {
    return this.data.projects.find((p) => p.app_id === appId);
  }

  createOrganization(name: string): Organization {
    this.reload();
    const organization = { id: Math.max(0, ...this.data.organizations.map((o) => o.id)) + 1, name };
    this.data.organizations.push(organization);
    this.save();
    return organization;
  }

  createProject(orgId: number, name: string): Project {
    this.reload();
    if (!this.data.organizations.some((o) => o.id === orgId)) throw new Error(`no organization ${orgId}`);
    const project: Project = {
      app_id: Math.max(100000, ...this.data.projects.map((p) => p.app_id)) + 1,
      name,
      org_id: orgId,
      api_key: newKey(),
      secret_key: newKey(),
      deployments: [],
      feedback_sources: [],
    };
    this.data.projects.push(project);
    this.save();
    return project;
  }

  createDeployment(appId: number, name: string): Deployment {
    this.reload();
    const project = this.projectToChange(appId);
    const deployment = { name, key: `server-${newKey()}`, app_id: appId };
    project.deployments.push(deployment);
    this.save();
    return deployment;
  }

  setTimeZone(appId: number, timeZone: string): Project {
    if (!isTimeZone(timeZone)) throw new Error(`${timeZone} is not an IANA time zone (for example Europe/Berlin)`);
    this.reload();
    const project = this.projectToChange(appId);
    project.time_zone = timeZone;
    this.save();
    return project;
  }

  /** Grants (or withdraws) the taxonomy entitlement. */
  grantTaxonomy(appId: number, granted = true): Project {
    this.reload();
    const project = this.projectToChange(appId);
    project.taxonomy = granted;
    this.save();
    return project;
  }

  addStreamDestination(appId: number, url: string, eventTypes: string[] | undefined, createdAt: number): StreamDestination {
    const parsed = URL.canParse(url) ? new URL(url) : undefined;
    if (parsed?.protocol !== 'http:' && parsed?.protocol !== 'https:') throw new Error(`${url} is not an http(s) URL`);
    this.reload();
    const project = this.projectToChange(appId);
    const taken = this.data.projects.flatMap((p) => p.stream_destinations ?? []).map((d) => Number(d.sync_id));
    const destination: StreamDestination = { sync_id: String(Math.max(10000, ...taken) + 1), url, ...(eventTypes ? { event_types: eventTypes } : {}), created_at: createdAt };
    project.stream_destinations = [...(project.stream_destinations ?? []), destination];
    this.save();
    return destination;
  }

  removeStreamDestination(syncId: string): StreamDestination {
    this.reload();
    const project = this.data.projects.find((p) => p.stream_destinations?.some((d) => d.sync_id === syncId));
    if (!project) throw new Error(`no stream destination ${syncId}`);
    const removed = project.stream_destinations!.find((d) => d.sync_id === syncId)!;
    project.stream_destinations = project.stream_destinations!.filter((d) => d !== removed);
    this.save();
    return removed;
  }

  private projectToChange(appId: number): Project {
    const project = this.data.projects.find((p) => p.app_id === appId);
    if (!project) throw new Error(`no project with app_id ${appId}`);
    return project;
  }

  createFeedbackSource(appId: number, sourceId: string, type: FeedbackSource['type']): FeedbackSource {
    this.reload();
    const project = this.projectToChange(appId);
    const source = { source_id: sourceId, type };
    project.feedback_sources = [...project.feedback_sources.filter((s) => s.source_id !== sourceId), source];
    this.save();
    return source;
  }
}
