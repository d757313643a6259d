/** Deterministic seeded event uploads as a client sends them, generated lazily batch by batch. */

export interface UploadEvent {
  event_type: string;
  user_id?: string;
  device_id?: string;
  time: number;
  session_id?: number;
  insert_id?: string;
  event_properties?: Record<string, unknown>;
  user_properties?: Record<string, unknown>;
  app_version?: string;
  platform?: string;
  os_name?: string;
  os_version?: string;
  country?: string;
  city?: string;
  region?: string;
  dma?: string;
  language?: string;
  device_brand?: string;
  device_model?: string;
  price?: number;
  quantity?: number;
  revenue?: number;
}

export interface DatasetOptions {
  seed: number;
  users: number;
  /** First day (UTC midnight, ms); default 2026-01-19, a Monday, so the range crosses the month edge. */
  startMs: number;
  days: number;
  batchSize: number;
}

export const DEFAULT_DATASET: DatasetOptions = {
  seed: 42,
  users: 3000,
  startMs: Date.UTC(2026, 0, 19),
  days: 42,
  batchSize: 2000,
};

/** mulberry32: small, fast, good enough for test data. */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const COUNTRIES = [
  { country: 'United States', region: 'California', city: 'San Francisco', dma: 'San Francisco-Oakland-San Jose, CA' },
  { country: 'United States', region: 'New York', city: 'New York', dma: 'New York, NY' },
  { country: 'Germany', region: 'Berlin', city: 'Berlin' },
  { country: 'Japan', region: 'Tokyo', city: 'Tokyo' },
  { country: 'Brazil' },
];
const DEVICES = [
  { platform: 'iOS', os_name: 'ios', os_version: '17.1', device_brand: 'Apple', device_model: 'iPhone 15' },
  { platform: 'Android', os_name: 'android', os_version: '14', device_brand: 'Google', device_model: 'Pixel 8' },
  { platform: 'Web', os_name: 'Chrome' },
];
const VERSIONS = ['1.0', '1.1', '2.0'];
const LANGUAGES = ['English', 'German', 'Japanese'];
const NOISE_EVENTS = ['Open App', 'View Item', 'Search', 'Share'];
const MINUTE = 60_000;
const DAY = 86_400_000;

/**
 * Batches (≤ batchSize events) in ingestion order. Events inside a user's session are
 * deliberately not always time-ordered and some share a millisecond, for the funnel modes.
 */
