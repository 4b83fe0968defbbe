-- coupon_confirm.lua: confirm a reservation whose coupon row is in the database.
--
-- KEYS: 1 idem (the request's idempotency key)  2 pending (the campaign's zset)
-- ARGV: 1 the reservation's pending member "tid|user|slot|ordinal|value|request_id"
--
-- Returns 1 when the reservation was pending and is now confirmed ("C|..." with
-- its TTL kept), 0 when there was nothing pending (already confirmed, or Redis
-- lost it: the database row stands either way, reconciliation repairs counters).

local removed = redis.call('ZREM', KEYS[2], ARGV[1])
local seen = redis.call('GET', KEYS[1])
if seen == 'P|' .. ARGV[1] then
  redis.call('SET', KEYS[1], 'C|' .. ARGV[1], 'KEEPTTL')
  return 1
end
return removed
