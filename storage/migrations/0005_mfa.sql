-- 0005: MFA secrets, recovery codes, challenges, SMS codes, sign-in throttling.
-- (Reserved so that parallel work numbers migrations without collisions; filled by that work.)
SELECT 1;
