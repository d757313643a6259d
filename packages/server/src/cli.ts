// `svc-server [start] [options]` runs the server; `svc-server admin <command>` manages
// organizations, projects, deployments and feedback sources in a data directory;
// `svc-server import` sends export archives' events to a server.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { compileFlags, type AuthoredFlag } from '@svc/evaluation';
import { flagFile } from './experiment/handlers.js';
import { importCommand } from './export/import/command.js';
import { saveChart } from './reporting/charts.js';
import { DOCUMENTED_LIMITS, type LimitFigures } from './shared/reporting-limits.js';
import { parseArgs } from 'node:util';
import { defaultPort, hostRoles, startServer } from './server.js';
import { DEFAULT_INSERT_ID_WINDOW_MS } from './model/events.js';
import type { EventRules } from './model/events.js';
import { PRIVATE_MASK } from './shared/private-files.js';
import { bytesOfSize } from './shared/sizes.js';
import type { StoredSecret } from './shared/stored-secrets.js';
import { Tenancy, type IssuedDeployment, type IssuedProject, type Project } from './shared/tenancy.js';

const USAGE = `Usage:
  svc-server [start] [--region standard|eu] [--data-dir DIR] [--shared-dir DIR] [--host HOST] [--port N] [--port-per-role] [--cors-origin ORIGIN ...]
                     [--postgres-url URL] [--engine duckdb|clickhouse --clickhouse-url URL... [--clickhouse-shard URL[,URL...]... --clickhouse-cluster NAME] [--clickhouse-database NAME]] [--engine-nice idle|N]
                     [--materialize-property NAME ...] [--reporting-cost-limits PER_5_MIN,PER_HOUR] [--insert-id-window-hours H] [--duckdb-memory-limit SIZE] [--timeline-memory SIZE]
  svc-server admin create-org NAME [--data-dir DIR]
  svc-server admin create-project ORG_ID NAME [--data-dir DIR]
  svc-server admin create-deployment APP_ID NAME [--data-dir DIR]
  svc-server admin rotate-secret APP_ID [--grace-hours H] [--data-dir DIR]
  svc-server admin rotate-deployment-key APP_ID NAME [--grace-hours H] [--data-dir DIR]
                                              (prints a new key; the one before keeps working for H hours, default 24)
  svc-server admin create-feedback-source APP_ID SOURCE_ID [--type webhook|integration] [--data-dir DIR]
  svc-server admin set-flags APP_ID FLAGS.json [--data-dir DIR]   (authoring format of @svc/evaluation)
  svc-server admin set-time-zone APP_ID ZONE [--data-dir DIR]      (IANA name for reporting buckets; default UTC)
  svc-server admin save-chart APP_ID CHART.json [--data-dir DIR]    ({title, operation, query[, id]}: a stored reporting query)
  svc-server admin grant-taxonomy APP_ID [--data-dir DIR]           (the project may use the taxonomy API; 403 without)
  svc-server admin add-stream-destination APP_ID URL [--event-types A,B] [--data-dir DIR]
                                              (POST the project's events to the webhook URL from now on, signed as Standard
                                              Webhooks says; prints its sync_id and signing secret, shown once)
  svc-server admin rotate-stream-secret SYNC_ID [--data-dir DIR]   (a new signing secret, shown once)
  svc-server admin remove-stream-destination SYNC_ID [--data-dir DIR]
  svc-server admin list [--data-dir DIR]       (API keys; secret and deployment keys by key id: the server keeps only their hashes)
  svc-server admin mutations --clickhouse-url URL [--clickhouse-shard URL...] [--clickhouse-database NAME]
                                              (ClickHouse mutations not done yet: one that stays blocks its table, and what to do)
  svc-server admin replicas --clickhouse-url URL... [--clickhouse-shard URL[,URL...]...] [--clickhouse-database NAME]
                                              (each ClickHouse replica: answers, tables behind, delay; exit code 1 when one
                                              cannot be used now)
  svc-server import EXPORT.zip|FOLDER --url URL --api-key KEY [--state FILE] [--concurrency N] [--batch-size N]
                                              (the Export API's archives, every *.zip of a folder in name order, sent to the
                                              server at URL through POST /batch; --state, default SOURCE.import-state.json,
                                              records the hours done: a run again resumes, and insert_ids keep repeats out)
  svc-server import SOURCE_URL --start YYYYMMDDTHH --end YYYYMMDDTHH --url URL --api-key KEY [--part-hours N] [...]
                                              (straight from the Export API at SOURCE_URL, e.g. https://amplitude.com, with
                                              the source project's keys in SVC_SOURCE_API_KEY and SVC_SOURCE_SECRET_KEY:
                                              --part-hours hours a request, default 24; --state, default
                                              export-HOST-KEY-START-END.import-state.json here, KEY a fingerprint)

The standard and EU deployments are separate servers with separate data: run one with
--region standard (port 8000, data in .svc-data/standard) and one with --region eu
(port 8100, data in .svc-data/eu). --port-per-role binds each host role to its own port
(the region's port + 0, 1, 2, ... in the order of specs/dist/apis.json).
Pages of any origin may call ingestion and experiment evaluation; --cors-origin (repeatable,
e.g. https://dashboard.example.com) lets pages of that origin call the app and api hosts'
operations, which take the secret key.
--postgres-url (e.g. postgres://user@host:5432/svc) keeps annotations, cohorts, taxonomy,
streaming and replays in PostgreSQL, which several server processes can share.
--engine clickhouse keeps the events, identities and profiles in ClickHouse at --clickhouse-url
(its HTTP URL, e.g. http://127.0.0.1:8123; database --clickhouse-database, default "default",
created with its tables when missing) and needs --postgres-url for every other entity; the
data directory still holds the journal, tenancy and flags. Embedded DuckDB is the default.
--clickhouse-url given more than once names the replicas of one shard: the tables are
replicated (each ClickHouse server needs ZooKeeper and the macros shard and replica), and the
server turns to the next replica when the one in use does not answer (docs/engines.md).
--clickhouse-shard (repeatable) gives a further shard's replicas, comma-separated: the events are
split across the shards by user (--clickhouse-url's is the first shard, which also keeps every
other table) and read whole through Distributed tables over --clickhouse-cluster, a cluster of
the servers' remote_servers that lists the shards in the same order.
The engine runs in a child process at a lower priority than the server's, so that its loads
and queries do not stall the answers to HTTP requests: --engine-nice idle (the default) runs it
on the CPU time the server leaves (Linux's SCHED_IDLE; a server that keeps every CPU busy
holds the engine's loads and queries until it does not), a niceness (1-19) gives it a share
of a busy machine, and 0 an equal one.
--materialize-property (repeatable) has the DuckDB engine keep that event property in a column
of its own from the start, as it does for the properties reporting groups by or filters on
from their first query.
--reporting-cost-limits raises (or lowers) the platform's documented reporting cost budget per
project, 1000 per five minutes and 108000 per hour (e.g. 5000,500000 for a team's own server);
the limit of 5 concurrent requests stays.
--insert-id-window-hours (default 168, the platform's 7 days) is how long an event's insert_id is
remembered so that a repeat is dropped; the server keeps the ids of that window in memory
(about 100 bytes each), so a shorter window bounds memory under sustained traffic.
--duckdb-memory-limit (DuckDB's syntax, e.g. 1GB; default DuckDB's, 80% of RAM) bounds the memory
DuckDB's buffer cache keeps data blocks in.
--timeline-memory (e.g. 2GB; default a quarter of RAM; 0 for none) bounds the DuckDB engine's
timelines, the in-memory index of stored events that answers funnels and user counts fast
(20 to 45 bytes per event): a project whose timelines would pass it is answered by SQL, slower,
until the server restarts with a larger budget (the log says so when it happens).
--shared-dir (default: the data directory) holds tenancy, flags, saved charts and the link
secret: several server processes on one machine, each with its own --data-dir (its journal),
share one ClickHouse database, one PostgreSQL database and one --shared-dir. Admin commands
change the directory given by --shared-dir, or else --data-dir.`;

