-- a merged svc_id of a mapped user, latest first, from 100 (1/11)
SELECT to_svc FROM svc_merges WHERE from_svc = 13;

-- a merged svc_id of a mapped user, latest first, from 100 (2/11)
SELECT from_svc, assumeNotNull(mapped_to) AS to_svc FROM (SELECT from_svc, tupleElement(argMax(tuple(to_svc), version), 1) AS mapped_to FROM user_mappings WHERE app_id = 7 GROUP BY from_svc) WHERE mapped_to IS NOT NULL;

-- a merged svc_id of a mapped user, latest first, from 100 (3/11)
SELECT DISTINCT svc_id FROM events WHERE app_id = 7 AND svc_id IN (11, 13);

-- a merged svc_id of a mapped user, latest first, from 100 (4/11)
SELECT user_svc_id, min(time) AS first_time, max(time) AS last_time, count(*) AS event_count,
      ifNull(uniqExact(CASE WHEN session_id <> -1 THEN session_id END), 0) AS session_count, max(user_id) AS any_user_id,
      countIf(revenue IS NOT NULL) AS purchases, sum(revenue) AS revenue_sum, argMax(ingest_seq, toDecimal128(time, 0) * 1000000000000000000 + ingest_seq) AS latest_seq
    FROM (SELECT CASE WHEN svc_id = 13 THEN 11 ELSE svc_id END AS user_svc_id, time, ingest_seq, session_id, user_id, revenue FROM events WHERE app_id = 7 AND svc_id IN (11, 13))
    GROUP BY user_svc_id;

-- a merged svc_id of a mapped user, latest first, from 100 (5/11)
SELECT "insert_id", "adid", "app_id", "city", "time", "country", "device_brand", "carrier", "device_id", "device_manufacturer", "device_model", "dma", "event_id", "event_properties" AS "event_properties", "price", "quantity", "revenue", "productId", "revenueType", "event_type", "group_properties" AS "group_properties", "groups" AS "groups", "idfa", "ip", "language", "location_lat", "location_lng", "os_name", "os_version", "plan" AS "plan", "platform", "region", "server_upload_time", "session_id", "svc_id", "user_id", "ingest_seq", "app_version", "user_properties" AS "user_properties" FROM events WHERE app_id = 7 AND ingest_seq IN (5);

-- a merged svc_id of a mapped user, latest first, from 100 (6/11)
SELECT DISTINCT device_id FROM events WHERE app_id = 7 AND svc_id IN (11, 13) AND device_id IS NOT NULL;

-- a merged svc_id of a mapped user, latest first, from 100 (7/11)
SELECT DISTINCT from_svc FROM svc_merges WHERE to_svc IN (11, 13);

-- a merged svc_id of a mapped user, latest first, from 100 (8/11)
SELECT properties FROM (SELECT argMax(properties, version) AS properties, argMax(deleted, version) AS deleted FROM profiles WHERE app_id = 7 AND svc_id = 11 GROUP BY svc_id) WHERE deleted = 0;

-- a merged svc_id of a mapped user, latest first, from 100 (9/11)
SELECT "insert_id", "adid", "app_id", "city", "time", "country", "device_brand", "carrier", "device_id", "device_manufacturer", "device_model", "dma", "event_id", "event_properties" AS "event_properties", "price", "quantity", "revenue", "productId", "revenueType", "event_type", "group_properties" AS "group_properties", "groups" AS "groups", "idfa", "ip", "language", "location_lat", "location_lng", "os_name", "os_version", "plan" AS "plan", "platform", "region", "server_upload_time", "session_id", "svc_id", "user_id", "ingest_seq", "app_version", "user_properties" AS "user_properties" FROM events WHERE app_id = 7 AND svc_id IN (11, 13)
    ORDER BY time DESC, ingest_seq DESC LIMIT 50 OFFSET 100;

-- a merged svc_id of a mapped user, latest first, from 100 (10/11)
SELECT uid AS svc_id, first_version AS start_version, nullIf(first_paid_seq, toInt64(9223372036854775807)) AS first_paid FROM (SELECT svc_id AS uid, if(minMerge(start_seq) = toInt64(9223372036854775807), NULL, argMinMerge(start_version)) AS first_version, minMerge(first_paid) AS first_paid_seq
   FROM user_summaries WHERE app_id = 7 AND svc_id IN (11, 13) GROUP BY uid);

-- a merged svc_id of a mapped user, latest first, from 100 (11/11)
SELECT svc_id, ingest_seq, properties AS properties FROM profile_versions WHERE app_id = 7 AND svc_id IN (11, 13) AND ingest_seq <= 5
    AND (ingest_seq >= 5 OR (svc_id, ingest_seq) IN (SELECT svc_id, max(ingest_seq) FROM profile_versions WHERE app_id = 7 AND svc_id IN (11, 13) AND ingest_seq < 5 GROUP BY svc_id))
    ORDER BY ingest_seq;
