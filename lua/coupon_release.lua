-- coupon_release.lua: give back a reservation that will never be confirmed
-- (the coupon row could not be written, or the process died before writing it).
-- Idempotent: a second call, or a call for a confirmed reservation, does nothing.
--
-- KEYS: 1 budget  2 template hash  3 free  4 users  5 idem  6 pending
--       (as in coupon_deduct.lua, for the reservation's template)
-- ARGV: 1 the reservation's pending member "tid|user|slot|ordinal|value|request_id"
--
-- Returns 1 when budget, slot, ordinal and the idempotency key were given back,
-- 0 when the reservation was not pending.

local member = ARGV[1]
if redis.call('ZREM', KEYS[6], member) == 0 then return 0 end
-- The key goes only if it is still this reservation's ("P|<member>", with
-- "\n<attempt>" or not).
local seen, p = redis.call('GET', KEYS[5]), 'P|' .. member
if seen and (seen == p or string.sub(seen, 1, #p + 1) == p .. '\n') then redis.call('DEL', KEYS[5]) end

local user, slot, ordinal, value = string.match(member, '^%d+|([^|]*)|(%d+)|(%d+)|(%d+)|')
if not user then return 0 end
-- Counters that Redis lost are rebuilt from the database by the loader, which
-- already leaves this slot free: only give back into counters that still exist.
if redis.call('EXISTS', KEYS[2]) == 1 then
  -- The last fresh slot handed out becomes fresh again rather than free: a
  -- reservation given back at once leaves the counters exactly as they were.
  if tonumber(redis.call('HGET', KEYS[2], 'next')) == tonumber(slot) + 1 then
    redis.call('HINCRBY', KEYS[2], 'next', -1)
  else
    redis.call('LPUSH', KEYS[3], slot)
  end
  redis.call('HINCRBY', KEYS[2], 'remaining', 1)
end
local b = tonumber(redis.call('GET', KEYS[1]) or '-1')
if b >= 0 then redis.call('INCRBY', KEYS[1], value) end
-- An anonymous claim's member has user '' and ordinal 0: no users entry.
local held = nil
if ordinal ~= '0' then held = redis.call('HGET', KEYS[4], user) end
if held then
  local kept = {}
  for o in string.gmatch(held, '%d+') do
    if o ~= ordinal then kept[#kept + 1] = o end
  end
  if #kept == 0 then redis.call('HDEL', KEYS[4], user)
  else redis.call('HSET', KEYS[4], user, table.concat(kept, ',')) end
end
return 1
