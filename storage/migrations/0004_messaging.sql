-- 0004: templates and delivery state (the messaging part of the authentication issue).
-- (Reserved so that parallel work numbers migrations without collisions; filled by that work.)
SELECT 1;
