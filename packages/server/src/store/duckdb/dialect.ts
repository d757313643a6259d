// Prints the reporting query model as DuckDB SQL (the Dialect of ../dialect.ts).
import { type CohortCondition, type Condition, type EventScan, type EventSelector, INACTIVE_EVENT_TYPES, plainEventType, type PropertyRef } from '../../model/query.js';
import type { Interval } from '../../model/time.js';
import { aggregateSql, type ChainedFunnel, type Dialect, localWallMs, type PerBucketAndWhole, type RollingWindows } from '../dialect.js';
import { type ConditionPrimitives, conditionSql } from '../dialect-conditions.js';
import { userSummariesSql } from './user-summaries.js';

/** A string literal; a NUL, which ends DuckDB's literal, is written as chr(0). */
const string = (value: string) => `'${value.replace(/'/g, "''").replace(/\0/g, "' || chr(0) || '")}'`;
const list = (values: readonly string[]) => `[${values.map(string).join(', ')}]`;
const jsonPointer = (name: string) => string(`/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`);

/** The text of an event property in a JSON of event properties: what `text()` reads, and what a materialized column holds. */
export const eventPropertyText = (properties: string, name: string) => `json_extract_string(${properties}, ${jsonPointer(name)})`;

const BUILT_IN_COLUMNS: Record<string, string> = {
  version: 'e.app_version',
  country: 'e.country',
  city: 'e.city',
  region: 'e.region',
  DMA: 'e.dma',
  language: 'e.language',
  platform: 'e.platform',
  os: "nullif(concat_ws(' ', e.os_name, e.os_version), '')",
  device: 'e.device_model',
  device_type: "nullif(concat_ws(' ', e.device_brand, e.device_model), '')",
  // Set in the profile (the Identify API's fields), they win over those of the user's events.
  start_version: `coalesce(json_extract_string(v.properties, '/start_version'), h.start_version)`,
  paying: `coalesce(json_extract_string(v.properties, '/paying'), CASE WHEN h.first_paid <= e.ingest_seq THEN 'true' ELSE 'false' END)`,
};
/** Built-ins that need the user's history before the event and profile (the `h` and `v` relations). */
const HISTORY = new Set(['start_version', 'paying']);

const BUCKET_UNITS: Record<Exclude<Interval, 'minute5'>, string> = { hour: 'hour', day: 'day', week: 'week', month: 'month' };

export interface DialectOptions {
  /** Whether the project has user mappings (then every scan resolves mapped users). */
  userMappings: boolean;
  /** The columns of `events` that hold an event property's text (materialized, by property name). */
  propertyColumns?: ReadonlyMap<string, string>;
  /** Told of every event property whose text a query reads from the JSON (the engine may materialize it). */
  readFromJson?: (name: string) => void;
}

export class DuckDbDialect implements Dialect {
  string = string;

  constructor(private readonly options: DialectOptions = { userMappings: true }) {}

  get mapsUsers(): boolean {
    return this.options.userMappings;
  }

  /**
   * Whether a project has user mappings, so that scans of projects without any skip the join
   * (`mapped`), and the materialized event properties (`columns`: a list of `{name, column_name}`).
   */
  static optionsQuery(appId: number): string {
    return `SELECT (SELECT count(*) > 0 FROM user_mappings WHERE app_id = ${appId}) AS mapped,
      (SELECT coalesce(list({'name': name, 'column_name': column_name}), []) FROM materialized_properties WHERE ready) AS columns`;
  }

  /** The raw JSON of a property at event time (null when missing). */
  private json(property: PropertyRef): string {
    switch (property.kind) {
      case 'event':
        return `json_extract(e.event_properties, ${jsonPointer(property.name)})`;
      case 'custom':
        // The event's own user properties win over the profile (not on $identify, whose keys are operations).
        return `coalesce(CASE WHEN e.event_type <> '$identify' THEN json_extract(e.user_properties, ${jsonPointer(property.name)}) END, json_extract(v.properties, ${jsonPointer(property.name)}))`;
      case 'builtIn':
        return `to_json(${BUILT_IN_COLUMNS[property.name]})`;
    }
  }