export function* generateBatches(options: Partial<DatasetOptions> = {}): Generator<UploadEvent[]> {
  const o = { ...DEFAULT_DATASET, ...options };
  const random = createRandom(o.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  let batch: UploadEvent[] = [];
  let insertCounter = 0;
  function* emit(events: UploadEvent[]): Generator<UploadEvent[]> {
    for (const event of events) {
      batch.push({ ...event, insert_id: `${o.seed}-${insertCounter++}` });
      if (batch.length >= o.batchSize) {
        yield batch;
        batch = [];
      }
    }
  }
  for (let userIndex = 0; userIndex < o.users; userIndex++) {
    const userId = `user-${userIndex}`;
    const place = pick(COUNTRIES);
    const devices = Array.from({ length: 1 + Math.floor(random() * 2.2) }, (_, d) => ({
      id: `device-${userIndex}-${d}`,
      ...pick(DEVICES),
    }));
    // Some users start anonymous and identify later; some share a device with the previous user.
    const anonymousDays = random() < 0.25 ? 1 + Math.floor(random() * 3) : 0;
    if (userIndex > 0 && random() < 0.03) devices.push({ id: `device-${userIndex - 1}-0`, ...pick(DEVICES) });
    const firstDay = Math.floor(random() * o.days);
    const activeDays = 1 + Math.floor(random() * Math.min(10, o.days - firstDay));
    let version = pick(VERSIONS);
    const events: UploadEvent[] = [];
    events.push({
      event_type: '$identify',
      user_id: userId,
      device_id: devices[0]!.id,
      time: o.startMs + firstDay * DAY + Math.floor(random() * DAY),
      user_properties: {
        // Some users' paying and start_version set in the profile (as the Identify API sets them): they win over the events'.
        $set: { plan: pick(['free', 'pro', 'team']), tags: random() < 0.5 ? ['a', 'b'] : ['b'], ...(userIndex % 25 === 3 ? { paying: 'false', start_version: '0.9' } : {}) },
        $setOnce: { cohort_day: firstDay },
        $add: { logins: 1 },
        ...(random() < 0.1 ? { $unset: { plan: '-' } } : {}),
        ...(random() < 0.2 ? { $append: { tags: 'c' } } : {}),
      },
    });
    if (anonymousDays > 0) events[0]!.time += anonymousDays * DAY;
    for (let dayOffset = 0; dayOffset < activeDays; dayOffset++) {
      const day = firstDay + Math.floor((dayOffset * (o.days - firstDay)) / activeDays);
      const device = pick(devices);
      const anonymous = dayOffset < anonymousDays;
      const sessionStart = o.startMs + day * DAY + Math.floor(random() * (DAY - 2 * 3_600_000));
      const sessionRoll = random();
      const sessionId = sessionRoll < 0.05 ? -1 : sessionRoll < 0.08 ? undefined : sessionStart;
      if (random() < 0.1) version = pick(VERSIONS);
      const common = (time: number, eventType: string): UploadEvent => ({
        event_type: eventType,
        ...(anonymous ? {} : { user_id: userId }),
        device_id: device.id,
        time,
        ...(sessionId === undefined ? {} : { session_id: sessionId }),
        app_version: version,
        platform: device.platform,
        os_name: device.os_name,
        ...('os_version' in device ? { os_version: device.os_version } : {}),
        ...('device_brand' in device ? { device_brand: device.device_brand, device_model: device.device_model } : {}),
        ...place,
        language: pick(LANGUAGES),
      });
      let time = sessionStart;
      for (let n = Math.floor(random() * 6); n >= 0; n--) {
        const event = common(time, pick(NOISE_EVENTS));
        const propertyRoll = random();
        event.event_properties =
          propertyRoll < 0.3 ? { count: Math.floor(random() * 10), category: pick(['shoes', 'hats']) }
          : propertyRoll < 0.5 ? { count: String(Math.floor(random() * 10)), labels: ['x', pick(['y', 'z'])] }
          : propertyRoll < 0.6 ? { category: null }
          : {};
        events.push(event);
        time += Math.floor(random() * 5 * MINUTE);
      }
      if (random() < 0.6) {
        // Funnel A → B → C with noise, repeats, gaps beyond windows, same-millisecond and reversed steps.
        const shape = random();
        const steps = shape < 0.1 ? ['B', 'A', 'C'] : shape < 0.2 ? ['A', 'A', 'B'] : ['A', 'B', 'C'];
        for (const step of steps) {
          if (random() < 0.15) break;
          if (random() < 0.3) events.push(common(time, pick(NOISE_EVENTS)));
          events.push({ ...common(time, step), event_properties: { step_index: steps.indexOf(step) } });
          time += random() < 0.1 ? 0 : random() < 0.05 ? 2 * DAY : Math.floor(random() * 10 * MINUTE);
        }
      }
      if (random() < 0.15) {
        const price = Math.round(random() * 5000) / 100;
        const quantity = 1 + Math.floor(random() * 3);
        events.push({ ...common(time, 'Purchase'), price, quantity, revenue: price * quantity });
      }
      if (random() < 0.1) {
        events.push({ ...common(time, '[Experiment] Assignment'), user_properties: { variant: pick(['on', 'off']) } });
      }
    }
    // Clients flush late and out of time order: ingestion order is not time order.
    if (random() < 0.2) events.reverse();
    yield* emit(events);
  }
  if (batch.length > 0) yield batch;
}

/** Every event of a (small) dataset, in ingestion order. */
export function generateEvents(options: Partial<DatasetOptions> = {}): UploadEvent[] {
  const all: UploadEvent[] = [];
  for (const batch of generateBatches(options)) all.push(...batch);
  return all;
}
