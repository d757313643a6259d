-- a text that matches nothing exactly, then as a prefix (1/3)
SELECT svc_id, max(time) AS last_time FROM events WHERE app_id = 7 AND svc_id IS NOT NULL AND (user_id = 'o\'hare\\%_' OR device_id = 'o\'hare\\%_') GROUP BY svc_id ORDER BY last_time DESC, svc_id LIMIT 100;

-- a text that matches nothing exactly, then as a prefix (2/3)
SELECT from_svc, assumeNotNull(mapped_to) AS to_svc FROM (SELECT from_svc, tupleElement(argMax(tuple(to_svc), version), 1) AS mapped_to FROM user_mappings WHERE app_id = 7 GROUP BY from_svc) WHERE mapped_to IS NOT NULL;

-- a text that matches nothing exactly, then as a prefix (3/3)
SELECT svc_id, max(time) AS last_time FROM events WHERE app_id = 7 AND svc_id IS NOT NULL AND user_id IS NOT NULL AND substring(user_id, 1, 9) = 'o\'hare\\%_' GROUP BY svc_id ORDER BY last_time DESC, svc_id LIMIT 100;