  /**
   * The text of a property's value: strings as they are, null as NULL, other JSON as its text
   * (what json_extract_string gives, in one call: a CASE on json_type read the value three times).
   */
  private text(property: PropertyRef): string {
    if (property.kind === 'builtIn') return `(${BUILT_IN_COLUMNS[property.name]})::VARCHAR`;
    if (property.kind === 'event') {
      const column = this.options.propertyColumns?.get(property.name);
      if (column !== undefined) return `e."${column}"`;
      this.options.readFromJson?.(property.name);
      return eventPropertyText('e.event_properties', property.name);
    }
    return `json_extract_string(${this.json(property)}, '$')`;
  }

  /** The primitives of the shared condition compiler (../dialect-conditions.ts). */
  private readonly primitives: ConditionPrimitives = {
    text: (property) => this.text(property),
    string,
    number: (text) => this.number(text),
    numeral: (value) => this.numeral(value),
    orFalse: (condition) => `coalesce(${condition}, false)`,
    containsAny: (text, values) => `list_bool_or(list_transform(${list(values)}, x -> contains(${text}, x)))`,
    setIs: (property, text, values) => {
      const elements = `CASE WHEN json_type(${this.json(property)}) = 'ARRAY' THEN json_extract_string(${this.json(property)}, '$[*]') ELSE [${text}] END`;
      // Both sides without repeats and NULLs (list_distinct drops them), in one order.
      return `coalesce(list_sort(list_distinct(${elements})) = list_sort(list_distinct(${list(values)})), false)`;
    },
  };

  condition(condition: Condition): string {
    return conditionSql(this.primitives, condition, 'true');
  }

  private segmentCondition(condition: Condition | CohortCondition, appId: number): string {
    if (!('cohortId' in condition)) return this.condition(condition);
    return `${condition.member ? '' : 'NOT '}e.svc_id IN (SELECT svc_id FROM cohort_members WHERE app_id = ${appId} AND cohort_id = ${string(condition.cohortId)})`;
  }

  private selects({ eventType, conditions }: EventSelector): string[] {
    const type =
      eventType === '_all'
        ? []
        : eventType === '_active'
          ? [`e.event_type NOT IN (${INACTIVE_EVENT_TYPES.map(string).join(', ')})`]
          : eventType === 'revenue_amount'
            ? ['e.revenue IS NOT NULL']
            : [`e.event_type = ${string(plainEventType(eventType))}`];
    return [...type, ...conditions.map((c) => this.condition(c))];
  }

  distinctCount(expression: string): string {
    return `count(DISTINCT ${expression})`;
  }

  countWhere(condition: string): string {
    return `count(*) FILTER (WHERE ${condition})`;
  }

  anyOf(condition: string): string {
    return `bool_or(${condition})`;
  }

  valueAtMax(value: string, key: string): string {
    return `arg_max(${value}, ${key})`;
  }

  number(text: string): string {
    return `TRY_CAST(${text} AS DOUBLE)`;
  }

  numeral(value: number): string {
    return String(value);
  }

  integer(expression: string): string {
    return `(${expression})::INTEGER`;
  }

  double(expression: string): string {
    return `(${expression})::DOUBLE`;
  }

  quotient(dividend: string, divisor: string): string {
    return `((${dividend}) // ${divisor})`;
  }

  orderedList(value: string, orderBy: string[]): string {
    return `list(${value} ORDER BY ${orderBy.join(', ')})`;
  }

