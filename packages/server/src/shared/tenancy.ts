// Organizations → projects (numeric app_id, API key, secret keys) → experiment deployments
// (deployment keys), kept in `<data dir>/tenancy.json`, secret and deployment keys as hashes. The file, not the DuckDB database,
// holds them so that the admin command can change them while the server runs (DuckDB lets
// one process open its file); the server reloads the file when it changes.
import { newWebhookSecret } from '@svc/client';
import { hash, timingSafeEqual } from 'node:crypto';
import { mkdirSync, statSync, unwatchFile, watchFile } from 'node:fs';
import { join } from 'node:path';
import { hashSecret, newSecret, rotated, SecretVerifier, keyIdOf, type StoredSecret } from './stored-secrets.js';
import { readTenancyFile, writeAtomically } from './tenancy-file.js';

/** A server-side deployment: its key is a secret like the project's secret key. */
export interface Deployment {
  name: string;
  secrets: StoredSecret[];
  app_id: number;
}

/** A deployment as created or rotated: its key is shown this once. */
export interface IssuedDeployment extends Deployment {
  key: string;
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
  /**
   * The key deliveries are signed with (Standard Webhooks, `whsec_…`), shown once when made;
   * kept as it is (signing needs it), in the tenancy file only its user reads. Absent on
   * destinations made before deliveries were signed: theirs go unsigned until it is rotated.
   */
  signing_secret?: string;
}

export interface Project {
  app_id: number;
  name: string;
  org_id: number;
  api_key: string;
  secrets: StoredSecret[];
  deployments: Deployment[];
  feedback_sources: FeedbackSource[];
  /** IANA time zone of the project's reporting buckets; UTC when absent. */
  time_zone?: string;
  /** Whether the project may use the taxonomy API (the platform's Enterprise plan). */
  taxonomy?: boolean;
  stream_destinations?: StreamDestination[];
}

/** A project as created: its secret key is shown this once. */
export interface IssuedProject extends Project {
  secret_key: string;
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
const newDeploymentKey = () => `server-${newSecret()}`;

/** Constant-time equality of two secrets (compared through fixed-length digests). */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(hash('sha256', a, 'buffer'), hash('sha256', b, 'buffer'));
}

export class Tenancy {
  private data: TenancyFile = { organizations: [], projects: [] };
  private byApiKeyDigest = new Map<string, Project>();
  private byDeploymentKeyId = new Map<string, Deployment[]>();
  private readonly verifier = new SecretVerifier();
  /** The loaded file's inode and modification time: every save renames a new file over it. */
  private loaded = '';
  readonly file: string;

