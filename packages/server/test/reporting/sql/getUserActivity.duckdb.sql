-- a merged svc_id of a mapped user, latest first, from 100 (1/11)
SELECT to_svc FROM svc_merges WHERE from_svc = 13;

-- a merged svc_id of a mapped user, latest first, from 100 (2/11)
SELECT from_svc, to_svc FROM user_mappings WHERE app_id = 7 AND to_svc IS NOT NULL;

-- a merged svc_id of a mapped user, latest first, from 100 (3/11)
SELECT DISTINCT svc_id FROM events WHERE app_id = 7 AND svc_id IN (11, 13);

-- a merged svc_id of a mapped user, latest first, from 100 (4/11)
SELECT user_svc_id, min(time) AS first_time, max(time) AS last_time, count(*) AS event_count,
      count(DISTINCT CASE WHEN session_id <> -1 THEN session_id END) AS session_count, max(user_id) AS any_user_id,
      count(*) FILTER (WHERE revenue IS NOT NULL) AS purchases, sum(revenue) AS revenue_sum, arg_max(ingest_seq, (time::HUGEINT * 9223372036854775807 + ingest_seq)) AS latest_seq
    FROM (SELECT CASE WHEN svc_id = 13 THEN 11 ELSE svc_id END AS user_svc_id, time, ingest_seq, session_id, user_id, revenue FROM events WHERE app_id = 7 AND svc_id IN (11, 13))
    GROUP BY user_svc_id;

-- a merged svc_id of a mapped user, latest first, from 100 (5/11)
SELECT "insert_id", "adid", "app_id", "city", "time", "country", "device_brand", "carrier", "device_id", "device_manufacturer", "device_model", "dma", "event_id", CAST("event_properties" AS VARCHAR) AS "event_properties", "price", "quantity", "revenue", "productId", "revenueType", "event_type", CAST("group_properties" AS VARCHAR) AS "group_properties", CAST("groups" AS VARCHAR) AS "groups", "idfa", "ip", "language", "location_lat", "location_lng", "os_name", "os_version", CAST("plan" AS VARCHAR) AS "plan", "platform", "region", "server_upload_time", "session_id", "svc_id", "user_id", "ingest_seq", "app_version", CAST("user_properties" AS VARCHAR) AS "user_properties" FROM events WHERE app_id = 7 AND ingest_seq IN (5);

-- a merged svc_id of a mapped user, latest first, from 100 (6/11)
SELECT DISTINCT device_id FROM events WHERE app_id = 7 AND svc_id IN (11, 13) AND device_id IS NOT NULL;

-- a merged svc_id of a mapped user, latest first, from 100 (7/11)
SELECT DISTINCT from_svc FROM svc_merges WHERE to_svc IN (11, 13);

-- a merged svc_id of a mapped user, latest first, from 100 (8/11)
SELECT CAST(properties AS VARCHAR) AS properties FROM profiles WHERE app_id = 7 AND svc_id = 11;

-- a merged svc_id of a mapped user, latest first, from 100 (9/11)
SELECT "insert_id", "adid", "app_id", "city", "time", "country", "device_brand", "carrier", "device_id", "device_manufacturer", "device_model", "dma", "event_id", CAST("event_properties" AS VARCHAR) AS "event_properties", "price", "quantity", "revenue", "productId", "revenueType", "event_type", CAST("group_properties" AS VARCHAR) AS "group_properties", CAST("groups" AS VARCHAR) AS "groups", "idfa", "ip", "language", "location_lat", "location_lng", "os_name", "os_version", CAST("plan" AS VARCHAR) AS "plan", "platform", "region", "server_upload_time", "session_id", "svc_id", "user_id", "ingest_seq", "app_version", CAST("user_properties" AS VARCHAR) AS "user_properties" FROM events WHERE app_id = 7 AND svc_id IN (11, 13)
    ORDER BY time DESC, ingest_seq DESC LIMIT 50 OFFSET 100;

-- a merged svc_id of a mapped user, latest first, from 100 (10/11)
SELECT svc_id, start_version, first_paid_seq AS first_paid FROM user_summaries WHERE app_id = 7 AND svc_id IN (11, 13);

-- a merged svc_id of a mapped user, latest first, from 100 (11/11)
SELECT svc_id, ingest_seq, CAST(properties AS VARCHAR) AS properties FROM profile_versions WHERE app_id = 7 AND svc_id IN (11, 13) AND ingest_seq <= 5
    AND (ingest_seq >= 5 OR (svc_id, ingest_seq) IN (SELECT svc_id, max(ingest_seq) FROM profile_versions WHERE app_id = 7 AND svc_id IN (11, 13) AND ingest_seq < 5 GROUP BY svc_id))
    ORDER BY ingest_seq;