  /**
   * From every entry the earliest following event of step 2, then of step 3 after it…
   * (sequential: the very next event), by ASOF joins on the order key `k`. Each later step's
   * events are joined to the path on from them once (c<k>, from the last step back), so an
   * entry joins step 2 only. Winners by one HUGEINT key per path (`winnerKey`): depth first,
   * then the earliest entry.
   */
  chainedFunnel({ steps, windowMs, sequential, entriesEndMs, grouped, events }: ChainedFunnel): string {
    const later = Array.from({ length: steps - 1 }, (_, i) => i + 1);
    // The user's next event of `table` after `previous` (sequential: the very next one), NULLs when none.
    const next = (table: string, previous: string, alias: string) =>
      sequential
        ? `LEFT JOIN ${table} ${alias} ON ${alias}.svc_id = ${previous}.svc_id AND ${alias}.k = ${previous}.k + 1`
        : `ASOF LEFT JOIN ${table} ${alias} ON ${alias}.svc_id = ${previous}.svc_id AND ${alias}.k > ${previous}.k`;
    const within = (k: number) => later.filter((j) => j <= k).map((j) => `j1.t${j} <= j0.time + ${windowMs}`).join(' AND ');
    const depth = ['1', ...later.map((k) => `coalesce(${within(k)}, false)::INTEGER`)].join(' + ');
    // Offsets of the steps reached from the entry (0 for the others): at most the window, below 2^35 ms.
    const offset = (k: number) => `CASE WHEN depth > ${k} THEN t${k} - t0 ELSE 0 END`;
    const packed = later.filter((k) => k <= 2);
    const unpacked = later.filter((k) => k > 2);
    // depth (4 bits) | 2^47 - 1 - k0 (47 bits; k < 2^47 for times before the year 2300 with at most 10
    // steps) | o1 (35 bits) | o2 (35 bits): the largest key is the furthest, then earliest path of a
    // user, and carries its first two offsets. The max of one number is much cheaper than arg_max
    // over structs; further offsets and the group value follow the key (arg_max_null: arg_max would
    // skip a winner whose group value is NULL).
    const winnerKey = [`(depth::HUGEINT << 117)`, `((${2 ** 47 - 1} - k0)::HUGEINT << 70)`, ...packed.map((k) => `(${offset(k)})::HUGEINT << ${35 * (2 - k)}`)].map((part) => `(${part})`).join(' | ');
    const followers = [...unpacked.map((k) => `o${k}`), ...(grouped ? ['g'] : [])];
    const winners = (rows: string, groups: string) =>
      `SELECT ${groups}, max(key) AS key${followers.map((column) => `, arg_max_null(${column}, key) AS ${column}`).join('')} FROM ${rows} GROUP BY ${groups}`;
    const mask = 2 ** 35 - 1;
    const decoded = (row: string) =>
      [`(${row}.key >> 117)::INTEGER AS depth`, ...packed.map((k) => `((${row}.key >> ${35 * (2 - k)}) & ${mask})::BIGINT AS o${k}`), ...unpacked.map((k) => `${row}.o${k} AS o${k}`)].join(', ');
    const transition = (k: number) => (k === 1 ? 'o1' : `o${k} - o${k - 1}`);
    const whole = steps === 1 ? '0' : `o${steps - 1}`;
    const measures = (filter: string) =>
      [
        ...Array.from({ length: steps }, (_, k) => `count(*) FILTER (WHERE depth > ${k}) AS r${k}`),
        ...later.flatMap((k) => [`median(${transition(k)}) FILTER (WHERE depth > ${k}) AS m${k}`, `avg(${transition(k)}) FILTER (WHERE depth > ${k}) AS a${k}`]),
        `median(${whole}) FILTER (WHERE depth = ${steps}) AS m0`,
        `avg(${whole}) FILTER (WHERE depth = ${steps}) AS a0`,
        filter,
      ].join(', ');
    const chain = [...later].reverse().map((k) => {
      const rest = later.filter((j) => j > k);
      const ofStep = `(SELECT svc_id, k, time FROM ev WHERE f${k}) s`;
      return rest.length === 0
        ? `c${k} AS (SELECT svc_id, k, time AS t${k} FROM ${ofStep})`
        : `c${k} AS (SELECT s.svc_id, s.k, s.time AS t${k}, ${rest.map((j) => `n.t${j}`).join(', ')} FROM ${ofStep} ${next(`c${k + 1}`, 's', 'n')})`;
    });
    const used = ['svc_id', 'k', 'time', 'bucket', ...Array.from({ length: steps }, (_, k) => `f${k}`), ...(grouped ? ['p0'] : [])];
    // Without a group-by, a day's rows need nothing of the user's overall winner.
    const dayRows = grouped ? `(SELECT best.g, d.bucket, ${decoded('d')} FROM best_of_day d JOIN best USING (svc_id))` : `(SELECT NULL::VARCHAR AS g, bucket, ${decoded('best_of_day')} FROM best_of_day)`;
    // Only the columns used: a CTE read several times is materialized with every column it selects. Ordered
    // funnels scan the events once per step instead (each scan filtered to its step by pushdown), which
    // is faster than materializing them; a sequential funnel's positions are a window over every event
    // of the user, computed once.
    return `WITH ev AS ${sequential ? '' : 'NOT MATERIALIZED '}(SELECT ${used.join(', ')} FROM (${events})),
    j0 AS (SELECT svc_id, k, time, bucket${grouped ? ', p0 AS g' : ''} FROM ev WHERE f0 AND time < ${entriesEndMs}),
    ${chain.map((c) => `${c},`).join('\n    ')}
    paths AS (SELECT j0.svc_id, j0.k AS k0, j0.bucket${grouped ? ', j0.g' : ''}, ${[`j0.time AS t0`, ...later.map((k) => `j1.t${k}`)].join(', ')}, ${depth} AS depth
      FROM j0 ${later.length > 0 ? next('c1', 'j0', 'j1') : ''}),
    best_of_day AS (${winners(`(SELECT svc_id, bucket${grouped ? ', g' : ''}, ${winnerKey} AS key${unpacked.map((k) => `, ${offset(k)} AS o${k}`).join('')} FROM paths)`, 'svc_id, bucket')}),
    best AS (${winners('best_of_day', 'svc_id')})
    SELECT ${grouped ? 'g' : 'NULL::VARCHAR AS g'}, NULL AS day, ${measures('true AS whole')} FROM (SELECT ${grouped ? 'best.g, ' : ''}${decoded('best')} FROM best) GROUP BY ALL
    UNION ALL SELECT g, ${this.bucketLabel('bucket', 'day')} AS day, ${measures('false AS whole')} FROM ${dayRows} GROUP BY g, bucket`;
  }