  /** `clock` (ms) decides when a rotated-out key stops working. */
  constructor(
    dataDir: string,
    private readonly clock: () => number = Date.now,
  ) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
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
    this.data = readTenancyFile(this.file, this.data, this.clock());
    this.loaded = this.fileVersion();
    this.byApiKeyDigest = new Map(this.data.projects.map((p) => [digest(p.api_key), p]));
    this.byDeploymentKeyId = new Map();
    for (const deployment of this.data.projects.flatMap((p) => p.deployments)) {
      for (const { key_id } of deployment.secrets) this.byDeploymentKeyId.set(key_id, [...(this.byDeploymentKeyId.get(key_id) ?? []), deployment]);
    }
  }

  private fileVersion(): string {
    const stat = statSync(this.file, { throwIfNoEntry: false });
    return stat ? `${stat.ino}:${stat.mtimeMs}` : '';
  }

  /**
   * Keys are checked against the file as it is now, not as the last poll of `watch` saw it:
   * a key rotated through another process (the admin command, a server sharing the
   * directory) works, or stops working, at once.
   */
  private reloadIfChanged(): void {
    if (this.fileVersion() !== this.loaded) this.reload();
  }

  private save(): void {
    writeAtomically(this.file, JSON.stringify(this.data, null, 2));
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

  async projectByCredentials(apiKey: string, secretKey: string): Promise<Project | undefined> {
    this.reloadIfChanged();
    const project = this.projectByApiKey(apiKey);
    return project && (await this.verifier.matches(secretKey, project.secrets, this.clock())) ? project : undefined;
  }

  async deploymentByKey(key: string): Promise<Deployment | undefined> {
    this.reloadIfChanged();
    for (const deployment of this.byDeploymentKeyId.get(keyIdOf(key)) ?? []) {
      if (await this.verifier.matches(key, deployment.secrets, this.clock())) return deployment;
    }
    return undefined;
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

  createProject(orgId: number, name: string): IssuedProject {
    this.reload();
    if (!this.data.organizations.some((o) => o.id === orgId)) throw new Error(`no organization ${orgId}`);
    const secretKey = newSecret();
    const project: Project = {
      app_id: Math.max(100000, ...this.data.projects.map((p) => p.app_id)) + 1,
      name,
      org_id: orgId,
      api_key: newSecret(),
      secrets: [hashSecret(secretKey, this.clock())],
      deployments: [],
      feedback_sources: [],
    };
    this.data.projects.push(project);
    this.save();
    return { ...this.projectOf(project.app_id)!, secret_key: secretKey };
  }

  createDeployment(appId: number, name: string): IssuedDeployment {
    this.reload();
    const project = this.projectToChange(appId);
    if (project.deployments.some((d) => d.name === name)) throw new Error(`app_id ${appId} has a deployment ${name} already`);
    const key = newDeploymentKey();
    project.deployments.push({ name, secrets: [hashSecret(key, this.clock())], app_id: appId });
    this.save();
    return { ...this.deploymentOf(appId, name), key };
  }

  /** A new secret key; the ones before keep working for `graceMs`. */
  rotateSecret(appId: number, graceMs: number): IssuedProject {
    this.reload();
    const project = this.projectToChange(appId);
    const secretKey = newSecret();
    project.secrets = rotated(project.secrets, hashSecret(secretKey, this.clock()), this.clock(), graceMs);
    this.save();
    return { ...this.projectOf(appId)!, secret_key: secretKey };
  }

  /** A new key for a deployment; the ones before keep working for `graceMs`. */
  rotateDeploymentKey(appId: number, name: string, graceMs: number): IssuedDeployment {
    this.reload();
    const deployment = this.deploymentOf(appId, name);
    const key = newDeploymentKey();
    deployment.secrets = rotated(deployment.secrets, hashSecret(key, this.clock()), this.clock(), graceMs);
    this.save();
    return { ...this.deploymentOf(appId, name), key };
  }

  private deploymentOf(appId: number, name: string): Deployment {
    const deployment = this.projectToChange(appId).deployments.find((d) => d.name === name);
    if (!deployment) throw new Error(`app_id ${appId} has no deployment ${name}`);
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
    const destination: StreamDestination = { sync_id: String(Math.max(10000, ...taken) + 1), url, ...(eventTypes ? { event_types: eventTypes } : {}), created_at: createdAt, signing_secret: newWebhookSecret() };
    project.stream_destinations = [...(project.stream_destinations ?? []), destination];
    this.save();
    return destination;
  }

  /** The destination with a new signing secret (deliveries from now on are signed with it). */
  rotateStreamSecret(syncId: string): StreamDestination {
    this.reload();
    const destination = this.streamDestination(syncId).destination;
    destination.signing_secret = newWebhookSecret();
    this.save();
    return destination;
  }

  private streamDestination(syncId: string): { project: Project; destination: StreamDestination } {
    const project = this.data.projects.find((p) => p.stream_destinations?.some((d) => d.sync_id === syncId));
    if (!project) throw new Error(`no stream destination ${syncId}`);
    return { project, destination: project.stream_destinations!.find((d) => d.sync_id === syncId)! };
  }

  removeStreamDestination(syncId: string): StreamDestination {
    this.reload();
    const { project, destination: removed } = this.streamDestination(syncId);
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
