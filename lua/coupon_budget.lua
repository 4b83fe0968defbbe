-- coupon_budget.lua: move a campaign's budget counter by a change of its
-- budget, before the database commits it (docs/flows.md, "Change a
-- campaign's budget"). The caller holds the campaign's load lock, so no
-- reload rewrites the counter meanwhile.
--
-- KEYS: 1 budget
-- ARGV: 1 the budget before, in cents (> 0)  2 the budget after (> 0)
--
-- Returns {code, value}:
--   {0, remaining after}  moved
--   {1, taken}            refused: the new budget is below what claims have
--                         taken (coupons and reservations in flight), given
--                         as value; the counter is unchanged
--   {2, 0}                the counter is not loaded, or holds no budget
--                         (-1): the caller deletes it after the commit and the
--                         loader rebuilds it from the database

local cur = tonumber(redis.call('GET', KEYS[1]) or '')
if not cur or cur < 0 then return {2, 0} end
local before, after = tonumber(ARGV[1]), tonumber(ARGV[2])
local taken = before - cur
if after < taken then return {1, taken} end
return {0, redis.call('INCRBY', KEYS[1], after - before)}