  /**
   * The rows that count, with only the columns read, materialized once and grouped twice. GROUPING
   * SETS with distinct counts cost a quarter more CPU (a distinct table per set and group); the
   * source read twice evaluates its JSON properties twice.
   */
  perBucketAndWhole({ source, interval, groups, aggregates, where, onlyTop }: PerBucketAndWhole): string {
    const values = Object.entries(aggregates).map(([name, aggregate]) => `${aggregateSql(this, aggregate)} AS ${name}`);
    const measured = Object.values(aggregates).flatMap((aggregate) => (aggregate.column === undefined ? [] : [aggregate.column]));
    const columns = [...new Set(['bucket', ...groups, ...measured])];
    const grouped = (keys: string[]) => (keys.length === 0 ? '' : ` GROUP BY ${keys.join(', ')}`);
    const rows = `s AS MATERIALIZED (SELECT ${columns.join(', ')} FROM ${source} s WHERE ${where ?? 'true'})`;
    const perBucket = (from: string) => `SELECT ${this.bucketLabel('bucket', interval)} AS bucket, ${[...groups, ...values].join(', ')}, false AS whole FROM ${from}${grouped(['bucket', ...groups])}`;
    if (!onlyTop || groups.length === 0) return `WITH ${rows} ${perBucket('s')} UNION ALL SELECT NULL, ${[...groups, ...values].join(', ')}, true FROM s${grouped(groups)}`;
    // The whole-range rows first; the per-bucket ones of the groups at or above the top's last value.
    const last = `(SELECT ${onlyTop.column} FROM w ORDER BY ${onlyTop.column} DESC LIMIT 1 OFFSET ${onlyTop.count - 1})`;
    const top = `k AS (SELECT ${groups.join(', ')} FROM w WHERE ${last} IS NULL OR ${onlyTop.column} >= ${last})`;
    const sameGroups = groups.map((group) => `s.${group} IS NOT DISTINCT FROM k.${group}`).join(' AND ');
    return `WITH ${rows}, w AS MATERIALIZED (SELECT ${[...groups, ...values].join(', ')} FROM s${grouped(groups)}), ${top}
    ${perBucket(`s SEMI JOIN k ON ${sameGroups}`)} UNION ALL SELECT NULL, ${[...groups, ...Object.keys(aggregates)].join(', ')}, true FROM w`;
  }