const OPTIONS = {
  region: { type: 'string', default: 'standard' },
  'data-dir': { type: 'string' },
  'shared-dir': { type: 'string' },
  host: { type: 'string', default: '127.0.0.1' },
  port: { type: 'string' },
  'port-per-role': { type: 'boolean', default: false },
  'cors-origin': { type: 'string', multiple: true },
  type: { type: 'string', default: 'webhook' },
  'event-types': { type: 'string' },
  'grace-hours': { type: 'string', default: '24' },
  engine: { type: 'string', default: 'duckdb' },
  'clickhouse-url': { type: 'string', multiple: true },
  'clickhouse-database': { type: 'string' },
  'clickhouse-shard': { type: 'string', multiple: true },
  'clickhouse-cluster': { type: 'string' },
  'postgres-url': { type: 'string' },
  'engine-nice': { type: 'string' },
  'materialize-property': { type: 'string', multiple: true },
  'reporting-cost-limits': { type: 'string' },
  'insert-id-window-hours': { type: 'string' },
  'duckdb-memory-limit': { type: 'string' },
  'timeline-memory': { type: 'string' },
  url: { type: 'string' },
  'api-key': { type: 'string' },
  state: { type: 'string' },
  concurrency: { type: 'string' },
  'batch-size': { type: 'string' },
  start: { type: 'string' },
  end: { type: 'string' },
  'part-hours': { type: 'string' },
  help: { type: 'boolean', default: false },
} as const;

