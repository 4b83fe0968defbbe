-- coupon_confirm.lua: confirm a reservation whose coupon row is in the database.
--
-- The reservation moves from "pending" to "recent", where it stays for a short
-- window: a reload that read the database just before this row was committed
-- still sees the slot as taken (see coupon_load.lua).
--
-- KEYS: 1 idem (the request's idempotency key)  2 pending  3 recent
--       (pending and recent are the campaign's zsets)
-- ARGV: 1 the reservation's member "tid|user|slot|ordinal|value|request_id"
--       2 now (unix ms)  3 the recent window (ms)
--
-- Returns 1 when the reservation was pending (the idempotency key holds
-- "P|<member>", with "\n<attempt>" or not) and is now confirmed ("C|<member>", its TTL kept),
-- 0 when there was nothing pending (already confirmed, or Redis lost it: the
-- database row stands either way, reconciliation repairs counters).

local removed = redis.call('ZREM', KEYS[2], ARGV[1])
local now = tonumber(ARGV[2])
redis.call('ZADD', KEYS[3], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - tonumber(ARGV[3]))
local seen = redis.call('GET', KEYS[1])
local p = 'P|' .. ARGV[1]
if seen and (seen == p or string.sub(seen, 1, #p + 1) == p .. '\n') then
  redis.call('SET', KEYS[1], 'C|' .. ARGV[1], 'KEEPTTL')
  return 1
end
return removed