  rebucketed(_scan: EventScan, sql: string, { labels, size }: RollingWindows): string {
    const indexed = `(VALUES ${labels.map((label, i) => `(${this.bucketOf(label)}, ${i})`).join(', ')})`;
    return `SELECT s.* EXCLUDE (bucket), t.bucket AS bucket FROM (${sql}) s JOIN ${indexed} w(bucket, i) ON s.bucket = w.bucket JOIN ${indexed} t(bucket, i) ON t.i BETWEEN w.i AND w.i + ${size - 1}`;
  }

  shared(name: string, sql: string, body: (relation: string) => string): string {
    return `WITH ${name} AS MATERIALIZED (${sql}) ${body(name)}`;
  }

  innerJoin(left: string, right: string, keys: string[]): string {
    return `(${left}) AS l JOIN (${right}) AS r USING (${keys.join(', ')})`;
  }

  userInBucketOf(sql: string): string {
    return `EXISTS (SELECT 1 FROM (${sql}) a WHERE a.bucket = s.bucket AND a.svc_id = s.svc_id)`;
  }

  /** Exact: `ingest_seq` is below 2^63 - 1. One HUGEINT compares much faster than a struct in arg_max. */
  timeOrderKey(time: string, ingestSeq: string): string {
    return `(${time}::HUGEINT * 9223372036854775807 + ${ingestSeq})`;
  }

  eventTypes(appId: number): string {
    return `SELECT DISTINCT event_type FROM events WHERE app_id = ${appId}`;
  }

  eventPropertySeen(appId: number, property: string, eventTypes: readonly string[] | null): string {
    const ofTypes = eventTypes === null ? '' : ` AND event_type IN (${eventTypes.map(string).join(', ')})`;
    return `SELECT 1 FROM events WHERE app_id = ${appId}${ofTypes} AND json_extract(event_properties, ${jsonPointer(property)}) IS NOT NULL LIMIT 1`;
  }

  private matches(selector: EventSelector): string {
    const conditions = this.selects(selector);
    return conditions.length === 0 ? 'true' : `(${conditions.join(' AND ')})`;
  }

  /** The local wall time of the bucket start, as a TIMESTAMP. Labels are made after grouping (`bucketLabel`). */
  bucket(interval: Interval, timeZone: string, epochMs: string, fromMs: number, toMs: number): string {
    const local = `make_timestamp(${localWallMs(timeZone, epochMs, fromMs, toMs)} * 1000)`;
    return interval === 'minute5' ? `time_bucket(INTERVAL 5 MINUTE, ${local})` : `date_trunc('${BUCKET_UNITS[interval]}', ${local})`;
  }

  bucketLabel(bucket: string, interval: Interval): string {
    return `strftime(${bucket}, '${interval === 'minute5' || interval === 'hour' ? '%Y-%m-%dT%H:%M:00' : '%Y-%m-%d'}')`;
  }

  bucketOf(label: string): string {
    return `${string(label.replace('T', ' '))}::TIMESTAMP`;
  }