const describeSecret = (secret: StoredSecret) =>
  `id ${secret.key_id}, created ${new Date(secret.created_at).toISOString()}${secret.expires_at === undefined ? '' : `, expires ${new Date(secret.expires_at).toISOString()}`}`;

/** A project as `admin list` shows it; `issued` keys (just created or rotated) are shown this once. */
function describeProject(project: Project, issued: { secretKey?: string; deployment?: IssuedDeployment } = {}): string {
  const lines = [`project ${project.name}: app_id ${project.app_id} (organization ${project.org_id}, time zone ${project.time_zone ?? 'UTC'})`, `  API key:    ${project.api_key}`];
  if (issued.secretKey) lines.push(`  secret key: ${issued.secretKey}   (shown this once)`);
  for (const secret of project.secrets) lines.push(`  secret key ${describeSecret(secret)}`);
  for (const d of project.deployments) {
    if (d.name === issued.deployment?.name) lines.push(`  deployment ${d.name}: ${issued.deployment.key}   (shown this once)`);
    for (const secret of d.secrets) lines.push(`  deployment ${d.name} key ${describeSecret(secret)}`);
  }
  for (const s of project.feedback_sources) lines.push(`  feedback source ${s.source_id} (${s.type})`);
  for (const d of project.stream_destinations ?? []) lines.push(`  stream destination ${d.sync_id}: ${d.url}${d.event_types ? ` (${d.event_types.join(', ')})` : ''}`);
  return lines.join('\n');
}

/** --grace-hours in ms. */
function graceMs(hours: string): number {
  const value = Number(hours);
  if (hours.trim() === '' || !Number.isFinite(value) || value < 0) throw new Error('--grace-hours is a number of hours, 0 or more');
  return value * 3_600_000;
}

