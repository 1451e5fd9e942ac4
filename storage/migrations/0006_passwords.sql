-- 0006: password reset tokens.
-- (Reserved so that parallel work numbers migrations without collisions; filled by that work.)
SELECT 1;
