-- 0022: reserved for device twins, built on another branch at the same time; that branch's
-- 0022_twins.sql takes this number's place when both are merged (this file then goes).
SELECT 1;