function admin(tenancy: Tenancy, sharedDir: string, command: string | undefined, args: string[], options: { type: string; eventTypes?: string; graceHours: string }): void {
  const { type, eventTypes } = options;
  const need = (count: number) => {
    if (args.length < count) throw new Error(`admin ${command} needs ${count} argument(s)\n\n${USAGE}`);
  };
  switch (command) {
    case 'create-org': {
      need(1);
      const org = tenancy.createOrganization(args[0]!);
      console.log(`organization ${org.name}: id ${org.id}`);
      return;
    }
    case 'create-project': {
      need(2);
      const project = tenancy.createProject(Number(args[0]), args[1]!);
      console.log(describeProject(project, { secretKey: project.secret_key }));
      return;
    }
    case 'create-deployment': {
      need(2);
      const deployment = tenancy.createDeployment(Number(args[0]), args[1]!);
      console.log(`deployment ${deployment.name} of app_id ${deployment.app_id}: ${deployment.key}   (shown this once)`);
      return;
    }
    case 'rotate-secret': {
      need(1);
      const project = tenancy.rotateSecret(Number(args[0]), graceMs(options.graceHours));
      console.log(describeProject(project, { secretKey: project.secret_key }));
      return;
    }
    case 'rotate-deployment-key': {
      need(2);
      const deployment = tenancy.rotateDeploymentKey(Number(args[0]), args[1]!, graceMs(options.graceHours));
      console.log(describeProject(tenancy.projectOf(deployment.app_id)!, { deployment }));
      return;
    }
    case 'create-feedback-source': {
      need(2);
      if (type !== 'webhook' && type !== 'integration') throw new Error('--type is webhook or integration');
      const source = tenancy.createFeedbackSource(Number(args[0]), args[1]!, type);
      console.log(`feedback source ${source.source_id} (${source.type}) of app_id ${args[0]}`);
      return;
    }
    case 'set-flags': {
      need(2);
      const project = tenancy.projectOf(Number(args[0]));
      if (!project) throw new Error(`no project with app_id ${args[0]}`);
      const text = readFileSync(args[1]!, 'utf8');
      const authored = JSON.parse(text) as AuthoredFlag[];
      const flags = compileFlags(authored);
      const known = new Set(project.deployments.map((d) => d.name));
      for (const flag of authored) {
        const unknown = (flag.deployments ?? []).filter((name) => !known.has(name));
        if (unknown.length > 0) throw new Error(`${flag.key}.deployments: app_id ${args[0]} has no deployment ${unknown.join(', ')}`);
      }
      const target = flagFile(sharedDir, Number(args[0]));
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, text);
      console.log(`${flags.length} flag(s) set for app_id ${args[0]}: ${flags.map((f) => f.key).join(', ')}`);
      return;
    }
    case 'set-time-zone': {
      need(2);
      const project = tenancy.setTimeZone(Number(args[0]), args[1]!);
      console.log(`app_id ${project.app_id} reports in ${project.time_zone}`);
      return;
    }
    case 'grant-taxonomy': {
      need(1);
      const project = tenancy.grantTaxonomy(Number(args[0]));
      console.log(`app_id ${project.app_id} may use the taxonomy API`);
      return;
    }
    case 'save-chart': {
      need(2);
      if (!tenancy.projectOf(Number(args[0]))) throw new Error(`no project with app_id ${args[0]}`);
      const chart = saveChart(sharedDir, Number(args[0]), JSON.parse(readFileSync(args[1]!, 'utf8')) as Parameters<typeof saveChart>[2]);
      console.log(`chart ${chart.id} (${chart.title}) of app_id ${args[0]}: GET /api/3/chart/${chart.id}/csv`);
      return;
    }
    case 'add-stream-destination': {
      need(2);
      const types = eventTypes?.split(',').map((t) => t.trim()).filter((t) => t !== '');
      const destination = tenancy.addStreamDestination(Number(args[0]), args[1]!, types?.length ? types : undefined, Date.now());
      console.log(`stream destination ${destination.sync_id} of app_id ${args[0]}: ${destination.url}${types?.length ? ` (${types.join(', ')})` : ' (every event)'}`);
      console.log(`signing secret (shown once; verify deliveries with it): ${destination.signing_secret}`);
      return;
    }
    case 'rotate-stream-secret': {
      need(1);
      const destination = tenancy.rotateStreamSecret(args[0]!);
      console.log(`stream destination ${destination.sync_id}: new signing secret (shown once; deliveries from now on are signed with it): ${destination.signing_secret}`);
      return;
    }
    case 'remove-stream-destination': {
      need(1);
      const removed = tenancy.removeStreamDestination(args[0]!);
      console.log(`stream destination ${removed.sync_id} removed (${removed.url})`);
      return;
    }
    case 'list':
      for (const org of tenancy.organizations) {
        console.log(`organization ${org.name}: id ${org.id}`);
        for (const project of tenancy.projects.filter((p) => p.org_id === org.id)) console.log(describeProject(project));
      }
      return;
    default:
      throw new Error(USAGE);
  }
}

