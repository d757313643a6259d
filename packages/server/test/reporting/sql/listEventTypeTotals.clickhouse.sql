-- this week (1/2)
SELECT DISTINCT event_type FROM events WHERE app_id = 7;

-- this week (2/2)
SELECT event_type, count(*) AS n FROM (SELECT own_svc_id AS svc_id, time, ingest_seq, event_type, session_id, active FROM (SELECT assumeNotNull(e.svc_id) AS own_svc_id, e.time, e.ingest_seq, e.event_type, e.session_id, e.event_type NOT IN ('$identify', '$groupidentify', '[Experiment] Assignment', '[Experiment] Exposure') AS active FROM events AS e WHERE e.app_id = 7 AND e.svc_id IS NOT NULL AND e.time >= 1793574000000 AND e.time < 1793806200001)) GROUP BY event_type;