  userMappings(appId: number): string {
    return `SELECT from_svc, to_svc FROM user_mappings WHERE app_id = ${appId} AND to_svc IS NOT NULL`;
  }

  userProfile(appId: number, svcId: number): string {
    return `SELECT CAST(properties AS VARCHAR) AS properties FROM profiles WHERE app_id = ${appId} AND svc_id = ${svcId}`;
  }

  userSummaries(appId: number, ofUsers: string): string {
    return userSummariesSql(appId, ofUsers);
  }

  jsonText(column: string): string {
    return `CAST(${column} AS VARCHAR)`;
  }

  startsWith(text: string, prefix: string): string {
    return `starts_with(${text}, ${string(prefix)})`;
  }

  scan(scan: EventScan): string {
    const selectors = [...(scan.selector ? [scan.selector] : []), ...(scan.flags ?? [])];
    const referenced = [...scan.properties, ...scan.segment.flatMap((c) => ('property' in c ? [c.property] : [])), ...selectors.flatMap((s) => s.conditions.map((c) => c.property))];
    const needsHistory = referenced.some((p) => p.kind === 'builtIn' && HISTORY.has(p.name));
    const needsProfile = needsHistory || referenced.some((p) => p.kind === 'custom');
    const timeColumn = scan.timeColumn ?? 'time';
    const where = [
      `e.app_id = ${scan.appId}`,
      'e.svc_id IS NOT NULL',
      `e.${timeColumn} >= ${scan.range.startMs}`,
      `e.${timeColumn} < ${scan.range.endMs}`,
      ...(scan.selector ? this.selects(scan.selector) : []),
      ...scan.segment.map((c) => this.segmentCondition(c, scan.appId)),
      ...(scan.flaggedOnly && scan.flags ? [`(${scan.flags.map((selector) => this.matches(selector)).join(' OR ')})`] : []),
    ];
    // A user mapped into a global user counts as that user (user mapping); properties stay its own.
    const user = this.options.userMappings ? 'coalesce(m.to_svc, e.svc_id)' : 'e.svc_id';
    const mapping = this.options.userMappings ? ' LEFT JOIN user_mappings m ON m.app_id = e.app_id AND m.from_svc = e.svc_id' : '';
    const columns = [
      `${user} AS svc_id`,
      'e.time',
      'e.ingest_seq',
      'e.event_type',
      'e.session_id',
      `e.event_type NOT IN (${INACTIVE_EVENT_TYPES.map(string).join(', ')}) AS active`,
      ...(scan.revenue ? ['e.revenue'] : []),
      ...(scan.interval ? [`${this.bucket(scan.interval, scan.timeZone, `e.${timeColumn}`, scan.range.startMs, scan.range.endMs)} AS bucket`] : []),
      ...scan.properties.map((p, i) => `${this.text(p)} AS p${i}`),
      ...(scan.flags ?? []).map((selector, i) => `${this.matches(selector)} AS f${i}`),
    ];
    // Each user's first versioned and first revenue event, kept at load (user-summaries.ts).
    const history = needsHistory
      ? ` JOIN (${userSummariesSql(scan.appId)}) h ON h.svc_id = e.svc_id`
      : '';
    const profile = needsProfile ? ' ASOF LEFT JOIN profile_versions v ON v.app_id = e.app_id AND v.svc_id = e.svc_id AND e.ingest_seq >= v.ingest_seq' : '';
    // A mapped user's first event is the first of its own and its global user's.
    const first = scan.firstEventsOnly
      ? ` JOIN (SELECT ${user} AS svc_id, min(e.time) AS first_time FROM events e${mapping} WHERE e.app_id = ${scan.appId} AND e.svc_id IS NOT NULL GROUP BY 1) f ON f.svc_id = ${user} AND f.first_time = e.time`
      : '';
    return `SELECT ${columns.join(', ')} FROM events e${mapping}${profile}${history}${first} WHERE ${where.join(' AND ')}`;
  }
}