/** A fresh data directory gets a demo organization, project (with the taxonomy entitlement), deployment, feedback source and flag. */
function createDemo(tenancy: Tenancy, dataDir: string): string {
  const org = tenancy.createOrganization('Demo organization');
  const project: IssuedProject = tenancy.createProject(org.id, 'Demo project');
  tenancy.grantTaxonomy(project.app_id);
  const deployment = tenancy.createDeployment(project.app_id, 'demo-deployment');
  tenancy.createFeedbackSource(project.app_id, 'demo-webhook', 'webhook');
  const demoFlags: AuthoredFlag[] = [{ key: 'demo-flag', variants: { on: {} }, rollout: 50, bucketBy: 'user_id' }];
  const file = flagFile(dataDir, project.app_id);
  mkdirSync(dirname(file), { recursive: true });
  compileFlags(demoFlags); // the authoring format is checked before it is written
  writeFileSync(file, JSON.stringify(demoFlags, null, 2));
  return describeProject(tenancy.projectOf(project.app_id)!, { secretKey: project.secret_key, deployment });
}

/** `--duckdb-memory-limit SIZE`: a number and a unit, as DuckDB reads it (checked here for a clear message). */
function memoryLimit(option: string | undefined): string | undefined {
  if (option === undefined) return undefined;
  if (bytesOfSize(option) === undefined) throw new Error('--duckdb-memory-limit is a size such as 512MB or 2GB');
  return option.trim();
}

/** `--timeline-memory SIZE` in bytes; `0` alone keeps no timelines. */
function timelineMemory(option: string | undefined): number | undefined {
  if (option === undefined) return undefined;
  const bytes = option.trim() === '0' ? 0 : bytesOfSize(option);
  if (bytes === undefined) throw new Error('--timeline-memory is a size such as 512MB or 2GB, or 0 for no timelines');
  return bytes;
}

/** `--insert-id-window-hours H` (fractions allowed, from one second to the platform's 7 days). */
function insertIdWindowRule(option: string | undefined): Partial<EventRules> | undefined {
  if (option === undefined) return undefined;
  const ms = Number(option) * 3_600_000;
  if (!(option.trim() !== '' && ms >= 1000 && ms <= DEFAULT_INSERT_ID_WINDOW_MS)) throw new Error('--insert-id-window-hours is a number of hours from 1/3600 (one second) to 168 (7 days)');
  return { insertIdWindowMs: Math.round(ms) };
}

/** `--reporting-cost-limits PER_5_MIN,PER_HOUR` over the documented limits. */
function costLimits(option: string | undefined): LimitFigures | undefined {
  if (option === undefined) return undefined;
  const [costPerFiveMinutes, costPerHour] = option.split(',').map(Number);
  if (!(Number.isSafeInteger(costPerFiveMinutes) && costPerFiveMinutes! > 0 && Number.isSafeInteger(costPerHour) && costPerHour! > 0)) {
    throw new Error('--reporting-cost-limits is two whole numbers above 0: the cost per five minutes and per hour, e.g. 5000,500000');
  }
  return { ...DOCUMENTED_LIMITS, costPerFiveMinutes: costPerFiveMinutes!, costPerHour: costPerHour! };
}

/** Each `--clickhouse-shard`'s replicas (comma-separated URLs). */
function shardUrls(shards: string[] | undefined): string[][] {
  return (shards ?? []).map((replicas) => replicas.split(',').filter((url) => url !== ''));
}

