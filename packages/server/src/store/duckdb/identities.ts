// The DuckDB engine's identity rows: read at open, resolved for a segment's events in JS (in
// ingestion order, chunk by chunk so that the event loop keeps serving), and written back.
import type { DuckDBConnection } from '@duckdb/node-api';
import { timeSlicer, yieldToEventLoop } from '../../shared/time-slice.js';
import { Identities, type IdentityBatch, type IdentityRows } from '../identity.js';
import { appendAll, rowsOf, upsertRows } from './results.js';
import { foldMergedSummaries } from './user-summaries.js';

/** The stored identities, and the `ingest_seq` of the last event loaded. */
export async function readIdentities(connection: DuckDBConnection): Promise<{ identities: Identities; lastIngestSeq: number }> {
  const read = (sql: string) => rowsOf(connection, sql);
  const rows: IdentityRows = {
    users: (await read('SELECT app_id, user_id, svc_id FROM identity_users')).map((r) => ({ appId: Number(r.app_id), userId: r.user_id as string, svcId: Number(r.svc_id) })),
    devices: (await read('SELECT app_id, device_id, svc_id, owner FROM identity_devices')).map((r) => ({
      appId: Number(r.app_id),
      deviceId: r.device_id as string,
      svcId: Number(r.svc_id),
      owner: (r.owner as string | null) ?? null,
    })),
    merges: (await read('SELECT from_svc, to_svc FROM svc_merges')).map((r) => ({ from: Number(r.from_svc), to: Number(r.to_svc) })),
  };
  const [last] = await read('SELECT coalesce(max(ingest_seq), 0) AS ingest_seq, (SELECT coalesce(max(svc_id), 0) FROM (SELECT svc_id FROM identity_users UNION ALL SELECT svc_id FROM identity_devices)) AS svc_id FROM events');
  return { identities: Identities.from(rows, Number(last!.svc_id) + 1), lastIngestSeq: Number(last!.ingest_seq) };
}

/**
 * The `svc_id` of every event row of the temp table `segment` (in `seq` order), into the
 * temp table `segment_ids (seq, svc_id)`; merged ids are already replaced by their target.
 */
export async function resolveIdentities(connection: DuckDBConnection, identities: Identities): Promise<IdentityBatch> {
  const batch = identities.begin();
  const seqs: number[] = [];
  const svcIds: (number | null)[] = [];
  const result = await connection.stream('SELECT seq::BIGINT, app_id, user_id, device_id FROM segment WHERE held_attribution IS NULL ORDER BY seq');
  const slice = timeSlicer();
  for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    const [seq, appId, userId, deviceId] = chunk.getColumns() as [bigint[], number[], (string | null)[], (string | null)[]];
    for (let row = 0; row < chunk.rowCount; row++) {
      seqs.push(Number(seq[row]));
      svcIds.push(batch.resolve(appId[row]!, userId[row]!, deviceId[row]!));
      await slice(row);
    }
    await yieldToEventLoop();
  }
  await connection.run('CREATE OR REPLACE TEMP TABLE segment_ids (seq BIGINT, svc_id BIGINT)');
  const appender = await connection.createAppender('segment_ids', 'main', 'temp');
  await appendAll(appender, seqs, (seq, row) => {
    const svcId = svcIds[row]!;
    appender.appendBigInt(BigInt(seq));
    if (svcId === null) appender.appendNull();
    else appender.appendBigInt(BigInt(batch.canonical(svcId)));
  });
  return batch;
}

/** Writes a batch's identity changes; merged ids are replaced in the events and profiles stored before. */
export async function persistIdentities(connection: DuckDBConnection, batch: IdentityBatch): Promise<void> {
  const { users, devices, merges } = batch.changes();
  // Most user mappings change no identity: they create no temp tables.
  await upsertRows(connection, 'identity_users', 'app_id, user_id, svc_id', users.map((u) => [u.appId, u.userId, u.svcId]));
  await upsertRows(connection, 'identity_devices', 'app_id, device_id, svc_id, owner', devices.map((d) => [d.appId, d.deviceId, d.svcId, d.owner]));
  await upsertRows(connection, 'svc_merges', 'from_svc, to_svc', merges.map((m) => [m.from, m.to]));
  if (merges.length === 0) return;
  await connection.run('UPDATE events SET svc_id = m.to_svc FROM svc_merges_changes m WHERE events.svc_id = m.from_svc');
  await foldMergedSummaries(connection);
  await connection.run('UPDATE profile_versions SET svc_id = m.to_svc FROM svc_merges_changes m WHERE profile_versions.svc_id = m.from_svc');
  // The user's own profile wins; a user without one takes the merged device's.
  await connection.run(
    `INSERT INTO profiles SELECT p.app_id, m.to_svc, p.properties, p.updated_at FROM profiles p JOIN svc_merges_changes m ON p.svc_id = m.from_svc
     WHERE NOT EXISTS (SELECT 1 FROM profiles q WHERE q.app_id = p.app_id AND q.svc_id = m.to_svc)`,
  );
  await connection.run('DELETE FROM profiles WHERE svc_id IN (SELECT from_svc FROM svc_merges_changes)');
}
