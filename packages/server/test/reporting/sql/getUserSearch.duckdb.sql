-- a text that matches nothing exactly, then as a prefix (1/3)
SELECT svc_id, max(time) AS last_time FROM events WHERE app_id = 7 AND svc_id IS NOT NULL AND (user_id = 'o''hare\%_' OR device_id = 'o''hare\%_') GROUP BY svc_id ORDER BY last_time DESC, svc_id LIMIT 100;

-- a text that matches nothing exactly, then as a prefix (2/3)
SELECT from_svc, to_svc FROM user_mappings WHERE app_id = 7 AND to_svc IS NOT NULL;

-- a text that matches nothing exactly, then as a prefix (3/3)
SELECT svc_id, max(time) AS last_time FROM events WHERE app_id = 7 AND svc_id IS NOT NULL AND user_id IS NOT NULL AND starts_with(user_id, 'o''hare\%_') GROUP BY svc_id ORDER BY last_time DESC, svc_id LIMIT 100;