export async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  if (values.help) return console.log(USAGE);
  const region = values.region;
  if (region !== 'standard' && region !== 'eu') throw new Error('--region is standard or eu');
  const dataDir = resolve(values['data-dir'] ?? join('.svc-data', region));
  const sharedDir = resolve(values['shared-dir'] ?? dataDir);
  const [command = 'start', ...rest] = positionals;

  // Files the commands write (tenancy, flags, charts) are the server's user's alone.
  process.umask(PRIVATE_MASK);
  if (command === 'admin' && rest[0] === 'replicas') {
    if (!values['clickhouse-url']?.[0]) throw new Error('admin replicas needs --clickhouse-url, once per replica (and --clickhouse-database unless it is "default")');
    const { reportReplicas } = await import('./store/clickhouse/replica-report.js');
    const servers = [...values['clickhouse-url'], ...shardUrls(values['clickhouse-shard']).flat()];
    if ((await reportReplicas(servers, values['clickhouse-database'])) > 0) process.exitCode = 1;
    return;
  }
  if (command === 'admin' && rest[0] === 'mutations') {
    if (!values['clickhouse-url']?.[0]) throw new Error('admin mutations needs --clickhouse-url (and --clickhouse-database unless it is "default")');
    const { reportPendingMutations } = await import('./store/clickhouse/mutation-report.js');
    // Replicas share their mutations: the first one's list is every replica's; each shard has its own.
    const shards = [values['clickhouse-url'][0], ...shardUrls(values['clickhouse-shard']).map((replicas) => replicas[0]!)];
    for (const url of shards) {
      if (shards.length > 1) console.log(`${url}:`);
      await reportPendingMutations(url, values['clickhouse-database']);
    }
    return;
  }
  if (command === 'admin') {
    return admin(new Tenancy(sharedDir), sharedDir, rest[0], rest.slice(1), { type: values.type, eventTypes: values['event-types'], graceHours: values['grace-hours'] });
  }
  if (command === 'import') {
    const { url, 'api-key': apiKey, state, concurrency, 'batch-size': batchSize, start, end, 'part-hours': partHours } = values;
    return importCommand(rest[0], { url, apiKey, state, concurrency, batchSize, start, end, partHours });
  }
  if (command !== 'start') throw new Error(USAGE);
  const engine = values.engine;
  if (engine !== 'duckdb' && engine !== 'clickhouse') throw new Error('--engine is duckdb or clickhouse');
  const engineNice = values['engine-nice'] === undefined || values['engine-nice'] === 'idle' ? values['engine-nice'] : Number(values['engine-nice']);
  if (typeof engineNice === 'number' && !(Number.isInteger(engineNice) && engineNice >= 0 && engineNice <= 19)) throw new Error('--engine-nice is idle or a whole number from 0 to 19');

  const fresh = new Tenancy(sharedDir);
  const demo = fresh.isEmpty() ? createDemo(fresh, sharedDir) : undefined;
  const port = values.port ? Number(values.port) : defaultPort(region);
  const rolePorts = values['port-per-role'] ? Object.fromEntries(hostRoles().map((role, i) => [role, port + i])) : undefined;
  const server = await startServer({
    dataDir,
    sharedDir,
    host: values.host,
    port,
    rolePorts,
    corsOrigins: values['cors-origin'],
    engine,
    clickhouseUrl: values['clickhouse-url']?.[0],
    clickhouseReplicaUrls: values['clickhouse-url']?.slice(1),
    clickhouseShardUrls: shardUrls(values['clickhouse-shard']),
    clickhouseCluster: values['clickhouse-cluster'],
    clickhouseDatabase: values['clickhouse-database'],
    postgresUrl: values['postgres-url'],
    engineNice,
    materializedProperties: values['materialize-property'],
    reportingLimits: costLimits(values['reporting-cost-limits']),
    rules: insertIdWindowRule(values['insert-id-window-hours']),
    duckdbMemoryLimit: memoryLimit(values['duckdb-memory-limit']),
    timelineMemoryBytes: timelineMemory(values['timeline-memory']),
    logClientErrors: true,
  });
  console.log(`svc-server (${region}, ${engine}) with data in ${dataDir}`);
  for (const [role, url] of Object.entries(server.urls)) console.log(`  ${role.padEnd(10)} ${url}`);
  if (demo) console.log(`\nCreated a demo organization on this fresh data directory:\n${demo}`);
  else console.log('\nProjects and keys: npx svc-server admin list');
  if (server.consoleUrl) console.log(`\nConsole: ${server.consoleUrl}   (sign in with ${demo ? 'the API key and secret key above' : "a project's API key and secret key"})`);
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
